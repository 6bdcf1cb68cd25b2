/* Tests of clear names in the heap index (hp_heap_apply_mapping), on the
 * shared ProGuard-obfuscated HeapGen dumps (HotSpot and ART style) and
 * their mapping.txt: class names and find-by-name, the fields of each class
 * in dump order (the answer key of ../shared/data/obfuscated/SOURCES.md),
 * one dump STRING `a` naming a class and fields of three classes apart,
 * the dump's own names kept, JDK names untouched, renamed stack frames;
 * out of memory at every allocation is an error, never a crash or a leak. */
#include "testkit.h"

#include "countalloc.h"
#include "hp_heap.h"
#include "hp_heap_tables.h"
#include "hp_mapping.h"

static int bytes_are(const uint8_t *p, size_t n, const char *want)
{
    return p && n == strlen(want) && memcmp(p, want, n) == 0;
}

static uint32_t find(const hp_heap *h, const char *name) { return hp_heap_find_class_name(h, name, strlen(name), 0); }

/* Entry `code` of a table dictionary is `want`. */
static int entry_is(const hp_strdict *d, int32_t code, const char *want)
{
    return code >= 0 && (uint32_t)code < d->count &&
           bytes_are(d->data + d->offsets[code], (size_t)(d->offsets[code + 1] - d->offsets[code]), want);
}

/* The names of class `ord`'s own instance fields, in dump order, joined by ','. */
static void own_fields(const hp_heap *h, uint32_t ord, char *out, size_t cap)
{
    hp_field_iter it;
    hp_field f;
    size_t at = 0;
    out[0] = 0;
    hp_field_iter_init(&it, h, ord);
    while (hp_field_next(&it, &f) && f.declaring == ord) {
        const uint8_t *t;
        size_t n;
        if (hp_heap_utf8(h, f.name_sid, &t, &n) && at + n + 2 < cap) {
            if (at)
                out[at++] = ',';
            memcpy(out + at, t, n);
            at += n;
            out[at] = 0;
        }
    }
}

