/* ProGuard and R8 mapping files (mapping.txt), parsed once and indexed by
 * obfuscated name.
 *
 *     hp_mapping *m;
 *     if (hp_mapping_parse(NULL, text, len, &m, &err) != HP_OK) ... err.line, err.text
 *     uint32_t c = hp_mapping_find_class(m, "a.b", 3);
 *     for (uint32_t i = hp_mapping_find_member(m, c, "a", 1); i != HP_MAP_NONE; i = hp_mapping_next_member(m, i))
 *         ... hp_mapping_member(m, i)
 *     hp_mapping_free(m);
 *
 * The format, as ProGuard's -printmapping and R8 write it:
 *
 *     original.Class -> obfuscated.Class:
 *         fieldType fieldName -> obfuscatedName
 *         [a:b:]returnType [original.Holder.]methodName(argTypes)[:c[:d]] -> obfuscatedName
 *         # {"id":"...", ...}           R8's metadata for the line above
 *
 * a:b is the range of lines in the obfuscated method, c:d the original lines
 * they come from (c alone: all of them come from line c).  R8 writes inlined
 * frames as lines with the same obfuscated name and range, innermost first,
 * with the holder of an inlinee named before its name.  Metadata comments
 * (JSON, or the single-quoted, bare-keyed form the R8 spec's examples use)
 * that matter for names: com.android.tools.r8.mapping (the version),
 * sourceFile, com.android.tools.r8.synthesized,
 * com.android.tools.r8.residualsignature, com.android.tools.r8.outline and
 * com.android.tools.r8.outlineCallsite; any other comment is ignored.
 *
 * Nothing is copied: spans point into the text, which the caller keeps
 * alive and unchanged while the mapping is used.  Memory is about 80 bytes
 * per member line plus 40 per class.  The text may not exceed 4 GiB
 * (HP_E_LIMIT). */
#ifndef HP_MAPPING_H
#define HP_MAPPING_H

#include "hp_common.h"

#define HP_MAP_NONE UINT32_MAX
#define HP_MAP_NO_LINE (-1) /* a line number that is absent */

/* A piece of the text: text[off : off + len]. */
typedef struct hp_span {
    uint32_t off, len;
} hp_span;

enum { HP_MAP_FIELD = 1, HP_MAP_METHOD = 2 };

/* Flags of classes and members, from their metadata. */
enum { HP_MAP_SYNTHESIZED = 1, HP_MAP_OUTLINE = 2, HP_MAP_CALLSITE = 4 };

typedef struct hp_map_class {
    hp_span original, obfuscated;
    hp_span source_file;           /* sourceFile's fileName, else empty */
    uint32_t first_member, n_members;
    uint32_t line;                 /* its line number (from 1) */
    uint32_t next_obfuscated;      /* index chains of the name indexes */
    uint32_t next_original;
    uint8_t flags;
} hp_map_class;

typedef struct hp_map_member {
    hp_span type;       /* a field's type, or a method's return type */
    hp_span owner;      /* the original holder when the name is qualified (inlined or moved), else empty */
    hp_span name;       /* the original name */
    hp_span args;       /* methods: the parameter types, comma-separated, between the parentheses */
    hp_span obfuscated;
    hp_span residual;   /* com.android.tools.r8.residualsignature's signature, else empty */
    int32_t min_lo, min_hi;   /* the obfuscated line range a:b, or HP_MAP_NO_LINE */
    int32_t orig_lo, orig_hi; /* the original lines c:d; d is HP_MAP_NO_LINE for ':c', both for none */
    uint32_t positions, n_positions; /* outlineCallsite: pairs (outline line, call-site line) */
    uint32_t line;      /* its line number (from 1) */
    uint32_t next;      /* the next member of the same class and obfuscated name (see below) */
    uint32_t class_index;
    uint8_t kind, flags;
} hp_map_member;

typedef struct hp_mapping_error {
    hp_code code;   /* HP_E_CORRUPT: a malformed line; HP_E_LIMIT: over 4 GiB; HP_E_NOMEM */
    uint64_t line;  /* the malformed line's number (from 1), else 0 */
    char text[224]; /* the whole message, naming the line */
} hp_mapping_error;

typedef struct hp_mapping hp_mapping;

/* Parses and indexes text[0:len].  `alloc` may be NULL for libc.  A line
 * that is none of the forms above is HP_E_CORRUPT, naming it. */
hp_code hp_mapping_parse(const hp_alloc *alloc, const char *text, size_t len, hp_mapping **out,
                         hp_mapping_error *err);
void hp_mapping_free(hp_mapping *m);

const char *hp_mapping_text(const hp_mapping *m);
uint32_t hp_mapping_class_count(const hp_mapping *m);
uint32_t hp_mapping_member_count(const hp_mapping *m);
const hp_map_class *hp_mapping_class(const hp_mapping *m, uint32_t index);
const hp_map_member *hp_mapping_member(const hp_mapping *m, uint32_t index);
/* outlineCallsite positions: member->n_positions pairs from member->positions. */
const int32_t *hp_mapping_positions(const hp_mapping *m, const hp_map_member *member);

/* The highest com.android.tools.r8.mapping version given ("2.2" is 2002:
 * major * 1000 + minor), 0 when none (ProGuard). */
uint32_t hp_mapping_version(const hp_mapping *m);

/* The class whose obfuscated (or original) name is name[0:len]: its index,
 * or HP_MAP_NONE.  When several classes share the name, the first one. */
uint32_t hp_mapping_find_class(const hp_mapping *m, const char *name, size_t len);
uint32_t hp_mapping_find_original(const hp_mapping *m, const char *name, size_t len);

/* The members (fields and methods) of class `class_index` whose obfuscated
 * name is name[0:len], in file order: the first, then each next; HP_MAP_NONE
 * after the last. */
uint32_t hp_mapping_find_member(const hp_mapping *m, uint32_t class_index, const char *name, size_t len);
uint32_t hp_mapping_next_member(const hp_mapping *m, uint32_t member_index);

/* ---- names of a dump (hp_mapping_names.c) ---- */

/* The clear spelling of a class name as a dump writes it: HotSpot's "a/b",
 * "[La/b;", "[[La/b;" or ART's "a.b", "a.b[][]", each deobfuscated and
 * spelled the same way; a HotSpot hidden lambda class ("a/b$$Lambda$12/0x...",
 * "a.b$$Lambda+0x...") takes its host's clear name and keeps its suffix.
 * Writes up to `cap` bytes to out and returns the clear name's length (more
 * than cap: call again with room for it), or 0 when the mapping does not
 * name the class (primitive arrays, JDK classes...).  `scratch` has room
 * for len bytes. */
size_t hp_mapping_clear_class(const hp_mapping *m, const char *name, size_t len, char *out, size_t cap,
                              char *scratch);

/* The field of class `class_index` whose obfuscated name is name[0:len]:
 * the member that gives its clear name, or HP_MAP_NONE when the class
 * lists no such field, or lists several with other clear names that the
 * HPROF basic type `type` (HP_T_*, 0 for unknown) does not tell apart. */
uint32_t hp_mapping_clear_field(const hp_mapping *m, uint32_t class_index, const char *name, size_t len, int type);

/* Whether class `class_index` lists a field whose obfuscated name is name[0:len]. */
int hp_mapping_lists_field(const hp_mapping *m, uint32_t class_index, const char *name, size_t len);

#endif
