/* libFuzzer harness for the mapping parser (hp_mapping.h).
 *
 * Input: the text of a mapping.txt.  It is parsed from an allocation of its
 * exact size (so ASan sees any read past it).  A failure must be
 * HP_E_CORRUPT naming a line of the text, with no mapping returned.  On
 * success every span lies in the text, every class is found again by its
 * obfuscated and original names (the first of its name), every member by
 * its class and obfuscated name, and the member chains list only members
 * of that class and name.  Any mismatch aborts (a crash for libFuzzer).
 *
 * Built with -DHP_FUZZ_SEEDGEN this file is the seed generator instead:
 *     seedgen OUTDIR DATADIR MAXLEN
 * writes a few R8 and ProGuard mappings (DATADIR/../obfuscated/mapping.txt
 * among them when present). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp_mapping.h"

#ifndef HP_FUZZ_SEEDGEN

static void die(const char *what)
{
    fprintf(stderr, "fuzz_mapping: %s\n", what);
    abort();
}

static void check_span(hp_span s, size_t len)
{
    if ((uint64_t)s.off + s.len > len)
        die("a span past the text");
}

static int same(const char *text, hp_span a, hp_span b)
{
    return a.len == b.len && memcmp(text + a.off, text + b.off, a.len) == 0;
}

static void check_mapping(const hp_mapping *m, size_t len)
{
    const char *text = hp_mapping_text(m);
    uint32_t i, n_classes = hp_mapping_class_count(m), total = 0;
    for (i = 0; i < n_classes; i++) {
        const hp_map_class *c = hp_mapping_class(m, i);
        uint32_t found, k;
        check_span(c->original, len);
        check_span(c->obfuscated, len);
        check_span(c->source_file, len);
        if (!c->original.len || !c->obfuscated.len)
            die("a class with an empty name");
        found = hp_mapping_find_class(m, text + c->obfuscated.off, c->obfuscated.len);
        if (found > i || !same(text, hp_mapping_class(m, found)->obfuscated, c->obfuscated))
            die("a class not found by its obfuscated name");
        found = hp_mapping_find_original(m, text + c->original.off, c->original.len);
        if (found > i || !same(text, hp_mapping_class(m, found)->original, c->original))
            die("a class not found by its original name");
        if (c->obfuscated.len < 200 && !memchr(text + c->obfuscated.off, '/', c->obfuscated.len) &&
            text[c->obfuscated.off] != '[' && (c->obfuscated.len < 2 || text[c->obfuscated.off + c->obfuscated.len - 1] != ']')) {
            /* Its clear spelling is the original name of the first class of its name. */
            char out[256], scratch[256];
            size_t n = hp_mapping_clear_class(m, text + c->obfuscated.off, c->obfuscated.len, out, sizeof out, scratch);
            const hp_map_class *first = hp_mapping_class(m, hp_mapping_find_class(m, text + c->obfuscated.off,
                                                                                    c->obfuscated.len));
            if (n <= sizeof out && (n != first->original.len || memcmp(out, text + first->original.off, n) != 0))
                die("a class's clear spelling is not its original name");
        }
        if (c->first_member != total)
            die("members out of order");
        total += c->n_members;
        for (k = c->first_member; k < c->first_member + c->n_members; k++) {
            const hp_map_member *mb = hp_mapping_member(m, k);
            uint32_t j, seen = 0;
            check_span(mb->type, len);
            check_span(mb->owner, len);
            check_span(mb->name, len);
            check_span(mb->args, len);
            check_span(mb->obfuscated, len);
            check_span(mb->residual, len);
            if (mb->class_index != i || (mb->kind != HP_MAP_FIELD && mb->kind != HP_MAP_METHOD))
                die("a member of the wrong class or kind");
            if (mb->n_positions && !hp_mapping_positions(m, mb))
                die("call-site positions missing");
            for (j = hp_mapping_find_member(m, i, text + mb->obfuscated.off, mb->obfuscated.len); j != HP_MAP_NONE;
                 j = hp_mapping_next_member(m, j)) {
                const hp_map_member *other = hp_mapping_member(m, j);
                if (other->class_index != i || !same(text, other->obfuscated, mb->obfuscated))
                    die("a chain holds another member");
                seen |= j == k;
            }
            if (!seen)
                die("a member not found by its obfuscated name");
            if (mb->kind == HP_MAP_FIELD) {
                uint32_t f = hp_mapping_clear_field(m, i, text + mb->obfuscated.off, mb->obfuscated.len, 0);
                if (f != HP_MAP_NONE && (hp_mapping_member(m, f)->class_index != i ||
                                         hp_mapping_member(m, f)->kind != HP_MAP_FIELD))
                    die("a field's clear name from another member");
            }
        }
    }
    if (total != hp_mapping_member_count(m))
        die("members outside every class");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    hp_mapping *m = NULL;
    hp_mapping_error err;
    hp_code rc;
    uint64_t lines = 1;
    size_t i;
    if (!text)
        return 0;
    if (size)
        memcpy(text, data, size);
    rc = hp_mapping_parse(NULL, text, size, &m, &err);
    for (i = 0; i < size; i++)
        lines += text[i] == '\n';
    if (rc == HP_OK) {
        if (!m)
            die("no mapping returned");
        check_mapping(m, size);
        hp_mapping_free(m);
    } else if (rc != HP_E_CORRUPT || m || err.line < 1 || err.line > lines || !err.text[0]) {
        die("an error that names no line of the text");
    }
    free(text);
    return 0;
}

#else /* HP_FUZZ_SEEDGEN */

static const char *const seeds[] = {
    "A -> a:\n    int x -> a\n    1:2:void f(int,A):3:4 -> b\n",
    "# {\"id\":\"com.android.tools.r8.mapping\",\"version\":\"2.2\"}\n"
    "com.example.Cart -> a.a:\n# {\"id\":\"sourceFile\",\"fileName\":\"Cart.kt\"}\n"
    "    4:4:void com.example.Util.check(int):225 -> a\n    4:4:void add(com.example.Item):30 -> a\n"
    "    # {\"id\":\"com.android.tools.r8.residualsignature\",\"signature\":\"(La/b;)V\"}\n"
    "    0:65535:int size():40:40 -> b\n    void clear() -> c\n      # { id: 'com.android.tools.r8.synthesized' }\n"
    "    7:7:void outer():0:0 -> d\n"
    "    # {'id':'com.android.tools.r8.outlineCallsite','positions':{'1':4,'2':5},'outline':'La;a()V'}\n",
    "b -> b:\n# {'id':'com.android.tools.r8.synthesized'}\n    1:2:int outline0():0:1 -> a\n"
    "# {\"id\":\"com.android.tools.r8.outline\"}\n",
};

int main(int argc, char **argv)
{
    char path[4096];
    size_t i;
    FILE *f;
    if (argc < 3)
        return 2;
    for (i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        snprintf(path, sizeof path, "%s/seed%zu.txt", argv[1], i);
        f = fopen(path, "wb");
        if (!f)
            return 1;
        fwrite(seeds[i], 1, strlen(seeds[i]), f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/../obfuscated/mapping.txt", argv[2]);
    f = fopen(path, "rb");
    if (f) {
        char buf[65536];
        size_t n = fread(buf, 1, sizeof buf, f);
        FILE *out;
        fclose(f);
        snprintf(path, sizeof path, "%s/proguard.txt", argv[1]);
        out = fopen(path, "wb");
        if (!out)
            return 1;
        fwrite(buf, 1, n, out);
        fclose(out);
    }
    return 0;
}

#endif