static void check_dump(const char *rel, const hp_mapping *m)
{
    size_t len;
    uint8_t *data = load_dump(rel, &len);
    hp_heap *h = NULL;
    hp_heap_options opt;
    hp_heap_renames r;
    hp_error err;
    hp_class_info info;
    const uint8_t *name;
    size_t n;
    uint32_t activity, listener, node, main_class;
    char fields[256];
    hp_field f;
    hp_static_iter st;
    hp_table_names names;
    CHECK(data != NULL);
    if (!data)
        return;
    memset(&opt, 0, sizeof opt);
    CHECK(hp_heap_build(data, len, &opt, &h, &err) == HP_OK);
    if (!h) {
        free(data);
        return;
    }
    CHECK(find(h, "a") != HP_NONE && find(h, "HeapGen$Activity") == HP_NONE);
    CHECK(hp_heap_apply_mapping(h, m, &r, &err) == HP_OK);
    CHECK_EQ_U64(r.classes_listed, 5); /* HeapGen's hidden lambda class too, through its host */
    CHECK_EQ_U64(r.classes_renamed, 3);
    CHECK_EQ_U64(r.fields_renamed, 16);
    CHECK(r.mismatch_class == HP_NONE);
    activity = find(h, "HeapGen$Activity");
    listener = find(h, "HeapGen$Listener");
    node = find(h, "HeapGen$Node");
    main_class = find(h, "HeapGen");
    CHECK(activity != HP_NONE && listener != HP_NONE && node != HP_NONE && main_class != HP_NONE);
    CHECK(find(h, "a") == HP_NONE && find(h, "b") == HP_NONE && find(h, "c") == HP_NONE);
    if (activity == HP_NONE || listener == HP_NONE || node == HP_NONE || main_class == HP_NONE)
        goto done;
    hp_heap_class(h, listener, &info);
    CHECK(bytes_are(info.name, info.name_len, "HeapGen$Listener"));
    CHECK(hp_heap_class_dump_name(h, listener, &name, &n) && bytes_are(name, n, "b"));
    CHECK(hp_heap_class_dump_name(h, main_class, &name, &n) && bytes_are(name, n, "HeapGen"));
    /* The tables' class names: clear, and the dump's beside them (obfuscated_name). */
    CHECK(hp_table_names_build(&names, h, 0, NULL) == HP_OK);
    CHECK(entry_is(&names.classes, names.class_codes[listener], "HeapGen$Listener"));
    CHECK(entry_is(&names.classes, names.dump_codes[listener], "b"));
    CHECK(entry_is(&names.classes, names.dump_codes[main_class], "HeapGen"));
    CHECK(names.dump_codes[main_class] == names.class_codes[main_class]);
    hp_table_names_free(&names);
    /* The key's instance fields, in dump order: one STRING `a` named three ways. */
    own_fields(h, activity, fields, sizeof fields);
    CHECK(strcmp(fields, "extras,bitmap,destroyed,name") == 0);
    own_fields(h, listener, fields, sizeof fields);
    CHECK(strcmp(fields, "weight,id,owner") == 0);
    own_fields(h, node, fields, sizeof fields);
    CHECK(strcmp(fields, "b,f,s,tag,payload,prev,next") == 0);
    hp_static_iter_init(&st, h, main_class);
    CHECK(hp_static_next(&st, &f) && hp_heap_utf8(h, f.name_sid, &name, &n) && bytes_are(name, n, "sink"));
    /* HotSpot's own static keeps its name; JDK classes and fields are untouched. */
    while (hp_static_next(&st, &f))
        ;
    CHECK(hp_heap_utf8(h, f.name_sid, &name, &n) && (bytes_are(name, n, "<resolved_references>") ||
                                                      bytes_are(name, n, "LEAKS")));
    CHECK(find(h, "java.lang.String") != HP_NONE && find(h, "java.util.HashMap$Node") != HP_NONE);
    CHECK(find(h, "HeapGen$Activity[]") == HP_NONE); /* HeapGen makes no arrays of its classes */
    /* Stack frames: renamed by id, read back through a thread's stack. */
    if (hp_heap_frame_count(h)) {
        uint64_t id;
        hp_frame fr;
        hp_heap_frame_at(h, 0, &id, &fr);
        CHECK(hp_heap_rename_frame(h, id, "clearMethod", 11, NULL, 0, "Clear.java", 10, 77, &err) == HP_OK);
        CHECK(hp_heap_rename_frame(h, UINT64_MAX, "x", 1, NULL, 0, NULL, 0, 1, &err) == HP_E_USAGE);
    }
    CHECK(hp_heap_memory(h) > 0);
done:
    hp_heap_free(h);
    free(data);
}

/* Out of memory at each allocation of the apply: an error, the index freed whole. */
static void check_out_of_memory(const hp_mapping *m)
{
    size_t len, fail;
    uint8_t *data = load_dump("obfuscated/heapgen_s5_16mb_obf_android.hprof.gz", &len);
    int done = 0;
    if (!data)
        return;
    for (fail = 0; fail < 200 && !done; fail++) {
        hp_heap *h = NULL;
        hp_heap_options opt;
        hp_heap_renames r;
        hp_error err;
        size_t base;
        memset(&opt, 0, sizeof opt);
        opt.alloc = &countalloc;
        if (hp_heap_build(data, len, &opt, &h, &err) != HP_OK)
            break;
        base = countalloc_calls;
        countalloc_fail_call = base + fail;
        done = hp_heap_apply_mapping(h, m, &r, &err) == HP_OK;
        countalloc_fail_call = (size_t)-1;
        CHECK(done || err.code == HP_E_NOMEM);
        hp_heap_free(h);
        CHECK(countalloc_live == 0);
    }
    CHECK(done && fail > 2);
    free(data);
}

int main(void)
{
    size_t len;
    unsigned char *text = check_read_file(check_data_path("obfuscated/mapping.txt"), &len);
    hp_mapping *m = NULL;
    hp_mapping_error merr;
    CHECK(text != NULL);
    if (text && hp_mapping_parse(NULL, (const char *)text, len, &m, &merr) == HP_OK) {
        check_dump("obfuscated/heapgen_s5_16mb_obf_android.hprof.gz", m);
        check_dump("obfuscated/heapgen_s5_16mb_obf.hprof.gz", m);
        check_out_of_memory(m);
    }
    CHECK(m != NULL);
    hp_mapping_free(m);
    free(text);
    return check_report("test_heap_names");
}
