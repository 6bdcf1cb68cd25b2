/* Tests of the mapping parser (hp_mapping.h):
 *  - the shared ProGuard 6.2.2 mapping (../shared/data/obfuscated/mapping.txt):
 *    every class and field it lists, found by obfuscated and original name;
 *  - an R8 mapping with every form: line ranges, inline frames with
 *    qualified holders, catch-all ranges, metadata (version, sourceFile,
 *    synthesized, residualsignature, outline, outlineCallsite), the spec's
 *    single-quoted metadata, CRLF line ends, a byte order mark;
 *  - malformed lines: the error names the line;
 *  - out of memory at every allocation: an error, never a crash or a leak
 *    (ASan). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hp_mapping.h"

static int span_is(const hp_mapping *m, hp_span s, const char *want)
{
    return s.len == strlen(want) && memcmp(hp_mapping_text(m) + s.off, want, s.len) == 0;
}

static hp_mapping *parse_ok(const char *text)
{
    hp_mapping *m = NULL;
    hp_mapping_error err;
    hp_code rc = hp_mapping_parse(NULL, text, strlen(text), &m, &err);
    CHECK(rc == HP_OK);
    if (rc != HP_OK)
        fprintf(stderr, "  %s\n", err.text);
    return m;
}

/* The field `obf` of class `cls` (obfuscated names) has original name `want`. */
static int field_is(const hp_mapping *m, const char *cls, const char *obf, const char *want)
{
    uint32_t c = hp_mapping_find_class(m, cls, strlen(cls)), i;
    if (c == HP_MAP_NONE)
        return 0;
    for (i = hp_mapping_find_member(m, c, obf, strlen(obf)); i != HP_MAP_NONE; i = hp_mapping_next_member(m, i)) {
        const hp_map_member *mb = hp_mapping_member(m, i);
        if (mb->kind == HP_MAP_FIELD)
            return span_is(m, mb->name, want);
    }
    return 0;
}

static void test_shared_proguard(void)
{
    const char *data = getenv("HPROFKIT_DATA");
    char path[1024];
    size_t len;
    unsigned char *text;
    hp_mapping *m = NULL;
    hp_mapping_error err;
    uint32_t c;
    snprintf(path, sizeof path, "%s/obfuscated/mapping.txt", data ? data : "../../../shared/data");
    text = check_read_file(path, &len);
    CHECK(text != NULL);
    if (!text)
        return;
    CHECK(hp_mapping_parse(NULL, (const char *)text, len, &m, &err) == HP_OK);
    if (!m) {
        free(text);
        return;
    }
    CHECK_EQ_U64(hp_mapping_class_count(m), 4);
    CHECK_EQ_U64(hp_mapping_version(m), 0);
    c = hp_mapping_find_class(m, "a", 1);
    CHECK(c != HP_MAP_NONE && span_is(m, hp_mapping_class(m, c)->original, "HeapGen$Activity"));
    c = hp_mapping_find_original(m, "HeapGen$Node", 12);
    CHECK(c != HP_MAP_NONE && span_is(m, hp_mapping_class(m, c)->obfuscated, "c"));
    CHECK(hp_mapping_find_class(m, "d", 1) == HP_MAP_NONE);
    CHECK(field_is(m, "a", "a", "name") && field_is(m, "a", "d", "extras"));
    CHECK(field_is(m, "b", "a", "owner") && field_is(m, "b", "c", "weight"));
    CHECK(field_is(m, "c", "g", "b") && field_is(m, "c", "f", "f") && field_is(m, "c", "e", "s"));
    CHECK(field_is(m, "HeapGen", "a", "LEAKS") && field_is(m, "HeapGen", "c", "sink"));
    /* HeapGen's `a` is a field and a method (lambda$main$0): both are listed, field first. */
    c = hp_mapping_find_class(m, "HeapGen", 7);
    {
        uint32_t i = hp_mapping_find_member(m, c, "a", 1), j = hp_mapping_next_member(m, i);
        CHECK(i != HP_MAP_NONE && hp_mapping_member(m, i)->kind == HP_MAP_FIELD);
        CHECK(j != HP_MAP_NONE && hp_mapping_member(m, j)->kind == HP_MAP_METHOD);
        CHECK(j != HP_MAP_NONE && span_is(m, hp_mapping_member(m, j)->name, "lambda$main$0"));
        CHECK(hp_mapping_next_member(m, j) == HP_MAP_NONE);
    }
    hp_mapping_free(m);
    free(text);
}

