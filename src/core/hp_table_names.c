/* The dictionaries the tables share: class names, field names, class kinds
 * (hp_heap_tables.h). */
#include <string.h>

#include "hp_heap_tables.h"
#include "hp_utf8.h"

const char *const hp_class_kind_names[HP_CK_COUNT] = {
    "KIND_NORMAL", "KIND_NOREFERENCES", "KIND_STRING", "KIND_ARRAY", "KIND_CLASS", "KIND_CLASSLOADER",
    "KIND_DEXCACHE", "KIND_SOFT_REFERENCE", "KIND_WEAK_REFERENCE", "KIND_FINALIZER_REFERENCE",
    "KIND_PHANTOM_REFERENCE",
};

/* Work buffer k of `t`, grown to `size` bytes; NULL when memory runs out. */
static uint8_t *room(hp_table_names *t, int k, size_t size)
{
    /* An empty name (a STRING of 0 bytes) still needs a buffer: NULL means out of memory. */
    if (size > t->work_cap[k] || !t->work[k]) {
        uint8_t *p = t->alloc->realloc_fn(t->work[k], size ? size : 1);
        if (!p)
            return NULL;
        t->work[k] = p;
        t->work_cap[k] = size;
    }
    return t->work[k];
}

static void *new_array(const hp_alloc *alloc, uint64_t n, size_t size)
{
    return n > SIZE_MAX / size ? NULL : alloc->malloc_fn((size_t)(n ? n : 1) * size);
}

/* The code of `text`, or -1 with *rc set when the dictionary is full. */
static int32_t add(hp_strdict *d, const uint8_t *text, size_t len, hp_code *rc)
{
    int32_t code = hp_strdict_add(d, text, len);
    if (code < 0 && *rc == HP_OK)
        *rc = HP_E_LIMIT;
    return code;
}

/* A class's Java name (`name` of `len` bytes, NULL for none: then the
 * placeholder of class `id`) as UTF-8 into t->work[0], as the API's cls.name. */
static size_t java_name(hp_table_names *t, const uint8_t *name, size_t len, uint64_t id, hp_code *rc)
{
    size_t n;
    if (!name) { /* the placeholder every reader shows (hp_unnamed) */
        if (!room(t, 0, HP_UNNAMED_MAX))
            return *rc = HP_E_NOMEM, 0;
        return hp_unnamed((char *)t->work[0], HP_UNNAMED_CLASS, id);
    }
    if (!room(t, 1, HP_JAVA_NAME_MAX(len)))
        return *rc = HP_E_NOMEM, 0;
    n = hp_java_name(name, len, t->work[1]);
    if (!room(t, 0, HP_UTF8_REPAIR_MAX(n)))
        return *rc = HP_E_NOMEM, 0;
    return hp_name_utf8(t->work[1], n, t->work[0]);
}

/* Class `ord`'s code in t->classes into t->class_codes, and the code of the
 * name the dump gives it (another only when a mapping renamed it) into
 * t->dump_codes. */
static void add_class_names(hp_table_names *t, const hp_heap *h, uint32_t ord, hp_code *rc)
{
    hp_class_info ci;
    const uint8_t *dump_name;
    size_t n, dump_len;
    hp_heap_class(h, ord, &ci);
    n = java_name(t, ci.name, ci.name_len, ci.id, rc);
    if (*rc != HP_OK)
        return;
    t->class_codes[ord] = t->dump_codes[ord] = add(&t->classes, t->work[0], n, rc);
    if (ci.name && hp_heap_class_dump_name(h, ord, &dump_name, &dump_len) &&
        (dump_len != ci.name_len || memcmp(dump_name, ci.name, dump_len) != 0)) {
        n = java_name(t, dump_name, dump_len, ci.id, rc);
        if (*rc == HP_OK)
            t->dump_codes[ord] = add(&t->classes, t->work[0], n, rc);
    }
}

