/* Tests of the waste kinds (hp_waste.h) on every dump of the shared data:
 *  - duplicate_strings' copies add up to hp_duplicate_strings' groups, and
 *    the collection kinds to hp_coll_waste's empty instances;
 *  - every item is of its kind (arrays re-read here: all zero, all null,
 *    at least half null, a trailing zero run), lists largest waste first;
 *  - the total counts each object once: at most the kinds' sum, at least
 *    their largest;
 *  - an interrupt stops the walk with HP_E_ABORTED and frees everything
 *    (ASan sees leaks). */
#include "testkit.h"

#include "hp_coll.h"
#include "hp_heap.h"
#include "hp_strdup.h"
#include "hp_waste.h"

static int stop_now(void *ctx)
{
    (void)ctx;
    return 1;
}

/* Counts an array's zero elements (primitive) or nulls (object), and its trailing zero elements. */
static void zeros_of(const hp_heap *h, uint32_t i, uint64_t *zeros, uint64_t *trailing, uint32_t *length)
{
    hp_object o;
    uint32_t size, k, j;
    hp_heap_object(h, i, &o);
    size = (uint32_t)hp_type_size(o.elem_type, hp_heap_id_size(h));
    *zeros = *trailing = 0;
    *length = o.length;
    for (k = 0; k < o.length; k++) {
        for (j = 0; j < size && o.data[(uint64_t)k * size + j] == 0; j++)
            ;
        *zeros += j == size;
        *trailing = j == size ? *trailing + 1 : 0;
    }
}

static void check_items(const hp_heap *h, const hp_waste *w)
{
    int kind;
    size_t k;
    for (kind = 0; kind < HP_WASTE_KINDS; kind++) {
        const hp_waste_list *l = &w->kinds[kind];
        uint64_t sum = 0;
        for (k = 0; k < l->n; k++) {
            uint32_t i = l->items[k].index, length;
            uint64_t zeros, trailing;
            sum += l->items[k].wasted;
            CHECK(k == 0 || l->items[k - 1].wasted >= l->items[k].wasted);
            if (kind == HP_WASTE_ZERO_ARRAYS || kind == HP_WASTE_EMPTY_ARRAYS || kind == HP_WASTE_SPARSE_ARRAYS ||
                kind == HP_WASTE_TRAILING_ZERO_ARRAYS) {
                zeros_of(h, i, &zeros, &trailing, &length);
                CHECK(length >= 1);
                if (kind == HP_WASTE_ZERO_ARRAYS || kind == HP_WASTE_EMPTY_ARRAYS) {
                    CHECK_EQ_U64(zeros, length);
                    CHECK_EQ_U64(l->items[k].wasted, hp_heap_shallow_size(h, i));
                } else if (kind == HP_WASTE_SPARSE_ARRAYS) {
                    CHECK(2 * zeros >= length);
                } else {
                    CHECK(zeros < length && 2 * trailing >= length && trailing >= HP_WASTE_TRAILING_MIN);
                }
            }
        }
        CHECK_EQ_U64(sum, l->wasted);
    }
}

static void test_shared_dumps(void)
{
    size_t n_inv = 0, k;
    inv_entry *inv = read_inventory(&n_inv);
    CHECK(inv != NULL && n_inv > 10);
    for (k = 0; k < n_inv; k++) {
        const inv_entry *e = &inv[k];
        char rel[4352];
        uint8_t *buf;
        size_t len = 0, n_dups = 0, d;
        hp_heap_options opt;
        hp_heap *h = NULL;
        hp_coll *c = NULL;
        hp_error err;
        hp_waste w;
        hp_dup_string *dups = NULL;
        hp_coll_class_waste *rows;
        uint64_t dup_wasted = 0, empty = 0, sum = 0, most = 0;
        uint32_t ord;
        int kind;
        if (strstr(e->file, ".bz2") || e->subs[HP_SUB_INSTANCE_DUMP] == 0)
            continue;
        snprintf(rel, sizeof rel, "hprof/%s", e->file);
        buf = load_dump(rel, &len);
        CHECK(buf != NULL);
        if (!buf)
            continue;
        memset(&opt, 0, sizeof opt);
        CHECK(hp_heap_build(buf, len, &opt, &h, &err) == HP_OK);
        CHECK(hp_coll_new(h, NULL, NULL, NULL, &c, &err) == HP_OK);
        CHECK(hp_waste_find(h, c, NULL, 1024, NULL, &w, NULL, NULL, &err) == HP_OK);
        check_items(h, &w);
        CHECK(hp_duplicate_strings(h, NULL, NULL, 2, &dups, &n_dups, NULL, NULL, &err) == HP_OK);
        for (d = 0; d < n_dups; d++)
            dup_wasted += dups[d].wasted;
        free(dups);
        CHECK_EQ_U64(w.kinds[HP_WASTE_DUPLICATE_STRINGS].wasted, dup_wasted);
        rows = calloc(hp_heap_class_count(h) + 1, sizeof *rows);
        CHECK(rows && hp_coll_waste(c, NULL, rows, NULL, NULL, &err) == HP_OK);
        for (ord = 0; rows && ord < hp_heap_class_count(h); ord++)
            empty += rows[ord].empty;
        free(rows);
        CHECK_EQ_U64(w.kinds[HP_WASTE_EMPTY_COLLECTIONS].n, empty);
        for (kind = 0; kind < HP_WASTE_KINDS; kind++)
            if (kind != HP_WASTE_DIRECT_BUFFERS) {
                sum += w.kinds[kind].wasted;
                most = w.kinds[kind].wasted > most ? w.kinds[kind].wasted : most;
            }
        CHECK(w.total <= sum && w.total >= most);
        hp_waste_free(&w, NULL);
        CHECK(hp_waste_find(h, c, NULL, 1024, NULL, &w, stop_now, NULL, &err) == HP_E_ABORTED);
        hp_waste_free(&w, NULL);
        hp_coll_free(c);
        hp_heap_free(h);
        free(buf);
    }
    free(inv);
}

int main(void)
{
    test_shared_dumps();
    return check_report("test_waste");
}