static const char r8_text[] =
    "\xEF\xBB\xBF# compiler: R8\r\n"
    "# {\"id\":\"com.android.tools.r8.mapping\",\"version\":\"2.2\"}\r\n"
    "com.example.Cart -> a.a:\n"
    "# {\"id\":\"sourceFile\",\"fileName\":\"Cart.kt\"}\n"
    "    java.util.List items -> a\n"
    "    int com.example.Base.count -> b\n"
    "    1:3:void <init>():10:12 -> <init>\n"
    "    4:4:void com.example.Util.check(int):225 -> a\n"
    "    4:4:void add(com.example.Item):30 -> a\n"
    "    5:9:void add(com.example.Item):31:35 -> a\n"
    "    # {\"id\":\"com.android.tools.r8.residualsignature\",\"signature\":\"(La/b;)V\"}\n"
    "    0:65535:int size():40:40 -> b\n"
    "    void clear() -> c\n"
    "      # { id: 'com.android.tools.r8.synthesized' }\n"
    "    7:7:void outer():0:0 -> d\n"
    "    # {'id':'com.android.tools.r8.outlineCallsite','positions':{'1':4,'2':5},'outline':'La;a()V'}\n"
    "    # a plain comment {not json\n"
    "com.example.Cart$$ExternalSyntheticLambda0 -> a.a$$ExternalSyntheticLambda0:\n"
    "# {\"id\":\"sourceFile\",\"fileName\":\"R8$$SyntheticClass\"}\n"
    "# {\"id\":\"com.android.tools.r8.synthesized\"}\n"
    "    com.example.Cart f$0 -> a\n"
    "\n"
    "com.android.tools.r8.GeneratedOutlineSupport -> b:\n"
    "    1:2:int outline0():0:1 -> a\n"
    "# {\"id\":\"com.android.tools.r8.outline\"}\n";

static void test_r8(void)
{
    hp_mapping *m = parse_ok(r8_text);
    uint32_t c, i, n;
    const hp_map_member *mb;
    if (!m)
        return;
    CHECK_EQ_U64(hp_mapping_version(m), 2002);
    CHECK_EQ_U64(hp_mapping_class_count(m), 3);
    c = hp_mapping_find_class(m, "a.a", 3);
    CHECK(c == 0);
    CHECK(span_is(m, hp_mapping_class(m, c)->source_file, "Cart.kt"));
    CHECK(hp_mapping_class(m, c)->flags == 0);
    CHECK(field_is(m, "a.a", "a", "items"));
    i = hp_mapping_find_member(m, c, "b", 1);
    mb = hp_mapping_member(m, i);
    CHECK(mb->kind == HP_MAP_FIELD && span_is(m, mb->owner, "com.example.Base") && span_is(m, mb->name, "count"));
    /* a: the inline frame pair at line 4, then the range 5:9 with a residual signature. */
    i = hp_mapping_find_member(m, c, "a", 1);
    i = hp_mapping_next_member(m, i); /* past the field a */
    mb = hp_mapping_member(m, i);
    CHECK(mb->kind == HP_MAP_METHOD && span_is(m, mb->owner, "com.example.Util") && span_is(m, mb->name, "check"));
    CHECK(span_is(m, mb->args, "int") && mb->min_lo == 4 && mb->min_hi == 4 && mb->orig_lo == 225 &&
          mb->orig_hi == HP_MAP_NO_LINE);
    mb = hp_mapping_member(m, i = hp_mapping_next_member(m, i));
    CHECK(span_is(m, mb->name, "add") && mb->owner.len == 0 && span_is(m, mb->args, "com.example.Item"));
    CHECK(mb->residual.len == 0);
    mb = hp_mapping_member(m, i = hp_mapping_next_member(m, i));
    CHECK(mb->min_lo == 5 && mb->min_hi == 9 && mb->orig_lo == 31 && mb->orig_hi == 35);
    CHECK(span_is(m, mb->residual, "(La/b;)V"));
    CHECK(hp_mapping_next_member(m, i) == HP_MAP_NONE);
    /* b: the field count, then size() with the catch-all range. */
    i = hp_mapping_next_member(m, hp_mapping_find_member(m, c, "b", 1));
    mb = hp_mapping_member(m, i);
    CHECK(mb->min_lo == 0 && mb->min_hi == 65535 && span_is(m, mb->type, "int") && span_is(m, mb->args, ""));
    /* c: no lines at all; synthesized by the single-quoted, bare-keyed metadata. */
    mb = hp_mapping_member(m, hp_mapping_find_member(m, c, "c", 1));
    CHECK(mb->min_lo == HP_MAP_NO_LINE && mb->orig_lo == HP_MAP_NO_LINE && mb->flags == HP_MAP_SYNTHESIZED);
    /* d: the outline call site's positions. */
    mb = hp_mapping_member(m, hp_mapping_find_member(m, c, "d", 1));
    CHECK(mb->flags == HP_MAP_CALLSITE && mb->n_positions == 2);
    {
        const int32_t *p = hp_mapping_positions(m, mb);
        CHECK(p && p[0] == 1 && p[1] == 4 && p[2] == 2 && p[3] == 5);
    }
    /* The synthesized lambda class (metadata below its class line) and the outline. */
    c = hp_mapping_find_class(m, "a.a$$ExternalSyntheticLambda0", 29);
    CHECK(c == 1 && hp_mapping_class(m, c)->flags == HP_MAP_SYNTHESIZED);
    CHECK(span_is(m, hp_mapping_class(m, c)->source_file, "R8$$SyntheticClass"));
    c = hp_mapping_find_original(m, "com.android.tools.r8.GeneratedOutlineSupport", 44);
    CHECK(c == 2);
    mb = hp_mapping_member(m, hp_mapping_find_member(m, c, "a", 1));
    CHECK(mb->flags == HP_MAP_OUTLINE && mb->line == 24);
    n = hp_mapping_member_count(m);
    CHECK_EQ_U64(n, 11);
    hp_mapping_free(m);
}

