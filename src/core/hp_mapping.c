/* The mapping parser: one pass over the lines, then the name indexes.
 *
 * Lines are read in place (spans into the text).  Blank lines and comments
 * are skipped; a metadata comment applies to the member line above it, or
 * to the class when its class line is the last one read (hp_mapping.h).
 * A line that is neither a class line, an indented member line nor a
 * comment is an error naming the line: a truncated or foreign file should
 * not pass as an empty mapping. */
#include "hp_mapping.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hp_idmap.h"
#include "hp_mapping_impl.h"

struct hp_mapping {
    hp_alloc alloc;
    const char *text;
    size_t len;
    hp_map_class *classes;
    hp_map_member *members;
    uint32_t n_classes, cap_classes, n_members, cap_members;
    hp_i32s positions;
    uint32_t version;
    hp_idmap by_obfuscated, by_original, by_member; /* hash of the name -> first index of its chain */
};

/* ---- names and their hashes ---- */

static uint64_t name_hash(const char *p, size_t n, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= (uint8_t)p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t member_key(uint32_t class_index, const char *p, size_t n)
{
    return name_hash(p, n, (uint64_t)(class_index + 1) * 0x9E3779B97F4A7C15ULL);
}

static int span_eq(const hp_mapping *m, hp_span span, const char *p, size_t n)
{
    return span.len == n && memcmp(m->text + span.off, p, n) == 0;
}

/* ---- errors ---- */

static hp_code fail(hp_mapping_error *err, hp_code code, uint64_t line, const char *fmt, ...) HP_PRINTF(4, 5);

static hp_code fail(hp_mapping_error *err, hp_code code, uint64_t line, const char *fmt, ...)
{
    va_list ap;
    int n = 0;
    err->code = code;
    err->line = line;
    if (line)
        n = snprintf(err->text, sizeof err->text, "line %llu: ", (unsigned long long)line);
    va_start(ap, fmt);
    vsnprintf(err->text + n, sizeof err->text - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- growing the tables ---- */

static int grow(const hp_alloc *alloc, void **data, uint32_t *cap, size_t item)
{
    uint64_t want = *cap ? (uint64_t)*cap * 2 : 256;
    void *bigger;
    if (want > UINT32_MAX - 1)
        want = UINT32_MAX - 1;
    if (want <= *cap)
        return -1;
    bigger = alloc->realloc_fn(*data, (size_t)want * item);
    if (!bigger)
        return -1;
    *data = bigger;
    *cap = (uint32_t)want;
    return 0;
}

/* ---- reading one line ---- */

typedef struct cursor {
    const char *text;
    uint32_t p, end; /* what is left of the line */
    uint64_t line;
} cursor;

static int is_blank(char c) { return c == ' ' || c == '\t'; }

static hp_span make_span(uint32_t from, uint32_t to)
{
    hp_span s = { from, to - from };
    return s;
}

/* The span with blanks trimmed on both sides. */
static hp_span trimmed(const char *text, uint32_t from, uint32_t to)
{
    while (from < to && is_blank(text[from]))
        from++;
    while (to > from && is_blank(text[to - 1]))
        to--;
    return make_span(from, to);
}

static int has_blank(const char *text, hp_span s)
{
    uint32_t i;
    for (i = 0; i < s.len; i++)
        if (is_blank(text[s.off + i]))
            return 1;
    return 0;
}

/* Where " -> " starts in text[from:to], or `to` when absent. */
static uint32_t find_arrow(const char *text, uint32_t from, uint32_t to)
{
    uint32_t i;
    for (i = from; i + 4 <= to; i++)
        if (text[i] == ' ' && text[i + 1] == '-' && text[i + 2] == '>' && text[i + 3] == ' ')
            return i;
    return to;
}

/* A decimal number at c->p (a line number): 0, or -1 when there is none or it exceeds int32. */
static int read_number(cursor *c, int32_t *out)
{
    int64_t v = 0;
    uint32_t start = c->p;
    while (c->p < c->end && c->text[c->p] >= '0' && c->text[c->p] <= '9') {
        v = v * 10 + (c->text[c->p] - '0');
        if (v > INT32_MAX)
            return -1;
        c->p++;
    }
    if (c->p == start)
        return -1;
    *out = (int32_t)v;
    return 0;
}

static int expect(cursor *c, char ch)
{
    if (c->p < c->end && c->text[c->p] == ch) {
        c->p++;
        return 0;
    }
    return -1;
}

/* `original -> obfuscated:` */
static hp_code read_class_line(hp_mapping *m, cursor *c, hp_mapping_error *err)
{
    uint32_t arrow = find_arrow(c->text, c->p, c->end);
    hp_map_class *cls;
    hp_span original, obfuscated;
    if (arrow == c->end)
        return fail(err, HP_E_CORRUPT, c->line,
                    "expected a class line 'original.Name -> obfuscated.Name:' or an indented member line");
    if (c->text[c->end - 1] != ':')
        return fail(err, HP_E_CORRUPT, c->line, "a class line ends with ':' ('original.Name -> obfuscated.Name:')");
    original = trimmed(c->text, c->p, arrow);
    obfuscated = trimmed(c->text, arrow + 4, c->end - 1);
    if (!original.len || !obfuscated.len || has_blank(c->text, original) || has_blank(c->text, obfuscated))
        return fail(err, HP_E_CORRUPT, c->line, "a class line names one class on each side of ' -> '");
    if (m->n_classes == m->cap_classes &&
        grow(&m->alloc, (void **)&m->classes, &m->cap_classes, sizeof *m->classes) < 0)
        return fail(err, HP_E_NOMEM, 0, "out of memory reading the mapping");
    cls = &m->classes[m->n_classes++];
    memset(cls, 0, sizeof *cls);
    cls->original = original;
    cls->obfuscated = obfuscated;
    cls->first_member = m->n_members;
    cls->line = (uint32_t)(c->line > UINT32_MAX ? UINT32_MAX : c->line);
    return HP_OK;
}

/* `[a:b:]type [owner.]name[(args)[:c[:d]]] -> obfuscated` */
static hp_code read_member_line(hp_mapping *m, cursor *c, hp_mapping_error *err)
{
    hp_map_member mb;
    uint32_t arrow, left_end, space, name_end, dot;
    hp_span name_part, left;
    memset(&mb, 0, sizeof mb);
    mb.min_lo = mb.min_hi = mb.orig_lo = mb.orig_hi = HP_MAP_NO_LINE;
    mb.next = HP_MAP_NONE;
    if (m->n_classes == 0)
        return fail(err, HP_E_CORRUPT, c->line, "a member line before any class line");
    if (c->text[c->p] >= '0' && c->text[c->p] <= '9') {
        if (read_number(c, &mb.min_lo) < 0 || expect(c, ':') < 0 || read_number(c, &mb.min_hi) < 0 ||
            expect(c, ':') < 0)
            return fail(err, HP_E_CORRUPT, c->line, "a line range is 'first:last:' with numbers up to 2147483647");
    }
    arrow = find_arrow(c->text, c->p, c->end);
    if (arrow == c->end)
        return fail(err, HP_E_CORRUPT, c->line, "a member line ends with ' -> obfuscatedName'");
    mb.obfuscated = trimmed(c->text, arrow + 4, c->end);
    if (!mb.obfuscated.len || has_blank(c->text, mb.obfuscated))
        return fail(err, HP_E_CORRUPT, c->line, "one obfuscated name follows ' -> '");
    left = trimmed(c->text, c->p, arrow);
    left_end = left.off + left.len;
    for (space = c->p; space < left_end && !is_blank(c->text[space]); space++)
        ;
    if (space == c->p || space == left_end)
        return fail(err, HP_E_CORRUPT, c->line, "a member line is 'type name -> obfuscatedName'");
    mb.type = make_span(c->p, space);
    c->p = space;
    while (c->p < left_end && is_blank(c->text[c->p]))
        c->p++;
    for (name_end = c->p; name_end < left_end && c->text[name_end] != '('; name_end++)
        ;
    if (name_end < left_end) { /* a method */
        uint32_t close = left_end;
        while (close > name_end && c->text[close - 1] != ')')
            close--;
        if (close == name_end)
            return fail(err, HP_E_CORRUPT, c->line, "a method's parameter list has no ')'");
        mb.kind = HP_MAP_METHOD;
        mb.args = make_span(name_end + 1, close - 1);
        c->p = close;
        c->end = left_end;
        if (c->p < c->end) {
            if (expect(c, ':') < 0 || read_number(c, &mb.orig_lo) < 0 ||
                (c->p < c->end && (expect(c, ':') < 0 || read_number(c, &mb.orig_hi) < 0)) || c->p != c->end)
                return fail(err, HP_E_CORRUPT, c->line,
                            "after a method's ')' only ':line' or ':first:last' may come");
        }
    } else {
        mb.kind = HP_MAP_FIELD;
    }
    name_part = make_span(space, name_end);
    name_part = trimmed(c->text, name_part.off, name_part.off + name_part.len);
    if (!name_part.len || has_blank(c->text, name_part))
        return fail(err, HP_E_CORRUPT, c->line, "a member line names one member before ' -> '");
    for (dot = name_part.off + name_part.len; dot > name_part.off && c->text[dot - 1] != '.'; dot--)
        ;
    if (dot > name_part.off) { /* qualified: the original holder, then the name */
        mb.owner = make_span(name_part.off, dot - 1);
        name_part = make_span(dot, name_part.off + name_part.len);
        if (!name_part.len || !mb.owner.len)
            return fail(err, HP_E_CORRUPT, c->line, "a qualified member name is 'holder.Class.name'");
    }
    mb.name = name_part;
    mb.class_index = m->n_classes - 1;
    mb.line = (uint32_t)(c->line > UINT32_MAX ? UINT32_MAX : c->line);
    if (m->n_members == m->cap_members &&
        grow(&m->alloc, (void **)&m->members, &m->cap_members, sizeof *m->members) < 0)
        return fail(err, HP_E_NOMEM, 0, "out of memory reading the mapping");
    m->members[m->n_members++] = mb;
    m->classes[m->n_classes - 1].n_members++;
    return HP_OK;
}

/* "2.2" -> 2002; 0 when it is not major[.minor]. */
static uint32_t version_number(const char *p, uint32_t n)
{
    uint32_t major = 0, minor = 0, i = 0;
    while (i < n && p[i] >= '0' && p[i] <= '9' && major < 100000)
        major = major * 10 + (uint32_t)(p[i++] - '0');
    if (i < n && p[i] == '.')
        for (i++; i < n && p[i] >= '0' && p[i] <= '9' && minor < 999; i++)
            minor = minor * 10 + (uint32_t)(p[i] - '0');
    return major * 1000 + (minor > 999 ? 999 : minor);
}

/* A comment: metadata for the member above, or for the class. */
static hp_code read_comment(hp_mapping *m, cursor *c, int after_class_line, hp_mapping_error *err)
{
    hp_meta meta;
    hp_map_member *member;
    hp_map_class *cls = m->n_classes ? &m->classes[m->n_classes - 1] : NULL;
    if (hp_meta_read(c->text, c->p, c->end - c->p, &meta, &m->positions, &m->alloc) < 0)
        return fail(err, HP_E_NOMEM, 0, "out of memory reading the mapping");
    member = cls && cls->n_members && !after_class_line ? &m->members[m->n_members - 1] : NULL;
    switch (meta.kind) {
    case HP_META_VERSION: {
        uint32_t v = version_number(c->text + meta.value.off, meta.value.len);
        if (v > m->version)
            m->version = v;
        break;
    }
    case HP_META_SOURCE_FILE:
        if (cls && !member)
            cls->source_file = meta.value;
        break;
    case HP_META_SYNTHESIZED:
        if (member)
            member->flags |= HP_MAP_SYNTHESIZED;
        else if (cls)
            cls->flags |= HP_MAP_SYNTHESIZED;
        break;
    case HP_META_RESIDUAL:
        if (member)
            member->residual = meta.value;
        break;
    case HP_META_OUTLINE:
        if (member)
            member->flags |= HP_MAP_OUTLINE;
        break;
    case HP_META_CALLSITE:
        if (member) {
            member->flags |= HP_MAP_CALLSITE;
            member->positions = (uint32_t)meta.first_position;
            member->n_positions = (uint32_t)meta.n_positions;
        }
        break;
    default:
        break;
    }
    return HP_OK;
}

static hp_code read_lines(hp_mapping *m, hp_mapping_error *err)
{
    cursor c = { m->text, 0, 0, 0 };
    uint32_t pos = 0, len = (uint32_t)m->len;
    int after_class_line = 0;
    if (len >= 3 && memcmp(m->text, "\xEF\xBB\xBF", 3) == 0) /* a UTF-8 byte order mark */
        pos = 3;
    while (pos < len) {
        const char *nl = memchr(m->text + pos, '\n', len - pos);
        uint32_t eol = nl ? (uint32_t)(nl - m->text) : len;
        hp_code rc;
        int indented;
        c.line++;
        c.p = pos;
        c.end = eol;
        pos = nl ? eol + 1 : len;
        while (c.end > c.p && (is_blank(m->text[c.end - 1]) || m->text[c.end - 1] == '\r'))
            c.end--;
        indented = c.p < c.end && is_blank(m->text[c.p]);
        while (c.p < c.end && is_blank(m->text[c.p]))
            c.p++;
        if (c.p == c.end)
            continue;
        if (m->text[c.p] == '#') {
            rc = read_comment(m, &c, after_class_line, err);
        } else if (indented) {
            rc = read_member_line(m, &c, err);
            after_class_line = 0;
        } else {
            rc = read_class_line(m, &c, err);
            after_class_line = 1;
        }
        if (rc != HP_OK)
            return rc;
    }
    return HP_OK;
}

/* ---- the indexes ---- */

/* Puts `index` at the front of the chain of `key`, whose links are next[]. */
static int chain_front(hp_idmap *map, uint64_t key, uint32_t index, uint32_t *link)
{
    int inserted;
    uint32_t *slot = hp_idmap_put(map, key, index, &inserted);
    if (!slot)
        return -1;
    *link = inserted ? HP_MAP_NONE : *slot;
    *slot = index;
    return 0;
}

/* Built back to front, so that every chain lists its entries in file order. */
static hp_code build_indexes(hp_mapping *m, hp_mapping_error *err)
{
    uint32_t i;
    for (i = m->n_classes; i-- > 0;) {
        hp_map_class *cls = &m->classes[i];
        if (chain_front(&m->by_obfuscated, name_hash(m->text + cls->obfuscated.off, cls->obfuscated.len, 0), i,
                        &cls->next_obfuscated) < 0 ||
            chain_front(&m->by_original, name_hash(m->text + cls->original.off, cls->original.len, 0), i,
                        &cls->next_original) < 0)
            return fail(err, HP_E_NOMEM, 0, "out of memory indexing the mapping");
    }
    for (i = m->n_members; i-- > 0;) {
        hp_map_member *mb = &m->members[i];
        if (chain_front(&m->by_member, member_key(mb->class_index, m->text + mb->obfuscated.off, mb->obfuscated.len),
                        i, &mb->next) < 0)
            return fail(err, HP_E_NOMEM, 0, "out of memory indexing the mapping");
    }
    return HP_OK;
}

hp_code hp_mapping_parse(const hp_alloc *alloc, const char *text, size_t len, hp_mapping **out,
                         hp_mapping_error *err)
{
    hp_mapping *m;
    hp_code rc;
    memset(err, 0, sizeof *err);
    *out = NULL;
    if (!alloc)
        alloc = &hp_default_alloc;
    if (len >= UINT32_MAX)
        return fail(err, HP_E_LIMIT, 0, "the mapping is 4 GiB or more: larger than hprofkit reads");
    m = alloc->malloc_fn(sizeof *m);
    if (!m)
        return fail(err, HP_E_NOMEM, 0, "out of memory reading the mapping");
    memset(m, 0, sizeof *m);
    m->alloc = *alloc;
    m->text = text;
    m->len = len;
    hp_idmap_init(&m->by_obfuscated, alloc);
    hp_idmap_init(&m->by_original, alloc);
    hp_idmap_init(&m->by_member, alloc);
    rc = read_lines(m, err);
    if (rc == HP_OK)
        rc = build_indexes(m, err);
    if (rc != HP_OK) {
        hp_mapping_free(m);
        return rc;
    }
    *out = m;
    return HP_OK;
}

void hp_mapping_free(hp_mapping *m)
{
    if (!m)
        return;
    hp_idmap_clear(&m->by_obfuscated);
    hp_idmap_clear(&m->by_original);
    hp_idmap_clear(&m->by_member);
    m->alloc.free_fn(m->classes);
    m->alloc.free_fn(m->members);
    m->alloc.free_fn(m->positions.data);
    m->alloc.free_fn(m);
}

const char *hp_mapping_text(const hp_mapping *m) { return m->text; }
uint32_t hp_mapping_class_count(const hp_mapping *m) { return m->n_classes; }
uint32_t hp_mapping_member_count(const hp_mapping *m) { return m->n_members; }
uint32_t hp_mapping_version(const hp_mapping *m) { return m->version; }

const hp_map_class *hp_mapping_class(const hp_mapping *m, uint32_t index)
{
    return index < m->n_classes ? &m->classes[index] : NULL;
}

const hp_map_member *hp_mapping_member(const hp_mapping *m, uint32_t index)
{
    return index < m->n_members ? &m->members[index] : NULL;
}

const int32_t *hp_mapping_positions(const hp_mapping *m, const hp_map_member *member)
{
    return member->n_positions ? m->positions.data + member->positions : NULL;
}

static uint32_t find_in(const hp_mapping *m, const hp_idmap *map, int original, const char *name, size_t len)
{
    uint32_t *slot = hp_idmap_get(map, name_hash(name, len, 0)), i;
    for (i = slot ? *slot : HP_MAP_NONE; i != HP_MAP_NONE;) {
        const hp_map_class *cls = &m->classes[i];
        if (span_eq(m, original ? cls->original : cls->obfuscated, name, len))
            return i;
        i = original ? cls->next_original : cls->next_obfuscated;
    }
    return HP_MAP_NONE;
}

uint32_t hp_mapping_find_class(const hp_mapping *m, const char *name, size_t len)
{
    return find_in(m, &m->by_obfuscated, 0, name, len);
}

uint32_t hp_mapping_find_original(const hp_mapping *m, const char *name, size_t len)
{
    return find_in(m, &m->by_original, 1, name, len);
}

/* From member `i` on (i itself included), the first of class_index named name[0:len]. */
static uint32_t member_from(const hp_mapping *m, uint32_t i, uint32_t class_index, const char *name, size_t len)
{
    for (; i != HP_MAP_NONE; i = m->members[i].next)
        if (m->members[i].class_index == class_index && span_eq(m, m->members[i].obfuscated, name, len))
            return i;
    return HP_MAP_NONE;
}

uint32_t hp_mapping_find_member(const hp_mapping *m, uint32_t class_index, const char *name, size_t len)
{
    uint32_t *slot;
    if (class_index >= m->n_classes)
        return HP_MAP_NONE;
    slot = hp_idmap_get(&m->by_member, member_key(class_index, name, len));
    return slot ? member_from(m, *slot, class_index, name, len) : HP_MAP_NONE;
}

uint32_t hp_mapping_next_member(const hp_mapping *m, uint32_t member_index)
{
    const hp_map_member *mb;
    if (member_index >= m->n_members)
        return HP_MAP_NONE;
    mb = &m->members[member_index];
    return member_from(m, mb->next, mb->class_index, m->text + mb->obfuscated.off, mb->obfuscated.len);
}
