/* R8's metadata comments: `# {"id":"...", ...}`.
 *
 * R8 writes strict JSON; the R8 spec's own examples (and tools that copy
 * them) use single quotes and bare keys, so both are read.  Only the
 * top-level keys that matter for names are kept: id, fileName, signature,
 * version and positions.  Escapes in strings are not decoded (the value is
 * the raw text between the quotes): none of these values needs one. */
#include "hp_mapping_impl.h"

#include <string.h>

int hp_i32s_push(hp_i32s *a, const hp_alloc *alloc, int32_t value)
{
    if (a->len == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        int32_t *data = alloc->realloc_fn(a->data, cap * sizeof *data);
        if (!data)
            return -1;
        a->data = data;
        a->cap = cap;
    }
    a->data[a->len++] = value;
    return 0;
}

typedef struct scanner {
    const char *p, *end;
    const char *base; /* the text, for spans */
} scanner;

static void skip_blanks(scanner *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r'))
        s->p++;
}

static int is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           c == '.' || c == '-' || c == '+';
}

/* A string or a bare word: its span (quotes excluded); 0, or -1 when there is none. */
static int read_atom(scanner *s, hp_span *out)
{
    const char *start;
    skip_blanks(s);
    if (s->p >= s->end)
        return -1;
    if (*s->p == '"' || *s->p == '\'') {
        char quote = *s->p++;
        start = s->p;
        while (s->p < s->end && *s->p != quote) {
            if (*s->p == '\\' && s->p + 1 < s->end)
                s->p++;
            s->p++;
        }
        if (s->p >= s->end)
            return -1;
        out->off = (uint32_t)(start - s->base);
        out->len = (uint32_t)(s->p - start);
        s->p++;
        return 0;
    }
    start = s->p;
    while (s->p < s->end && is_word_char(*s->p))
        s->p++;
    if (s->p == start)
        return -1;
    out->off = (uint32_t)(start - s->base);
    out->len = (uint32_t)(s->p - start);
    return 0;
}

static int accept(scanner *s, char c)
{
    skip_blanks(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return 1;
    }
    return 0;
}

/* Skips one value of any kind (nested objects and arrays, bounded by the line). */
static int skip_value(scanner *s, int depth)
{
    hp_span ignored;
    skip_blanks(s);
    if (depth > 32 || s->p >= s->end)
        return -1;
    if (*s->p == '{' || *s->p == '[') {
        char close = *s->p == '{' ? '}' : ']';
        s->p++;
        if (accept(s, close))
            return 0;
        for (;;) {
            if (close == '}') {
                if (read_atom(s, &ignored) < 0 || !accept(s, ':'))
                    return -1;
            }
            if (skip_value(s, depth + 1) < 0)
                return -1;
            if (accept(s, close))
                return 0;
            if (!accept(s, ','))
                return -1;
        }
    }
    return read_atom(s, &ignored);
}

static int span_is(const char *base, hp_span span, const char *word)
{
    size_t n = strlen(word);
    return span.len == n && memcmp(base + span.off, word, n) == 0;
}

/* A decimal int32 spelled by span (what JSON keys and values of positions are); -1 when it is not one. */
static int span_int(const char *base, hp_span span, int32_t *out)
{
    int64_t v = 0;
    uint32_t i;
    if (span.len == 0 || span.len > 10)
        return -1;
    for (i = 0; i < span.len; i++) {
        char c = base[span.off + i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    if (v > INT32_MAX)
        return -1;
    *out = (int32_t)v;
    return 0;
}

/* positions: {"1":4,"2":5}: appends the pairs; 0, -1 malformed, -2 out of memory. */
static int read_positions(scanner *s, hp_i32s *positions, const hp_alloc *alloc)
{
    if (!accept(s, '{'))
        return -1;
    if (accept(s, '}'))
        return 0;
    for (;;) {
        hp_span key, value;
        int32_t from, to;
        if (read_atom(s, &key) < 0 || !accept(s, ':') || read_atom(s, &value) < 0 ||
            span_int(s->base, key, &from) < 0 || span_int(s->base, value, &to) < 0)
            return -1;
        if (hp_i32s_push(positions, alloc, from) < 0 || hp_i32s_push(positions, alloc, to) < 0)
            return -2;
        if (accept(s, '}'))
            return 0;
        if (!accept(s, ','))
            return -1;
    }
}

int hp_meta_read(const char *text, uint32_t off, uint32_t len, hp_meta *out, hp_i32s *positions,
                 const hp_alloc *alloc)
{
    scanner s = { text + off, text + off + len, text };
    hp_span id = { 0, 0 }, file_name = { 0, 0 }, signature = { 0, 0 }, version = { 0, 0 };
    size_t start = positions->len;
    int has_positions = 0;
    memset(out, 0, sizeof *out);
    if (s.p < s.end && *s.p == '#')
        s.p++;
    if (!accept(&s, '{'))
        return 0;
    if (!accept(&s, '}')) {
        for (;;) {
            hp_span key;
            if (read_atom(&s, &key) < 0 || !accept(&s, ':'))
                goto plain;
            if (span_is(text, key, "positions")) {
                int rc = read_positions(&s, positions, alloc);
                if (rc == -2)
                    return -1;
                if (rc < 0)
                    goto plain;
                has_positions = 1;
            } else if (span_is(text, key, "id") || span_is(text, key, "fileName") ||
                       span_is(text, key, "signature") || span_is(text, key, "version")) {
                hp_span value;
                if (read_atom(&s, &value) < 0)
                    goto plain;
                *(span_is(text, key, "id") ? &id : span_is(text, key, "fileName") ? &file_name
                  : span_is(text, key, "signature") ? &signature : &version) = value;
            } else if (skip_value(&s, 0) < 0) {
                goto plain;
            }
            if (accept(&s, '}'))
                break;
            if (!accept(&s, ','))
                goto plain;
        }
    }
    if (span_is(text, id, "com.android.tools.r8.mapping")) {
        out->kind = HP_META_VERSION;
        out->value = version;
    } else if (span_is(text, id, "sourceFile")) {
        out->kind = HP_META_SOURCE_FILE;
        out->value = file_name;
    } else if (span_is(text, id, "com.android.tools.r8.synthesized")) {
        out->kind = HP_META_SYNTHESIZED;
    } else if (span_is(text, id, "com.android.tools.r8.residualsignature")) {
        out->kind = HP_META_RESIDUAL;
        out->value = signature;
    } else if (span_is(text, id, "com.android.tools.r8.outline")) {
        out->kind = HP_META_OUTLINE;
    } else if (span_is(text, id, "com.android.tools.r8.outlineCallsite") && has_positions) {
        out->kind = HP_META_CALLSITE;
        out->first_position = start;
        out->n_positions = (positions->len - start) / 2;
        return 0;
    }
plain:
    positions->len = start; /* only a call site keeps its pairs */
    return 0;
}