/* Each malformed text fails on the line given. */
static void test_malformed(void)
{
    static const struct {
        const char *text;
        unsigned line;
    } cases[] = {
        { "    int a -> b\n", 1 },                                   /* a member before any class */
        { "A -> a:\n  int x -> y\nnot a class line\n", 3 },          /* no arrow */
        { "A -> a\n", 1 },                                           /* no ':' */
        { "A B -> a:\n", 1 },                                        /* two names */
        { "A -> a:\n    int x\n", 2 },                               /* no ' -> ' */
        { "A -> a:\n    int -> x\n", 2 },                            /* no name */
        { "A -> a:\n    1:2void f() -> a\n", 2 },                    /* bad range */
        { "A -> a:\n    1:99999999999:void f() -> a\n", 2 },         /* beyond int32 */
        { "A -> a:\n    void f(int -> a\n", 2 },                     /* no ')' */
        { "A -> a:\n    void f():x -> a\n", 2 },                     /* bad original line */
        { "A -> a:\n    void f():1:2:3 -> a\n", 2 },                 /* too many numbers */
        { "A -> a:\n    int x -> a b\n", 2 },                        /* two obfuscated names */
        { "A -> a:\n    int .x -> a\n", 2 },                         /* empty holder */
        { "A -> a:\n\n\n# c\n    int x -> \n", 5 },                  /* nothing after ' -> ' */
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        hp_mapping *m = NULL;
        hp_mapping_error err;
        hp_code rc = hp_mapping_parse(NULL, cases[k].text, strlen(cases[k].text), &m, &err);
        char prefix[32];
        CHECK(rc == HP_E_CORRUPT && m == NULL);
        CHECK_EQ_U64(err.line, cases[k].line);
        snprintf(prefix, sizeof prefix, "line %u: ", cases[k].line);
        CHECK(strncmp(err.text, prefix, strlen(prefix)) == 0);
        if (rc == HP_OK)
            hp_mapping_free(m);
    }
    /* Empty and comment-only texts are valid, empty mappings. */
    {
        hp_mapping *m = parse_ok("");
        CHECK(m && hp_mapping_class_count(m) == 0);
        hp_mapping_free(m);
        m = parse_ok("# nothing\n\n   \n");
        CHECK(m && hp_mapping_class_count(m) == 0);
        hp_mapping_free(m);
    }
}

/* A dump's class name through the mapping, as hp_mapping_clear_class spells it ("" when not named). */
static int clear_is(const hp_mapping *m, const char *name, const char *want)
{
    char out[64], scratch[64];
    size_t n = hp_mapping_clear_class(m, name, strlen(name), out, sizeof out, scratch);
    if (n > sizeof out)
        return 0;
    return n == strlen(want) && memcmp(out, want, n) == 0;
}

