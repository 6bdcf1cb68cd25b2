/* Shared vocabulary of the hprofkit core: status codes, the error record,
 * big-endian readers and the HPROF type table.  Pure C99, no Python. */
#ifndef HP_COMMON_H
#define HP_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Error codes.  Zero is success; every failure carries one of these plus the
 * byte offset and the tag of the record or sub-record it happened in. */
typedef enum hp_code {
    HP_OK = 0,
    HP_E_TRUNCATED,   /* input ended inside a header, record or sub-record */
    HP_E_FORMAT,      /* not an HPROF file, or an unsupported header */
    HP_E_CORRUPT,     /* bytes that cannot be a valid record: bad sub-tag, type, size */
    HP_E_OVERRUN,     /* a sub-record runs past the end of its heap-dump record */
    HP_E_NOMEM,       /* an allocation failed */
    HP_E_USAGE,       /* the caller broke an API contract (feed after finish...) */
    HP_E_LIMIT,       /* the input is valid HPROF but beyond what an output format can hold */
    HP_E_ABORTED,     /* a caller's callback (checkpoint, edge or size source) asked to stop */
    HP_E_NO_DUMP,     /* valid HPROF without the heap dump asked for (or without any) */
    HP_E_TOO_LARGE    /* a restore declares more output than it may write (a decompression bomb) */
} hp_code;
#define HP_E_COUNT (HP_E_TOO_LARGE + 1)

/* Where the error is: `offset` is the absolute byte offset of the unit that
 * failed (header, record or sub-record), `tag` its tag, `is_sub` whether it
 * is a heap sub-record.  `need`/`have` give sizes for truncations. */
typedef struct hp_error {
    hp_code code;
    uint64_t offset;
    int tag;           /* -1 for the file header */
    int is_sub;
    uint64_t need;
    uint64_t have;
    const char *detail; /* static text, or NULL */
    char text[192];     /* a whole message made by hp_failf, else empty */
} hp_error;

/* hp_error.tag of an error about a vertex of a graph (hp_graph.h) rather
 * than a record: `offset` is then the vertex number, or UINT64_MAX for an
 * error about no vertex in particular (out of memory). */
#define HP_TAG_VERTEX (-2)

/* Allocation hooks.  The Python glue installs PyMem_Raw* (legal without the
 * GIL and seen by tracemalloc); the C tests use the libc defaults. */
typedef struct hp_alloc {
    void *(*malloc_fn)(size_t size);
    void *(*realloc_fn)(void *ptr, size_t size);
    void (*free_fn)(void *ptr);
} hp_alloc;

extern const hp_alloc hp_default_alloc;

static inline uint16_t hp_be16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t hp_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint64_t hp_be64(const uint8_t *p) { return ((uint64_t)hp_be32(p) << 32) | hp_be32(p + 4); }
/* `size` (0..8) big-endian bytes as an unsigned number: a field of any basic type. */
static inline uint64_t hp_be_bytes(const uint8_t *p, unsigned size)
{
    uint64_t v = 0;
    unsigned k;
    for (k = 0; k < size; k++)
        v = v << 8 | p[k];
    return v;
}
static inline uint64_t hp_read_id(const uint8_t *p, int id_size)
{
    return id_size == 8 ? hp_be64(p) : hp_be32(p);
}
static inline void hp_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void hp_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void hp_put64(uint8_t *p, uint64_t v) { hp_put32(p, (uint32_t)(v >> 32)); hp_put32(p + 4, (uint32_t)v); }

/* Longest varint (7 bits a byte, low bits first, the high bit set on all but
 * the last): 10 bytes hold 64 bits. */
#define HP_VARINT_MAX 10

/* Writes v as a varint at p (room for HP_VARINT_MAX bytes); returns its length. */
static inline size_t hp_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* HPROF basic types (format §5). */
enum { HP_T_OBJECT = 2, HP_T_BOOLEAN = 4, HP_T_CHAR = 5, HP_T_FLOAT = 6, HP_T_DOUBLE = 7,
       HP_T_BYTE = 8, HP_T_SHORT = 9, HP_T_INT = 10, HP_T_LONG = 11 };

