/* Names of a dump through a mapping: a class name in the dump's own
 * spelling, a field of a class (hp_mapping.h).  The one implementation of
 * these rules: hprofkit.Mapping, deobfuscate and the heap all ask here. */
#include <string.h>

#include "hp_mapping.h"

/* The class whose obfuscated name is name[0:len], spelled with dots or
 * slashes (`slashed`): found with dots. */
static uint32_t find_spelled(const hp_mapping *m, const char *name, size_t len, int slashed, char *scratch)
{
    size_t i;
    if (!slashed)
        return hp_mapping_find_class(m, name, len);
    for (i = 0; i < len; i++)
        scratch[i] = name[i] == '/' ? '.' : name[i];
    return hp_mapping_find_class(m, scratch, len);
}

static int has_slash(const char *p, size_t n)
{
    return memchr(p, '/', n) != NULL;
}

/* Appends p[0:n] to out at *at (within cap), slashes for dots when asked. */
static void put(char *out, size_t cap, size_t *at, const char *p, size_t n, int slashed)
{
    size_t i;
    for (i = 0; i < n; i++, (*at)++)
        if (*at < cap)
            out[*at] = slashed && p[i] == '.' ? '/' : p[i];
}

/* The element's clear spelling (see hp_mapping_clear_class); 0 when the
 * mapping does not name it. */
static size_t clear_element(const hp_mapping *m, const char *name, size_t len, char *out, size_t cap, size_t at,
                            char *scratch)
{
    const char *text = hp_mapping_text(m);
    size_t start = at, cut = 0, k;
    int slashed = has_slash(name, len);
    uint32_t c = find_spelled(m, name, len, slashed, scratch);
    if (c == HP_MAP_NONE) { /* a HotSpot hidden lambda class: its host's name, its suffix kept */
        for (k = 1; k + 8 <= len && !cut; k++)
            if (memcmp(name + k, "$$Lambda", 8) == 0)
                cut = k;
        if (!cut)
            return 0;
        slashed = has_slash(name, cut);
        c = find_spelled(m, name, cut, slashed, scratch);
        if (c == HP_MAP_NONE)
            return 0;
    }
    put(out, cap, &at, text + hp_mapping_class(m, c)->original.off, hp_mapping_class(m, c)->original.len, slashed);
    if (cut)
        put(out, cap, &at, name + cut, len - cut, 0);
    return at - start;
}

size_t hp_mapping_clear_class(const hp_mapping *m, const char *name, size_t len, char *out, size_t cap,
                              char *scratch)
{
    size_t depth = 0, at = 0, n;
    if (len && name[0] == '[') { /* HotSpot: [[La/b; */
        while (depth < len && name[depth] == '[')
            depth++;
        if (len - depth < 3 || name[depth] != 'L' || name[len - 1] != ';')
            return 0;
        put(out, cap, &at, name, depth + 1, 0);
        n = clear_element(m, name + depth + 1, len - depth - 2, out, cap, at, scratch);
        if (!n)
            return 0;
        at += n;
        put(out, cap, &at, ";", 1, 0);
        return at;
    }
    while (len >= 2 * (depth + 1) && memcmp(name + len - 2 * (depth + 1), "[]", 2) == 0) /* ART: a.b[][] */
        depth++;
    n = clear_element(m, name, len - 2 * depth, out, cap, 0, scratch);
    if (!n)
        return 0;
    at = n;
    while (depth--)
        put(out, cap, &at, "[]", 2, 0);
    return at;
}

/* The HPROF basic type a field of Java type `type` is dumped as. */
static int hprof_type_of(const hp_mapping *m, hp_span type)
{
    static const struct { const char *name; int code; } prims[] = {
        { "boolean", HP_T_BOOLEAN }, { "char", HP_T_CHAR }, { "float", HP_T_FLOAT }, { "double", HP_T_DOUBLE },
        { "byte", HP_T_BYTE },       { "short", HP_T_SHORT }, { "int", HP_T_INT },    { "long", HP_T_LONG },
    };
    size_t i;
    for (i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (type.len == strlen(prims[i].name) && memcmp(hp_mapping_text(m) + type.off, prims[i].name, type.len) == 0)
            return prims[i].code;
    return HP_T_OBJECT;
}

static int same_name(const hp_mapping *m, const hp_map_member *a, const hp_map_member *b)
{
    return a->name.len == b->name.len && memcmp(hp_mapping_text(m) + a->name.off, hp_mapping_text(m) + b->name.off,
                                                 a->name.len) == 0;
}

uint32_t hp_mapping_clear_field(const hp_mapping *m, uint32_t class_index, const char *name, size_t len, int type)
{
    uint32_t i, found = HP_MAP_NONE, typed = HP_MAP_NONE;
    int fields = 0, clash = 0, typed_count = 0, typed_clash = 0;
    for (i = hp_mapping_find_member(m, class_index, name, len); i != HP_MAP_NONE; i = hp_mapping_next_member(m, i)) {
        const hp_map_member *mb = hp_mapping_member(m, i);
        if (mb->kind != HP_MAP_FIELD)
            continue;
        if (fields++ == 0)
            found = i;
        else if (!same_name(m, hp_mapping_member(m, found), mb))
            clash = 1;
        if (type && hprof_type_of(m, mb->type) == type) {
            if (typed_count++ == 0)
                typed = i;
            else if (!same_name(m, hp_mapping_member(m, typed), mb))
                typed_clash = 1;
        }
    }
    if (!clash)
        return found;                        /* none, or one clear name */
    if (typed_count && !typed_clash)
        return typed;                        /* the type tells them apart */
    return HP_MAP_NONE;                      /* they cannot be told apart: no name rather than a wrong one */
}

int hp_mapping_lists_field(const hp_mapping *m, uint32_t class_index, const char *name, size_t len)
{
    uint32_t i;
    for (i = hp_mapping_find_member(m, class_index, name, len); i != HP_MAP_NONE; i = hp_mapping_next_member(m, i))
        if (hp_mapping_member(m, i)->kind == HP_MAP_FIELD)
            return 1;
    return 0;
}