static void test_names(void)
{
    hp_mapping *m = parse_ok("com.example.Cart -> a.a:\n"
                             "    java.util.List items -> a\n"
                             "    int total -> a\n"
                             "    long total2 -> a\n"
                             "    int count -> b\n"
                             "    int count -> b\n"
                             "com.example.Cart$Line -> a.a$a:\n"
                             "Top -> b:\n");
    char out[8], scratch[64];
    uint32_t c;
    if (!m)
        return;
    CHECK(clear_is(m, "a.a", "com.example.Cart") && clear_is(m, "a/a", "com/example/Cart"));
    CHECK(clear_is(m, "[La/a;", "[Lcom/example/Cart;") && clear_is(m, "[[[La/a$a;", "[[[Lcom/example/Cart$Line;"));
    CHECK(clear_is(m, "a.a[]", "com.example.Cart[]") && clear_is(m, "a.a$a[][]", "com.example.Cart$Line[][]"));
    CHECK(clear_is(m, "b", "Top") && clear_is(m, "[Lb;", "[LTop;") && clear_is(m, "b[]", "Top[]"));
    CHECK(clear_is(m, "a/a$$Lambda$12/0x0000000800c01234", "com/example/Cart$$Lambda$12/0x0000000800c01234"));
    CHECK(clear_is(m, "a.a$$Lambda+0x00007f", "com.example.Cart$$Lambda+0x00007f"));
    CHECK(clear_is(m, "a.b", "") && clear_is(m, "[I", "") && clear_is(m, "[L;", "") && clear_is(m, "", ""));
    CHECK(clear_is(m, "[]", "") && clear_is(m, "$$Lambda$1", "") && clear_is(m, "z$$Lambda$1", ""));
    /* A name longer than the room given: its length, to call again with room. */
    CHECK(hp_mapping_clear_class(m, "[[La/a$a;", 9, out, sizeof out, scratch) == 25);
    c = hp_mapping_find_class(m, "a.a", 3);
    /* Three a fields: the type tells the object from the two primitives, not int from long by name. */
    CHECK(hp_mapping_clear_field(m, c, "a", 1, HP_T_OBJECT) != HP_MAP_NONE);
    CHECK(span_is(m, hp_mapping_member(m, hp_mapping_clear_field(m, c, "a", 1, HP_T_OBJECT))->name, "items"));
    CHECK(span_is(m, hp_mapping_member(m, hp_mapping_clear_field(m, c, "a", 1, HP_T_LONG))->name, "total2"));
    CHECK(hp_mapping_clear_field(m, c, "a", 1, 0) == HP_MAP_NONE);
    CHECK(hp_mapping_clear_field(m, c, "a", 1, HP_T_BYTE) == HP_MAP_NONE);
    /* Two lines with one clear name are one field. */
    CHECK(span_is(m, hp_mapping_member(m, hp_mapping_clear_field(m, c, "b", 1, 0))->name, "count"));
    CHECK(hp_mapping_clear_field(m, c, "zz", 2, 0) == HP_MAP_NONE);
    CHECK(hp_mapping_clear_field(m, 99, "a", 1, 0) == HP_MAP_NONE);
    hp_mapping_free(m);
}

static long budget = -1;
static void *budget_malloc(size_t n)
{
    if (budget == 0)
        return NULL;
    if (budget > 0)
        budget--;
    return malloc(n);
}
static void *budget_realloc(void *p, size_t n)
{
    if (budget == 0)
        return NULL;
    if (budget > 0)
        budget--;
    return realloc(p, n);
}
static const hp_alloc budget_alloc = { budget_malloc, budget_realloc, free };

static void test_out_of_memory(void)
{
    long b;
    int failed = 0, succeeded = 0;
    for (b = 0; b < 200 && !succeeded; b++) {
        hp_mapping *m = NULL;
        hp_mapping_error err;
        hp_code rc;
        budget = b;
        rc = hp_mapping_parse(&budget_alloc, r8_text, strlen(r8_text), &m, &err);
        budget = -1;
        if (rc == HP_OK) {
            succeeded = 1;
            CHECK(hp_mapping_class_count(m) == 3);
            hp_mapping_free(m);
        } else {
            failed++;
            CHECK(rc == HP_E_NOMEM && m == NULL && err.line == 0);
        }
    }
    CHECK(failed > 0 && succeeded);
}

int main(void)
{
    test_shared_proguard();
    test_r8();
    test_malformed();
    test_names();
    test_out_of_memory();
    return check_report("test_mapping");
}