/* Size in bytes of a value of basic type `type`, or 0 when the type code is
 * invalid.  Inline: class-dump tables call it for every field. */
static inline int hp_type_size(int type, int id_size)
{
    static const signed char sizes[12] = { 0, 0, -1, 0, 1, 2, 4, 8, 1, 2, 4, 8 };
    if (type < 0 || type > 11)
        return 0;
    return sizes[type] < 0 ? id_size : sizes[type];
}

/* Top-level record tags (format §3). */
enum {
    HP_TAG_UTF8 = 0x01, HP_TAG_LOAD_CLASS = 0x02, HP_TAG_UNLOAD_CLASS = 0x03,
    HP_TAG_FRAME = 0x04, HP_TAG_TRACE = 0x05, HP_TAG_ALLOC_SITES = 0x06,
    HP_TAG_HEAP_SUMMARY = 0x07, HP_TAG_START_THREAD = 0x0A, HP_TAG_END_THREAD = 0x0B,
    HP_TAG_HEAP_DUMP = 0x0C, HP_TAG_CPU_SAMPLES = 0x0D, HP_TAG_CONTROL_SETTINGS = 0x0E,
    HP_TAG_HEAP_DUMP_SEGMENT = 0x1C, HP_TAG_HEAP_DUMP_END = 0x2C
};

/* Heap sub-record tags (format §4), standard and Android. */
enum {
    HP_SUB_ROOT_UNKNOWN = 0xFF, HP_SUB_ROOT_JNI_GLOBAL = 0x01, HP_SUB_ROOT_JNI_LOCAL = 0x02,
    HP_SUB_ROOT_JAVA_FRAME = 0x03, HP_SUB_ROOT_NATIVE_STACK = 0x04, HP_SUB_ROOT_STICKY_CLASS = 0x05,
    HP_SUB_ROOT_THREAD_BLOCK = 0x06, HP_SUB_ROOT_MONITOR_USED = 0x07, HP_SUB_ROOT_THREAD_OBJECT = 0x08,
    HP_SUB_CLASS_DUMP = 0x20, HP_SUB_INSTANCE_DUMP = 0x21, HP_SUB_OBJ_ARRAY_DUMP = 0x22,
    HP_SUB_PRIM_ARRAY_DUMP = 0x23,
    HP_SUB_ROOT_INTERNED_STRING = 0x89, HP_SUB_ROOT_FINALIZING = 0x8A, HP_SUB_ROOT_DEBUGGER = 0x8B,
    HP_SUB_ROOT_REFERENCE_CLEANUP = 0x8C, HP_SUB_ROOT_VM_INTERNAL = 0x8D, HP_SUB_ROOT_JNI_MONITOR = 0x8E,
    HP_SUB_UNREACHABLE = 0x90, HP_SUB_PRIM_ARRAY_NODATA = 0xC3, HP_SUB_HEAP_DUMP_INFO = 0xFE
};

static inline int hp_is_heap_tag(int tag) { return tag == HP_TAG_HEAP_DUMP || tag == HP_TAG_HEAP_DUMP_SEGMENT; }

/* Names as Tailor's scripts print them; NULL for a tag the format does not define. */
const char *hp_tag_name(int tag);
const char *hp_subtag_name(int subtag);

/* Writes a one-line message for `err` into buf (always NUL-terminated), e.g.
 * "truncated INSTANCE_DUMP at offset 1234 (0x4d2): needs 36 bytes, 8 remain".
 * Returns the length written. */
size_t hp_error_format(const hp_error *err, char *buf, size_t size);

/* Fills `err` and returns its code, so failures read `return hp_fail(...)`. */
hp_code hp_fail(hp_error *err, hp_code code, uint64_t offset, int tag, int is_sub,
                uint64_t need, uint64_t have, const char *detail);