/* Adds field f's name and "Declaring.name" (declaring: a code in
 * t->classes); a name the dump lacks is its placeholder (hp_unnamed), as
 * the API names it. */
static void add_field(hp_table_names *t, const hp_heap *h, const hp_field *f, int32_t declaring, int32_t *name,
                      int32_t *qualified, hp_code *rc)
{
    const uint8_t *text, *cls;
    char placeholder[HP_UNNAMED_MAX];
    uint8_t *s;
    size_t len, n, cls_len;
    *name = *qualified = -1;
    hp_heap_field_name(h, f, placeholder, &text, &len);
    cls = t->classes.data + t->classes.offsets[declaring];
    cls_len = (size_t)(t->classes.offsets[declaring + 1] - t->classes.offsets[declaring]);
    if (!(s = room(t, 0, cls_len + 1 + HP_UTF8_REPAIR_MAX(len)))) {
        *rc = HP_E_NOMEM;
        return;
    }
    memcpy(s, cls, cls_len);
    s[cls_len] = '.';
    n = hp_name_utf8(text, len, s + cls_len + 1);
    *name = add(&t->names, s + cls_len + 1, n, rc);
    *qualified = add(&t->names, s, cls_len + 1 + n, rc);
}

/* The names of every class's fields: counted into the bases when the code
 * arrays are NULL, else listed by the same walk, which must find what the
 * count found (else HP_E_CORRUPT: the class dumps changed in between). */
static void walk_fields(hp_table_names *t, const hp_heap *h, hp_code *rc)
{
    uint32_t nc = hp_heap_class_count(h), c, nr = 0, ns = 0, np = 0;
    int listing = t->ref_codes != NULL;
    for (c = 0; c < nc && *rc == HP_OK; c++) {
        hp_field_iter fi;
        hp_static_iter si;
        hp_field f;
        hp_field_iter_init(&fi, h, c);
        while (hp_field_next(&fi, &f) && *rc == HP_OK) {
            int obj = f.type == HP_T_OBJECT;
            if (listing && (obj ? nr >= t->ref_base[c + 1] : np >= t->prim_base[c + 1]))
                *rc = HP_E_CORRUPT;
            else if (listing && obj)
                add_field(t, h, &f, t->class_codes[f.declaring], &t->ref_codes[nr], &t->ref_qualified[nr],
                          rc);
            else if (listing)
                add_field(t, h, &f, t->class_codes[f.declaring], &t->prim_codes[np],
                          &t->prim_qualified[np], rc);
            nr += obj;
            np += !obj;
        }
        hp_static_iter_init(&si, h, c);
        while (hp_static_next(&si, &f) && *rc == HP_OK) {
            if (listing && ns >= t->static_base[c + 1])
                *rc = HP_E_CORRUPT;
            else if (listing)
                add_field(t, h, &f, t->class_codes[c], &t->static_codes[ns], &t->static_qualified[ns], rc);
            ns++;
        }
        if (!listing) {
            t->ref_base[c + 1] = nr;
            t->static_base[c + 1] = ns;
            t->prim_base[c + 1] = np;
        } else if (*rc == HP_OK && (t->ref_base[c + 1] != nr || t->static_base[c + 1] != ns ||
                                    t->prim_base[c + 1] != np)) {
            *rc = HP_E_CORRUPT;
        }
    }
}

static int named(const hp_heap *h, uint32_t ord, const char *want)
{
    hp_class_info ci;
    hp_heap_class(h, ord, &ci);
    return ci.name && hp_java_name_equals(ci.name, ci.name_len, want, strlen(want));
}

/* The kind an ancestor's name gives (a reference kind or a class loader),
 * or HP_CK_NORMAL. */