/* Whether a class name as a dump writes it ("java/lang/String", "[B",
 * "[Ljava/lang/Object;", or ART's Java names) is the Java name `want`
 * ("java.lang.String", "byte[]", "java.lang.Object[]"). */
int hp_java_name_equals(const uint8_t *name, size_t len, const char *want, size_t want_len);

/* The Java name of a class as a dump writes it, the way VisualVM and MAT
 * show it: "java/lang/String" -> "java.lang.String", "[[I" -> "int[][]",
 * "[Ljava/lang/Object;" -> "java.lang.Object[]"; ART's names stay as they
 * are.  Works on the raw (modified UTF-8) bytes: the rule touches ASCII
 * only.  `out` holds at least HP_JAVA_NAME_MAX(len) bytes; returns the
 * bytes written. */
#define HP_JAVA_NAME_MAX(len) (2 * (size_t)(len) + 8)
size_t hp_java_name(const uint8_t *name, size_t len, uint8_t *out);

/* Names a dump lacks: a class without LOAD_CLASS (or whose LOAD_CLASS names
 * a STRING the dump lacks), a field, a static or a method whose name STRING
 * is missing.  Every reader shows the one placeholder this writes:
 * "<unnamed class 0x1a2b>" (id: the class object's id), "<unnamed field #3>"
 * and "<unnamed static #3>" (id: its place among its class's own instance
 * fields, or among its statics, from 0), "<unnamed method>" (id unused).
 * buf holds HP_UNNAMED_MAX bytes; returns the length written. */
typedef enum hp_unnamed_kind { HP_UNNAMED_CLASS, HP_UNNAMED_FIELD, HP_UNNAMED_STATIC, HP_UNNAMED_METHOD } hp_unnamed_kind;
#define HP_UNNAMED_MAX 48
size_t hp_unnamed(char *buf, hp_unnamed_kind kind, uint64_t id);

/* Java's modified UTF-8 (HPROF's names and strings) rewritten as UTF-8, for
 * a decoder that replaces what is still invalid: C0 80 becomes NUL, a
 * surrogate pair written as two 3-byte sequences becomes one 4-byte
 * sequence, an unpaired surrogate becomes U+FFFD; other bytes are copied.
 * `out` holds at least `len` bytes (the text never grows); returns the
 * bytes written. */
size_t hp_mutf8_to_utf8(const uint8_t *in, size_t len, uint8_t *out);
#if defined(__GNUC__)
#define HP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HP_PRINTF(f, a)
#endif

/* Like hp_fail for errors whose message needs numbers or names of its own
 * (a pack's block index and stream name): the whole message is formatted
 * into err->text, which hp_error_format then prints as it is. */
hp_code hp_failf(hp_error *err, hp_code code, uint64_t offset, int tag, int is_sub, const char *fmt, ...)
    HP_PRINTF(6, 7);

/* ---- restores: what packs, minis and BMD files may expand to ---- */

/* A restore writes at most `max_output` bytes when set, else the larger of
 * HP_RESTORE_FLOOR and HP_RESTORE_RATIO times the input read so far: a
 * 165-byte BMD declaring 40 GB is refused before anything of it is written
 * (docs/reference/behaviour.md, "Limits"). */
#define HP_RESTORE_FLOOR ((uint64_t)4 << 30)
#define HP_RESTORE_RATIO 1000u
uint64_t hp_restore_limit(uint64_t max_output, uint64_t input);
/* A restore refused: `what` (a BMD record, a pack block...) at `offset`,
 * unit `tag`, takes the restored dump to `declared` bytes, over `limit`
 * (hp_restore_limit's).  Fills err and returns HP_E_TOO_LARGE. */
hp_code hp_restore_refuse(hp_error *err, uint64_t declared, uint64_t limit, const char *what, uint64_t offset,
                          int tag, int is_sub);

#endif