static int8_t inherited_kind(const hp_heap *h, uint32_t ord)
{
    static const struct {
        const char *name;
        int8_t kind;
    } bases[] = {
        { "java.lang.ref.SoftReference", HP_CK_SOFT_REFERENCE },
        { "java.lang.ref.WeakReference", HP_CK_WEAK_REFERENCE },
        { "java.lang.ref.FinalizerReference", HP_CK_FINALIZER_REFERENCE }, /* ART */
        { "java.lang.ref.FinalReference", HP_CK_FINALIZER_REFERENCE },     /* HotSpot */
        { "java.lang.ref.PhantomReference", HP_CK_PHANTOM_REFERENCE },
        { "java.lang.ClassLoader", HP_CK_CLASSLOADER },
    };
    size_t k;
    for (k = 0; k < sizeof bases / sizeof bases[0]; k++)
        if (named(h, ord, bases[k].name))
            return bases[k].kind;
    return HP_CK_NORMAL;
}

static int has_reference_fields(const hp_heap *h, uint32_t ord)
{
    hp_field_iter fi;
    hp_field f;
    hp_field_iter_init(&fi, h, ord);
    while (hp_field_next(&fi, &f))
        if (f.type == HP_T_OBJECT)
            return 1;
    return 0;
}

/* Kinds of every class; `chain` holds one entry per class.  The inherited
 * kind walks each superclass chain once (memoised in t->class_kinds: -1
 * unknown), so a deep hierarchy stays linear. */
static void class_kinds(hp_table_names *t, const hp_heap *h, uint32_t *chain)
{
    uint32_t nc = hp_heap_class_count(h), c;
    int8_t *inherited = t->class_kinds;
    memset(inherited, -1, nc);
    for (c = 0; c < nc; c++) {
        uint32_t top = 0, at = c;
        int8_t kind = HP_CK_NORMAL;
        while (at != HP_NONE && inherited[at] < 0 && top < nc) {
            hp_class_info ci;
            kind = inherited_kind(h, at);
            if (kind != HP_CK_NORMAL)
                break;
            chain[top++] = at;
            hp_heap_class(h, at, &ci);
            at = ci.super_ord;
        }
        if (at != HP_NONE && inherited[at] >= 0)
            kind = inherited[at];
        else if (at != HP_NONE)
            inherited[at] = kind;
        while (top > 0)
            inherited[chain[--top]] = kind;
    }
    for (c = 0; c < nc; c++) {
        hp_class_info ci;
        int8_t kind = inherited[c];
        hp_heap_class(h, c, &ci);
        if (ci.elem_type)
            kind = ci.elem_type == HP_T_OBJECT ? HP_CK_ARRAY : HP_CK_NOREFERENCES;
        else if (named(h, c, "java.lang.String"))
            kind = HP_CK_STRING;
        else if (named(h, c, "java.lang.Class"))
            kind = HP_CK_CLASS;
        else if (named(h, c, "java.lang.DexCache"))
            kind = HP_CK_DEXCACHE;
        else if (kind == HP_CK_NORMAL && !has_reference_fields(h, c))
            kind = HP_CK_NOREFERENCES;
        t->class_kinds[c] = kind;
    }
}

/* "[i]" into out (16 bytes); its length. */
static size_t element_name(uint32_t i, char *out)
{
    char tmp[10];
    size_t n = 0, k = 0;
    do {
        tmp[n++] = (char)('0' + i % 10);
        i /= 10;
    } while (i);
    out[k++] = '[';
    while (n)
        out[k++] = tmp[--n];
    out[k++] = ']';
    return k;
}

/* Whether a field's name starts with '[' (no Java name does; a dump may
 * lie): then the element names must be looked up, not just appended, to
 * keep the dictionary's texts distinct. */
static int has_bracketed_name(const hp_strdict *d)
{
    uint32_t k;
    for (k = 0; k < d->count; k++)
        if (d->offsets[k + 1] > d->offsets[k] && d->data[d->offsets[k]] == '[')
            return 1;
    return 0;
}

hp_code hp_table_names_build(hp_table_names *t, const hp_heap *h, uint32_t elements, const hp_alloc *alloc)
{
    uint32_t nc = hp_heap_class_count(h), c, i;
    hp_code rc = HP_OK;
    memset(t, 0, sizeof *t);
    t->alloc = alloc = alloc ? alloc : &hp_default_alloc;
    if (hp_strdict_init(&t->classes, alloc) != HP_OK || hp_strdict_init(&t->names, alloc) != HP_OK)
        return HP_E_NOMEM;
    t->class_codes = new_array(alloc, nc, 4);
    t->dump_codes = new_array(alloc, nc, 4);
    t->class_kinds = new_array(alloc, nc, 1);
    t->ref_base = new_array(alloc, (uint64_t)nc + 1, 4);
    t->static_base = new_array(alloc, (uint64_t)nc + 1, 4);
    t->prim_base = new_array(alloc, (uint64_t)nc + 1, 4);
    t->element_codes = new_array(alloc, elements, 4);
    if (!t->class_codes || !t->dump_codes || !t->class_kinds || !t->ref_base || !t->static_base || !t->prim_base ||
        !t->element_codes)
        return HP_E_NOMEM;
    class_kinds(t, h, t->prim_base); /* its chains in prim_base, which walk_fields fills later */
    for (c = 0; c < nc && rc == HP_OK; c++)
        add_class_names(t, h, c, &rc);
    t->ref_base[0] = t->static_base[0] = t->prim_base[0] = 0;
    walk_fields(t, h, &rc); /* the counts */
    if (rc == HP_OK) {
        t->ref_codes = new_array(alloc, t->ref_base[nc], 4);
        t->ref_qualified = new_array(alloc, t->ref_base[nc], 4);
        t->static_codes = new_array(alloc, t->static_base[nc], 4);
        t->static_qualified = new_array(alloc, t->static_base[nc], 4);
        t->prim_codes = new_array(alloc, t->prim_base[nc], 4);
        t->prim_qualified = new_array(alloc, t->prim_base[nc], 4);
        if (!t->ref_codes || !t->ref_qualified || !t->static_codes || !t->static_qualified || !t->prim_codes ||
            !t->prim_qualified)
            rc = HP_E_NOMEM;
    }
    if (rc == HP_OK)
        walk_fields(t, h, &rc); /* the names, by the same walk */
    if (rc == HP_OK)
        t->loader_code = add(&t->names, (const uint8_t *)"<loader>", 8, &rc);
    /* Appended, not looked up (millions, for a long array), unless a field
     * is named like them. */
    if (rc == HP_OK && !has_bracketed_name(&t->names)) {
        int32_t first = hp_strdict_append_indices(&t->names, elements);
        if (first < 0)
            rc = HP_E_LIMIT;
        for (i = 0; i < elements && rc == HP_OK; i++)
            t->element_codes[i] = first + (int32_t)i;
    } else {
        for (i = 0; i < elements && rc == HP_OK; i++) {
            char name[16];
            t->element_codes[i] = add(&t->names, (const uint8_t *)name, element_name(i, name), &rc);
        }
    }
    t->element_count = elements;
    return rc;
}

void hp_table_names_free(hp_table_names *t)
{
    const hp_alloc *alloc = t->alloc;
    if (!alloc)
        return;
    hp_strdict_free(&t->classes);
    hp_strdict_free(&t->names);
    alloc->free_fn(t->class_codes);
    alloc->free_fn(t->dump_codes);
    alloc->free_fn(t->class_kinds);
    alloc->free_fn(t->ref_base);
    alloc->free_fn(t->static_base);
    alloc->free_fn(t->prim_base);
    alloc->free_fn(t->ref_codes);
    alloc->free_fn(t->ref_qualified);
    alloc->free_fn(t->static_codes);
    alloc->free_fn(t->static_qualified);
    alloc->free_fn(t->prim_codes);
    alloc->free_fn(t->prim_qualified);
    alloc->free_fn(t->element_codes);
    alloc->free_fn(t->work[0]);
    alloc->free_fn(t->work[1]);
    memset(t, 0, sizeof *t);
}
