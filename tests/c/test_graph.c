/* The graph layer: CSR build and transpose, Semi-NCA dominators with
 * retained sizes, and the two-queue BFS, against naive algorithms written
 * here (data-flow dominator sets, removal-based retained sets, a plain BFS,
 * Shark's queue logic spelled out) on thousands of random graphs, plus
 * hostile shapes (10 M-long lists, a 10 M in-degree star), aborts and
 * allocation failures, which must free everything. */
#include "hp_dominators.h"
#include "hp_graph.h"
#include "hp_paths.h"
#include "countalloc.h"
#include "testkit.h"

#include <time.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TEST_LSAN 1
#endif
#ifdef TEST_LSAN
#include <sanitizer/lsan_interface.h>
#endif

/* ---- test graphs as adjacency lists ---- */

typedef struct tg {
    uint32_t n;
    uint32_t *off; /* n + 1 */
    uint32_t *adj;
} tg;

static void tg_free(tg *g)
{
    free(g->off);
    free(g->adj);
}

/* An edge source over a tg (also how the graph is built in every test). */
static int tg_source(void *ctx, uint32_t first, uint32_t count, hp_edge_sink *sink)
{
    const tg *g = ctx;
    uint32_t v, e;
    for (v = first; v < first + count; v++) {
        for (e = g->off[v]; e < g->off[v + 1]; e++)
            hp_edge_put(sink, g->adj[e]);
        hp_edge_end_vertex(sink);
    }
    return 0;
}

/* How many threads the graph layer uses in the tests that follow (both 1
 * and 2 are checked: the results must not differ). */
static int threads = 1;

static hp_code build(hp_graph *out, const tg *g, hp_error *err)
{
    hp_graph_source source;
    source.edges = tg_source;
    source.ctx = (void *)g;
    source.threads = threads;
    return hp_graph_build(out, g->n, &source, &countalloc, NULL, err);
}

static hp_code build_shape(hp_graph *out, const void *s, uint32_t n, const hp_checkpoint *cp, hp_error *err);

/* The graph has the edges of t, row by row. */
static void check_rows(const hp_graph *g, const tg *t)
{
    uint32_t v;
    CHECK_EQ_U64(g->m, t->off[t->n]);
    for (v = 0; v < t->n; v++) {
        uint32_t degree;
        const uint32_t *row = hp_graph_row(g, v, &degree);
        CHECK_EQ_U64(degree, t->off[v + 1] - t->off[v]);
        CHECK(memcmp(row, t->adj + t->off[v], (size_t)degree * 4) == 0);
    }
}

/* Random graphs with chains, forward and back edges, self-loops and
 * duplicate edges; `density` is the mean out-degree. */
static void tg_random(tg *g, uint32_t n, double density, uint32_t *seed)
{
    uint32_t v, cap = (uint32_t)(n * density * 2) + 16, len = 0;
    g->n = n;
    g->off = xmalloc(((size_t)n + 1) * 4);
    g->adj = xmalloc((size_t)cap * 4);
    for (v = 0; v < n; v++) {
        uint32_t degree = 0, k;
        double want = density * (xorshift(seed) % 2000) / 1000.0;
        degree = (uint32_t)want + ((xorshift(seed) % 1000) < (want - (uint32_t)want) * 1000);
        g->off[v] = len;
        for (k = 0; k < degree && len < cap; k++) {
            uint32_t r = xorshift(seed) % 100, t;
            if (r < 3)
                t = v; /* self-loop */
            else if (r < 8 && k > 0)
                t = g->adj[len - 1]; /* duplicate edge */
            else if (r < 40)
                t = v + 1 + xorshift(seed) % 3; /* chains */
            else if (r < 65)
                t = v + xorshift(seed) % (n - v); /* forward */
            else if (r < 80)
                t = xorshift(seed) % (v + 1); /* back */
            else
                t = xorshift(seed) % n;
            g->adj[len++] = t < n ? t : n - 1;
        }
    }
    g->off[n] = len;
}

/* Predecessor lists of g, by a plain counting sort. */
static tg tg_reverse(const tg *g)
{
    tg r;
    uint32_t v, e, *pos;
    r.n = g->n;
    r.off = xmalloc(((size_t)g->n + 1) * 4);
    r.adj = xmalloc((size_t)g->off[g->n] * 4 + 4);
    memset(r.off, 0, ((size_t)g->n + 1) * 4);
    for (e = 0; e < g->off[g->n]; e++)
        r.off[g->adj[e] + 1]++;
    for (v = 0; v < g->n; v++)
        r.off[v + 1] += r.off[v];
    pos = xmalloc(((size_t)g->n + 1) * 4);
    memcpy(pos, r.off, ((size_t)g->n + 1) * 4);
    for (v = 0; v < g->n; v++)
        for (e = g->off[v]; e < g->off[v + 1]; e++)
            r.adj[pos[g->adj[e]]++] = v;
    free(pos);
    return r;
}

/* t's edges split in two: about one in `one_in` moved to extra edges
 * (pairs sorted by source, as t's rows are: *pairs, *npairs), the others
 * kept in *base. */
static void tg_split(const tg *t, uint32_t one_in, uint32_t *seed, tg *base, uint32_t **pairs, size_t *npairs)
{
    uint32_t v, e, kept = 0;
    base->n = t->n;
    base->off = xmalloc(((size_t)t->n + 1) * 4);
    base->adj = xmalloc((size_t)t->off[t->n] * 4 + 4);
    *pairs = xmalloc((size_t)t->off[t->n] * 8 + 8);
    *npairs = 0;
    for (v = 0; v < t->n; v++) {
        base->off[v] = kept;
        for (e = t->off[v]; e < t->off[v + 1]; e++)
            if (xorshift(seed) % one_in == 0) {
                (*pairs)[2 * *npairs] = v;
                (*pairs)[2 * (*npairs)++ + 1] = t->adj[e];
            } else {
                base->adj[kept++] = t->adj[e];
            }
    }
    base->off[t->n] = kept;
}

static int by_value(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Random roots: duplicates and HP_NONE entries included. */
static size_t random_roots(uint32_t *roots, uint32_t n, uint32_t *seed)
{
    size_t k = n ? xorshift(seed) % 5 : xorshift(seed) % 2, i;
    for (i = 0; i < k; i++) {
        uint32_t r = xorshift(seed) % 10;
        roots[i] = r == 0 || n == 0 ? HP_NONE : r == 1 && i > 0 ? roots[i - 1] : xorshift(seed) % n;
    }
    return k;
}

/* Vertices reachable from roots, avoiding `skip` (HP_NONE: none). */
static void reach(const tg *g, const uint32_t *roots, size_t nroots, uint32_t skip, uint8_t *seen, uint32_t *queue)
{
    size_t head = 0, tail = 0, i;
    memset(seen, 0, g->n);
    for (i = 0; i < nroots; i++)
        if (roots[i] != HP_NONE && roots[i] != skip && !seen[roots[i]]) {
            seen[roots[i]] = 1;
            queue[tail++] = roots[i];
        }
    while (head < tail) {
        uint32_t v = queue[head++], e;
        for (e = g->off[v]; e < g->off[v + 1]; e++) {
            uint32_t t = g->adj[e];
            if (t != skip && !seen[t]) {
                seen[t] = 1;
                queue[tail++] = t;
            }
        }
    }
}

/* ---- the naive dominator algorithm ----
 * dom(v) = {v} ∪ ⋂ dom(p) over reachable predecessors p (the virtual root,
 * vertex n here, for roots), iterated to the fixed point over bit sets;
 * idom(v) is the strict dominator with one dominator fewer than v.
 * Retained set of v: what becomes unreachable when v is removed. */
typedef struct naive {
    uint32_t *idom, *count, reachable;
    uint64_t *retained, total;
} naive;

static int popcount_words(const uint64_t *w, size_t words)
{
    int c = 0;
    size_t i;
    for (i = 0; i < words; i++) {
        uint64_t x = w[i];
        while (x) {
            x &= x - 1;
            c++;
        }
    }
    return c;
}

static naive naive_dominators(const tg *g, const uint32_t *roots, size_t nroots, const uint64_t *sizes)
{
    uint32_t n = g->n, v, d, e;
    size_t words = (n + 1 + 63) / 64, i;
    uint64_t *dom = xmalloc((n + 1) * words * 8), *tmp = xmalloc(words * 8);
    uint8_t *seen = xmalloc(n + 1), *seen2 = xmalloc(n + 1), *is_root = calloc(n + 1, 1);
    uint32_t *queue = xmalloc(((size_t)n + 1) * 4);
    int *dom_size = xmalloc(((size_t)n + 1) * sizeof(int));
    tg preds = tg_reverse(g);
    naive out;
    int changed = 1;

    out.idom = xmalloc((size_t)n * 4 + 4);
    out.count = xmalloc((size_t)n * 4 + 4);
    out.retained = xmalloc((size_t)n * 8 + 8);
    out.total = 0;
    out.reachable = 0;
    for (i = 0; i < nroots; i++)
        if (roots[i] != HP_NONE)
            is_root[roots[i]] = 1;
    reach(g, roots, nroots, HP_NONE, seen, queue);
    memset(dom + (size_t)n * words, 0, words * 8);
    dom[(size_t)n * words + n / 64] |= (uint64_t)1 << (n % 64);
    for (v = 0; v < n; v++)
        memset(dom + (size_t)v * words, 0xFF, words * 8);
    while (changed) {
        changed = 0;
        for (v = 0; v < n; v++) {
            uint64_t *dv = dom + (size_t)v * words;
            if (!seen[v])
                continue;
            memset(tmp, 0xFF, words * 8);
            if (is_root[v])
                for (i = 0; i < words; i++)
                    tmp[i] &= dom[(size_t)n * words + i];
            for (e = preds.off[v]; e < preds.off[v + 1]; e++)
                if (seen[preds.adj[e]])
                    for (i = 0; i < words; i++)
                        tmp[i] &= dom[(size_t)preds.adj[e] * words + i];
            tmp[v / 64] |= (uint64_t)1 << (v % 64);
            if (memcmp(tmp, dv, words * 8)) {
                memcpy(dv, tmp, words * 8);
                changed = 1;
            }
        }
    }
    for (v = 0; v <= n; v++)
        dom_size[v] = popcount_words(dom + (size_t)v * words, words);
    for (v = 0; v < n; v++) {
        const uint64_t *dv = dom + (size_t)v * words;
        out.idom[v] = HP_NONE;
        out.count[v] = 0;
        out.retained[v] = 0;
        if (!seen[v])
            continue;
        out.reachable++;
        out.total += sizes ? sizes[v] : 0;
        for (d = 0; d <= n; d++)
            if (d != v && (dv[d / 64] >> (d % 64) & 1) && dom_size[d] == dom_size[v] - 1)
                out.idom[v] = d == n ? HP_DOM_VIRTUAL : d;
        /* Retained by removal. */
        reach(g, roots, nroots, v, seen2, queue);
        for (d = 0; d < n; d++)
            if (seen[d] && !seen2[d]) {
                out.count[v]++;
                out.retained[v] += sizes ? sizes[d] : 0;
            }
    }
    free(dom);
    free(tmp);
    free(seen);
    free(seen2);
    free(is_root);
    free(queue);
    free(dom_size);
    tg_free(&preds);
    return out;
}

static void naive_free(naive *nv)
{
    free(nv->idom);
    free(nv->count);
    free(nv->retained);
}

/* Which way hp_dominators_build runs in the tests that follow (both are
 * checked: lean toggles between tests), and with which extra edges. */
static int lean_mode;
static hp_extra_edges extra_edges;

static hp_code dominate(hp_dominators *d, const hp_graph *g, const uint32_t *roots, size_t nroots,
                        hp_size_source sizes, void *sizes_ctx, const hp_checkpoint *cp, hp_error *err)
{
    hp_dominators_spec spec;
    spec.roots = roots;
    spec.nroots = nroots;
    spec.sizes = sizes;
    spec.sizes_ctx = sizes_ctx;
    spec.lean = lean_mode;
    spec.threads = threads;
    spec.extra = extra_edges;
    return hp_dominators_build(d, g, &spec, cp, err);
}

static int sizes_from_array(void *ctx, uint32_t first, uint32_t count, uint64_t *out)
{
    memcpy(out, (const uint64_t *)ctx + first, (size_t)count * 8);
    return 0;
}

/* ---- CSR ---- */

static void test_build_and_transpose(void)
{
    uint32_t seed = 7, round;
    for (round = 0; round < 300; round++) {
        tg t, r;
        hp_graph g, tr, mapped;
        hp_error err;
        uint32_t n = round % 50 == 0 ? 0 : xorshift(&seed) % 300, v, k, e, *map, mapped_n = 0;
        tg_random(&t, n, (xorshift(&seed) % 40) / 10.0, &seed);
        CHECK(build(&g, &t, &err) == HP_OK);
        check_rows(&g, &t);
        CHECK_EQ_U64(hp_graph_bytes(&g) + (g.m == 0), countalloc_live); /* an empty edge array takes 1 byte */

        /* The transpose lists predecessors by increasing vertex: as tg_reverse. */
        r = tg_reverse(&t);
        CHECK(hp_graph_transpose(&tr, &g, NULL, NULL, 0, threads, NULL, &err) == HP_OK);
        CHECK_EQ_U64(tr.m, g.m);
        for (v = 0; v < n; v++) {
            uint32_t degree;
            const uint32_t *row = hp_graph_row(&tr, v, &degree);
            CHECK_EQ_U64(degree, r.off[v + 1] - r.off[v]);
            CHECK(memcmp(row, r.adj + r.off[v], (size_t)degree * 4) == 0);
        }

        /* Some edges given as extra ones: the same predecessors, g's first. */
        {
            tg base;
            hp_graph bg, btr;
            hp_extra_edges extra;
            uint32_t *pairs;
            tg_split(&t, 3, &seed, &base, &pairs, &extra.count);
            extra.pairs = pairs;
            CHECK(build(&bg, &base, &err) == HP_OK);
            CHECK(hp_graph_transpose(&btr, &bg, &extra, NULL, 0, threads, NULL, &err) == HP_OK);
            CHECK_EQ_U64(btr.m, g.m);
            for (v = 0; v < n; v++) {
                uint32_t degree, *sorted;
                const uint32_t *row = hp_graph_row(&btr, v, &degree);
                CHECK_EQ_U64(degree, r.off[v + 1] - r.off[v]);
                sorted = xmalloc((size_t)degree * 4 + 4);
                memcpy(sorted, row, (size_t)degree * 4);
                qsort(sorted, degree, 4, by_value);
                CHECK(memcmp(sorted, r.adj + r.off[v], (size_t)degree * 4) == 0);
                free(sorted);
            }
            hp_graph_free(&btr);
            if (n > 0) { /* an extra edge naming no vertex */
                uint32_t bad[2] = { 0, n };
                hp_extra_edges out = { bad, 1 };
                CHECK(hp_graph_transpose(&btr, &bg, &out, NULL, 0, threads, NULL, &err) == HP_E_USAGE);
                CHECK_EQ_U64(err.offset, n);
            }
            hp_graph_free(&btr);
            hp_graph_free(&bg);
            tg_free(&base);
            free(pairs);
        }

        /* Renumbered: drop about a third of the vertices, reverse the rest. */
        map = xmalloc((size_t)n * 4 + 4);
        for (v = 0; v < n; v++)
            map[v] = xorshift(&seed) % 3 == 0 ? HP_NONE : mapped_n++;
        for (v = 0; v < n; v++)
            if (map[v] != HP_NONE)
                map[v] = mapped_n - 1 - map[v];
        CHECK(hp_graph_transpose(&mapped, &g, NULL, map, mapped_n, threads, NULL, &err) == HP_OK);
        for (v = 0; v < n; v++) {
            uint32_t degree, want = 0, last = 0;
            const uint32_t *row;
            if (map[v] == HP_NONE)
                continue;
            row = hp_graph_row(&mapped, map[v], &degree);
            for (e = r.off[v], k = 0; e < r.off[v + 1]; e++)
                if (map[r.adj[e]] != HP_NONE) {
                    want++;
                    CHECK(k < degree && row[k] == map[r.adj[e]]);
                    k++;
                }
            CHECK_EQ_U64(degree, want);
            (void)last;
        }
        hp_graph_free(&mapped);
        hp_graph_free(&tr);
        hp_graph_free(&g);
        CHECK_EQ_U64(countalloc_live, 0);
        free(map);
        tg_free(&r);
        tg_free(&t);
    }
}

/* A source that looks targets up only when filling (counting puts 0) and
 * puts holes for missing ones: here before every fourth edge and at the
 * end of every third row. */
static int holed_source(void *ctx, uint32_t first, uint32_t count, hp_edge_sink *sink)
{
    const tg *g = ctx;
    uint32_t v, e;
    for (v = first; v < first + count; v++) {
        for (e = g->off[v]; e < g->off[v + 1]; e++) {
            if ((v * 31 + e) % 4 == 0)
                hp_edge_put(sink, HP_EDGE_HOLE);
            hp_edge_put(sink, hp_edge_counting(sink) ? 0 : g->adj[e]);
        }
        if (v % 3 == 0)
            hp_edge_put(sink, HP_EDGE_HOLE);
        hp_edge_end_vertex(sink);
    }
    return 0;
}

/* Holes leave the very graph the source would give without them. */
static void test_holes(void)
{
    uint32_t seed = 11, round;
    for (round = 0; round < 200; round++) {
        tg t;
        hp_graph g;
        hp_error err;
        hp_graph_source source;
        uint32_t n = round % 50 == 0 ? 0 : xorshift(&seed) % 300;
        tg_random(&t, n, (xorshift(&seed) % 40) / 10.0, &seed);
        source.edges = holed_source;
        source.ctx = &t;
        source.threads = threads;
        CHECK(hp_graph_build(&g, n, &source, &countalloc, NULL, &err) == HP_OK);
        check_rows(&g, &t);
        CHECK_EQ_U64(hp_graph_bytes(&g) + (g.m == 0), countalloc_live); /* the holes' room is given back */
        hp_graph_free(&g);
        CHECK_EQ_U64(countalloc_live, 0);
        tg_free(&t);
    }
}

/* Edge sources that break the contract. */
typedef struct bad_source {
    int mode, calls;
} bad_source;

static int bad_edges(void *ctx, uint32_t first, uint32_t count, hp_edge_sink *sink)
{
    bad_source *b = ctx;
    uint32_t v;
    b->calls++;
    if (b->mode == 3)
        return 1;
    for (v = first; v < first + count; v++) {
        hp_edge_put(sink, b->mode == 0 && v == 5 ? 10 : (v + 1) % 10);
        if (b->mode == 1 && b->calls > 1 && v == 4)
            hp_edge_put(sink, 0); /* one more edge in the filling pass */
        if (!(b->mode == 2 && v == 6))
            hp_edge_end_vertex(sink);
    }
    return 0;
}

static void test_build_errors(void)
{
    static const struct { int mode; hp_code code; uint64_t vertex; } cases[] = {
        { 0, HP_E_USAGE, 5 }, { 1, HP_E_USAGE, 4 }, { 2, HP_E_USAGE, 9 }, { 3, HP_E_ABORTED, 0 },
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bad_source b = { cases[i].mode, 0 };
        hp_graph_source source = { bad_edges, NULL, 0 };
        hp_graph g;
        hp_error err;
        char msg[200];
        source.ctx = &b;
        source.threads = threads;
        CHECK(hp_graph_build(&g, 10, &source, &countalloc, NULL, &err) == cases[i].code);
        CHECK_EQ_U64(err.code, cases[i].code);
        if (cases[i].code != HP_E_ABORTED) {
            CHECK_EQ_U64(err.offset, cases[i].vertex);
            CHECK_EQ_U64(err.tag, HP_TAG_VERTEX);
        }
        hp_error_format(&err, msg, sizeof msg);
        CHECK(strstr(msg, cases[i].code == HP_E_ABORTED ? "stopped" : "at vertex") != NULL);
        CHECK_EQ_U64(countalloc_live, 0);
        hp_graph_free(&g);
    }
    {
        hp_error err;
        char msg[200];
        hp_graph_stop(&err, HP_E_NOMEM);
        hp_error_format(&err, msg, sizeof msg);
        CHECK(strcmp(msg, "out of memory") == 0);
    }
    {
        hp_graph g;
        hp_error err;
        bad_source b = { 0, 0 };
        hp_graph_source source = { bad_edges, NULL, 1 };
        source.ctx = &b;
        CHECK(hp_graph_build(&g, HP_MAX_VERTICES + 1u, &source, &countalloc, NULL, &err) == HP_E_USAGE);
        CHECK_EQ_U64(b.calls, 0);
    }
}

/* ---- dominators against the naive algorithm ---- */

/* What the random graphs exercised: reachable vertices, those with a
 * dominator other than the virtual root, the deepest dominator chain. */
static uint64_t seen_reachable, seen_dominated, seen_depth;

static void check_against_naive(const tg *t, const uint32_t *roots, size_t nroots, const uint64_t *sizes)
{
    hp_graph g;
    hp_dominators d;
    hp_error err;
    naive nv = naive_dominators(t, roots, nroots, sizes);
    uint32_t v;
    int bad = 0;

    for (v = 0; v < t->n; v++) {
        uint64_t depth = 0;
        uint32_t x;
        seen_reachable += nv.idom[v] != HP_NONE;
        seen_dominated += nv.idom[v] != HP_NONE && nv.idom[v] != HP_DOM_VIRTUAL;
        for (x = v; x < t->n && nv.idom[x] < t->n; x = nv.idom[x])
            depth++;
        if (depth > seen_depth)
            seen_depth = depth;
    }
    CHECK(build(&g, t, &err) == HP_OK);
    for (lean_mode = 0; lean_mode < 2; lean_mode++) {
        CHECK(dominate(&d, &g, roots, nroots, sizes ? sizes_from_array : NULL, (void *)sizes, NULL, &err) ==
              HP_OK);
        CHECK_EQ_U64(d.reachable, nv.reachable);
        CHECK_EQ_U64(d.total, nv.total);
        CHECK((d.retained != NULL) == (sizes != NULL));
        for (v = 0; v < t->n; v++)
            if (d.idom[v] != nv.idom[v] || d.count[v] != nv.count[v] ||
                (sizes && d.retained[v] != nv.retained[v]))
                bad++;
        CHECK_EQ_U64(bad, 0);
        hp_dominators_free(&d);
    }
    lean_mode = 0;
    hp_graph_free(&g);
    /* The same flow graph with some of its edges given as extra ones. */
    {
        tg base;
        uint32_t *pairs, seed = t->n + (uint32_t)nroots;
        tg_split(t, 2, &seed, &base, &pairs, &extra_edges.count);
        extra_edges.pairs = pairs;
        CHECK(build(&g, &base, &err) == HP_OK);
        CHECK(dominate(&d, &g, roots, nroots, sizes ? sizes_from_array : NULL, (void *)sizes, NULL, &err) == HP_OK);
        CHECK_EQ_U64(d.reachable, nv.reachable);
        for (v = 0; v < t->n; v++)
            if (d.idom[v] != nv.idom[v] || d.count[v] != nv.count[v] || (sizes && d.retained[v] != nv.retained[v]))
                bad++;
        CHECK_EQ_U64(bad, 0);
        hp_dominators_free(&d);
        if (extra_edges.count > 1) { /* out of order */
            uint32_t from = pairs[0];
            pairs[0] = pairs[2 * extra_edges.count - 2] + 1;
            if (pairs[0] < t->n) {
                CHECK(dominate(&d, &g, roots, nroots, NULL, NULL, NULL, &err) == HP_E_USAGE);
                CHECK_EQ_U64(err.offset, 1);
            }
            pairs[0] = from;
        }
        memset(&extra_edges, 0, sizeof extra_edges);
        hp_graph_free(&g);
        tg_free(&base);
        free(pairs);
    }
    CHECK_EQ_U64(countalloc_live, 0);
    naive_free(&nv);
}

static void test_dominators_random(void)
{
    static const struct { uint32_t graphs, max_n; } tiers[] = { { 3000, 40 }, { 400, 300 }, { 20, 2000 } };
    uint32_t seed = 2024, tier, i;
    for (tier = 0; tier < sizeof tiers / sizeof tiers[0]; tier++)
        for (i = 0; i < tiers[tier].graphs; i++) {
            static const double densities[] = { 0, 0.5, 1, 1.5, 2, 3, 5 };
            uint32_t n = xorshift(&seed) % (tiers[tier].max_n + 1), roots[8], v;
            size_t nroots = random_roots(roots, n, &seed);
            uint64_t *sizes = xmalloc((size_t)n * 8 + 8);
            tg t;
            tg_random(&t, n, densities[xorshift(&seed) % 7], &seed);
            for (v = 0; v < n; v++)
                sizes[v] = xorshift(&seed) % 1000;
            check_against_naive(&t, roots, nroots, i % 4 == 3 ? NULL : sizes);
            free(sizes);
            tg_free(&t);
        }
    printf("  %llu reachable vertices, %llu dominated by one of them, dominator chains up to %llu long\n",
           (unsigned long long)seen_reachable, (unsigned long long)seen_dominated, (unsigned long long)seen_depth);
    CHECK(seen_dominated * 4 > seen_reachable && seen_depth >= 10);
    seen_reachable = seen_dominated = seen_depth = 0;
}

/* Hand-made shapes with known answers. */
static void test_dominators_small(void)
{
    /* Unreachable island 4<->5, self-loops, a cycle 1->2->3->1, roots
     * given twice and as HP_NONE. */
    static const uint32_t off[] = { 0, 2, 4, 5, 7, 8, 9 };
    static const uint32_t adj[] = { 1, 0, 2, 2, 3, 1, 3, 5, 4 };
    uint32_t roots[] = { 0, HP_NONE, 0 };
    uint64_t sizes[] = { 10, 20, 30, 40, 50, 60 };
    tg t = { 6, (uint32_t *)off, (uint32_t *)adj };
    hp_graph g;
    hp_dominators d;
    hp_error err;
    CHECK(build(&g, &t, &err) == HP_OK);
    CHECK(dominate(&d, &g, roots, 3, sizes_from_array, sizes, NULL, &err) == HP_OK);
    CHECK_EQ_U64(d.idom[0], HP_DOM_VIRTUAL);
    CHECK_EQ_U64(d.idom[1], 0);
    CHECK_EQ_U64(d.idom[2], 1);
    CHECK_EQ_U64(d.idom[3], 2);
    CHECK_EQ_U64(d.idom[4], HP_NONE);
    CHECK_EQ_U64(d.idom[5], HP_NONE);
    CHECK_EQ_U64(d.retained[0], 100);
    CHECK_EQ_U64(d.retained[2], 70);
    CHECK_EQ_U64(d.retained[4], 0);
    CHECK_EQ_U64(d.count[0], 4);
    CHECK_EQ_U64(d.count[5], 0);
    CHECK_EQ_U64(d.reachable, 4);
    CHECK_EQ_U64(d.total, 100);
    hp_dominators_free(&d);

    /* No roots at all: nothing is reachable. */
    CHECK(dominate(&d, &g, roots, 0, sizes_from_array, sizes, NULL, &err) == HP_OK);
    CHECK_EQ_U64(d.reachable, 0);
    CHECK_EQ_U64(d.idom[0], HP_NONE);
    CHECK_EQ_U64(d.retained[0], 0);
    hp_dominators_free(&d);
    roots[1] = 6;
    CHECK(dominate(&d, &g, roots, 3, NULL, NULL, NULL, &err) == HP_E_USAGE);
    CHECK_EQ_U64(err.offset, 1);
    hp_dominators_free(&d);
    hp_graph_free(&g);

    /* The empty graph. */
    t.n = 0;
    roots[0] = HP_NONE;
    CHECK(build(&g, &t, &err) == HP_OK);
    CHECK(dominate(&d, &g, roots, 1, sizes_from_array, sizes, NULL, &err) == HP_OK);
    CHECK_EQ_U64(d.reachable, 0);
    hp_dominators_free(&d);
    hp_graph_free(&g);
    CHECK_EQ_U64(countalloc_live, 0);
}

static void test_top_values(void)
{
    uint32_t seed = 99, round;
    for (round = 0; round < 200; round++) {
        uint32_t n = xorshift(&seed) % 200, v, *keep = xmalloc((size_t)n * 4 + 4), *out, *want;
        uint64_t *values = xmalloc((size_t)n * 8 + 8);
        size_t k = xorshift(&seed) % (n + 5), got, nwant = 0, i, j;
        for (v = 0; v < n; v++) {
            values[v] = xorshift(&seed) % 20; /* many ties */
            keep[v] = xorshift(&seed) % 5 == 0 ? HP_NONE : 0;
        }
        out = xmalloc(k * 4 + 4);
        want = xmalloc((size_t)n * 4 + 4);
        /* Insertion sort of the kept vertices: larger first, then lower id. */
        for (v = 0; v < n; v++) {
            if (keep[v] == HP_NONE)
                continue;
            for (j = nwant; j > 0 && values[want[j - 1]] < values[v]; j--)
                want[j] = want[j - 1];
            want[j] = v;
            nwant++;
        }
        got = hp_top_values(values, keep, n, k, out);
        CHECK_EQ_U64(got, k < nwant ? k : nwant);
        for (i = 0; i < got; i++)
            CHECK_EQ_U64(out[i], want[i]);
        free(keep);
        free(values);
        free(out);
        free(want);
    }
}

/* ---- hostile shapes, generated on the fly ---- */

enum { LIST, DLIST, STAR, RING, HELD_LIST };

typedef struct shape {
    int kind;
    uint32_t n;
} shape;

/* LIST: v -> v+1.  DLIST: v -> v+1, v -> v-1.  RING: v -> v+1 mod n.
 * STAR: 0 -> 1..n-2, each of them -> n-1 (the hub).
 * HELD_LIST: a linked list whose items an array holds too (a LinkedList and
 * an ArrayList of the same objects): the head 0, nodes 1..k (node j -> its
 * item k + j first, then node j + 1), items k+1..2k, the array 2k + 1 -> all
 * items; n = 2k + 2.  Searched from the head, the DFS reaches each item
 * through the list, deep below the virtual root it hangs from, so a naive
 * NCA walk would climb the whole list for each item: quadratic time. */
static int shape_source(void *ctx, uint32_t first, uint32_t count, hp_edge_sink *sink)
{
    const shape *s = ctx;
    uint32_t v, n = s->n;
    for (v = first; v < first + count; v++) {
        switch (s->kind) {
        case LIST:
        case DLIST:
            if (v + 1 < n)
                hp_edge_put(sink, v + 1);
            if (s->kind == DLIST && v > 0)
                hp_edge_put(sink, v - 1);
            break;
        case RING:
            hp_edge_put(sink, v + 1 < n ? v + 1 : 0);
            break;
        case HELD_LIST: {
            uint32_t k = (n - 2) / 2, t;
            if (v == 0) {
                hp_edge_put(sink, 1);
            } else if (v <= k) {
                hp_edge_put(sink, k + v);
                if (v < k)
                    hp_edge_put(sink, v + 1);
            } else if (v == n - 1) {
                for (t = k + 1; t <= 2 * k; t++)
                    hp_edge_put(sink, t);
            }
            break;
        }
        case STAR:
            if (v == 0) {
                uint32_t t;
                for (t = 1; t + 1 < n; t++)
                    hp_edge_put(sink, t);
            } else if (v + 1 < n) {
                hp_edge_put(sink, n - 1);
            }
            break;
        }
        hp_edge_end_vertex(sink);
    }
    return 0;
}

static hp_code build_shape(hp_graph *out, const void *s, uint32_t n, const hp_checkpoint *cp, hp_error *err)
{
    hp_graph_source source;
    source.edges = shape_source;
    source.ctx = (void *)s;
    source.threads = threads;
    return hp_graph_build(out, n, &source, &countalloc, cp, err);
}

static int sizes_mod7(void *ctx, uint32_t first, uint32_t count, uint64_t *out)
{
    uint32_t i;
    (void)ctx;
    for (i = 0; i < count; i++)
        out[i] = (first + i) % 7 + 1;
    return 0;
}

static double seconds(void) { return (double)clock() / CLOCKS_PER_SEC; }

static void test_hostile(uint32_t big)
{
    shape s;
    hp_graph g;
    hp_dominators d;
    hp_error err;
    uint32_t v, root, roots[2], *all;
    uint64_t suffix;
    int bad;
    double t0;

    /* A singly, then doubly linked list: each node dominates the rest. */
    for (s.kind = LIST; s.kind <= DLIST; s.kind++) {
        s.n = big;
        root = 0;
        t0 = seconds();
        CHECK(build_shape(&g, &s, s.n, NULL, &err) == HP_OK);
        CHECK(dominate(&d, &g, &root, 1, sizes_mod7, NULL, NULL, &err) == HP_OK);
        printf("  %s list of %u: %.2f s\n", s.kind == LIST ? "singly" : "doubly", big, seconds() - t0);
        bad = 0;
        suffix = 0;
        for (v = s.n; v-- > 0;) {
            suffix += v % 7 + 1;
            bad += d.idom[v] != (v ? v - 1 : HP_DOM_VIRTUAL) || d.count[v] != s.n - v || d.retained[v] != suffix;
        }
        CHECK_EQ_U64(bad, 0);
        hp_dominators_free(&d);
        if (s.kind == DLIST) {
            /* Roots at both ends: two disjoint ways to everything. */
            roots[0] = 0;
            roots[1] = s.n - 1;
            CHECK(dominate(&d, &g, roots, 2, NULL, NULL, NULL, &err) == HP_OK);
            bad = 0;
            for (v = 0; v < s.n; v++)
                bad += d.idom[v] != HP_DOM_VIRTUAL || d.count[v] != 1;
            CHECK_EQ_U64(bad, 0);
            hp_dominators_free(&d);
        }
        hp_graph_free(&g);
    }

    /* A ring: 0 -> 1 -> ... -> n-1 -> 0. */
    s.kind = RING;
    s.n = big / 4;
    root = 5;
    CHECK(build_shape(&g, &s, s.n, NULL, &err) == HP_OK);
    CHECK(dominate(&d, &g, &root, 1, NULL, NULL, NULL, &err) == HP_OK);
    bad = 0;
    for (v = 0; v < s.n; v++)
        bad += d.idom[v] != (v == 5 ? HP_DOM_VIRTUAL : v ? v - 1 : s.n - 1);
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(d.count[5], s.n);
    hp_dominators_free(&d);
    hp_graph_free(&g);

    /* A list whose items an array holds too: every item hangs from the
     * virtual root, each node dominates the rest of the list. */
    s.kind = HELD_LIST;
    s.n = big / 2 * 2 + 2;
    roots[0] = 0;
    roots[1] = s.n - 1;
    t0 = seconds();
    CHECK(build_shape(&g, &s, s.n, NULL, &err) == HP_OK);
    CHECK(dominate(&d, &g, roots, 2, NULL, NULL, NULL, &err) == HP_OK);
    printf("  list of %u held by an array too: %.2f s\n", (s.n - 2) / 2, seconds() - t0);
    bad = 0;
    for (v = 1; v <= (s.n - 2) / 2; v++)
        bad += d.idom[v] != v - 1 || d.count[v] != (s.n - 2) / 2 - v + 1 || d.idom[v + (s.n - 2) / 2] != HP_DOM_VIRTUAL;
    CHECK_EQ_U64(bad, 0);
    hp_dominators_free(&d);
    hp_graph_free(&g);

    /* A star: one vertex of out-degree n-2, one of in-degree n-2. */
    s.kind = STAR;
    s.n = big;
    root = 0;
    t0 = seconds();
    CHECK(build_shape(&g, &s, s.n, NULL, &err) == HP_OK);
    CHECK(dominate(&d, &g, &root, 1, sizes_mod7, NULL, NULL, &err) == HP_OK);
    printf("  star of %u: %.2f s\n", big, seconds() - t0);
    bad = 0;
    for (v = 1; v < s.n; v++)
        bad += d.idom[v] != 0 || d.count[v] != 1;
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(d.count[0], s.n);
    hp_dominators_free(&d);
    /* Every spoke a root (given twice): the hub has no dominator but the virtual root. */
    all = xmalloc((size_t)s.n * 8);
    for (v = 0; v + 2 < s.n; v++)
        all[v] = all[v + s.n - 2] = v + 1;
    CHECK(dominate(&d, &g, all, 2 * ((size_t)s.n - 2), NULL, NULL, NULL, &err) == HP_OK);
    CHECK_EQ_U64(d.idom[s.n - 1], HP_DOM_VIRTUAL);
    CHECK_EQ_U64(d.idom[0], HP_NONE);
    CHECK_EQ_U64(d.reachable, s.n - 1);
    hp_dominators_free(&d);
    free(all);
    hp_graph_free(&g);
    CHECK_EQ_U64(countalloc_live, 0);
}

/* ---- BFS ---- */

/* Edge classes for the BFS tests: a hash of (vertex, position). */
typedef struct kinds {
    uint32_t low_percent, ignore_percent, calls;
} kinds;

static int classify_hash(void *ctx, uint32_t v, uint32_t index, uint32_t target)
{
    kinds *k = ctx;
    uint32_t h = (v * 2654435761u) ^ (index * 40503u) ^ (target * 97u);
    h ^= h >> 13;
    h = (h * 0x5bd1e995u) % 100;
    k->calls++;
    return h < k->low_percent ? HP_EDGE_LOW : h < k->low_percent + k->ignore_percent ? HP_EDGE_IGNORE : HP_EDGE_NORMAL;
}

/* Shark's PrioritizingShortestPathFinder as written there: two queues, sets
 * of what each holds, a parked node removed from its queue when promoted,
 * and everything visited last once the normal queue ran dry. */
typedef struct ref_node {
    uint32_t v, parent, edge, removed;
} ref_node;

typedef struct ref_bfs {
    uint8_t *in_normal, *in_last, *done, *low, *seen;
    uint32_t *parent, *edge;
    ref_node *normal, *last;
    size_t nh, nt, lh, lt;
    int visiting_last;
} ref_bfs;

static void ref_enqueue(ref_bfs *r, uint32_t v, uint32_t parent, uint32_t edge, int low_priority)
{
    ref_node node = { v, parent, edge, 0 };
    int visit_last = r->visiting_last || low_priority;
    if (r->done[v] || r->in_normal[v])
        return;
    if (r->in_last[v]) {
        size_t i;
        if (visit_last)
            return;
        for (i = r->lh; i < r->lt; i++)
            if (r->last[i].v == v && !r->last[i].removed)
                r->last[i].removed = 1;
        r->in_last[v] = 0;
    } else if (visit_last) {
        r->last[r->lt++] = node;
        r->in_last[v] = 1;
        return;
    }
    r->normal[r->nt++] = node;
    r->in_normal[v] = 1;
}

static void ref_search(ref_bfs *r, const tg *g, const hp_bfs_spec *spec, kinds *k)
{
    uint32_t n = g->n, v, e, left = 0;
    uint8_t *target = calloc(n + 1, 1);
    size_t i;
    memset(r, 0, sizeof *r);
    r->in_normal = calloc(n + 1, 1);
    r->in_last = calloc(n + 1, 1);
    r->done = calloc(n + 1, 1);
    r->low = calloc(n + 1, 1);
    r->seen = calloc(n + 1, 1);
    r->parent = xmalloc((size_t)n * 4 + 4);
    r->edge = xmalloc((size_t)n * 4 + 4);
    r->normal = xmalloc(((size_t)n + spec->nroots + 1) * sizeof(ref_node));
    r->last = xmalloc(((size_t)n + spec->nroots + 1) * sizeof(ref_node));
    for (i = 0; i < spec->ntargets; i++)
        if (spec->targets[i] != HP_NONE && !target[spec->targets[i]]) {
            target[spec->targets[i]] = 1;
            left++;
        }
    for (i = 0; i < spec->nroots; i++) {
        int kind = spec->roots[i] == HP_NONE || !spec->classify ? HP_EDGE_NORMAL
                                                                 : classify_hash(k, HP_MARK, (uint32_t)i, spec->roots[i]);
        if (spec->roots[i] != HP_NONE && (kind == HP_EDGE_NORMAL || kind == HP_EDGE_LOW))
            ref_enqueue(r, spec->roots[i], HP_MARK, (uint32_t)i, kind == HP_EDGE_LOW);
    }
    for (;;) {
        ref_node node;
        if (!r->visiting_last && r->nh < r->nt) {
            node = r->normal[r->nh++];
            r->in_normal[node.v] = 0;
        } else {
            while (r->lh < r->lt && r->last[r->lh].removed)
                r->lh++;
            if (r->lh == r->lt)
                break;
            r->visiting_last = 1;
            node = r->last[r->lh++];
            r->in_last[node.v] = 0;
        }
        v = node.v;
        r->done[v] = 1;
        r->parent[v] = node.parent;
        r->edge[v] = node.edge;
        r->low[v] = (uint8_t)r->visiting_last;
        if (target[v] && --left == 0)
            break;
        if (spec->leaves && hp_bit(spec->leaves, v))
            continue;
        for (e = g->off[v]; e < g->off[v + 1]; e++) {
            int kind = spec->classify ? classify_hash(k, v, e - g->off[v], g->adj[e]) : HP_EDGE_NORMAL;
            if (kind == HP_EDGE_NORMAL || kind == HP_EDGE_LOW)
                ref_enqueue(r, g->adj[e], v, e - g->off[v], kind == HP_EDGE_LOW);
        }
    }
    for (v = 0; v < n; v++)
        r->seen[v] = r->done[v] || r->in_normal[v] || r->in_last[v];
    free(target);
}

static void ref_free(ref_bfs *r)
{
    free(r->in_normal);
    free(r->in_last);
    free(r->done);
    free(r->low);
    free(r->seen);
    free(r->parent);
    free(r->edge);
    free(r->normal);
    free(r->last);
}

/* Every path the search reports is a real one: root first, each hop an
 * edge of the previous vertex's row at the reported position. */
static int path_is_real(const hp_bfs *b, const hp_graph *g, const hp_bfs_spec *spec, uint32_t target, uint32_t *len)
{
    uint32_t *vs = xmalloc((size_t)b->n * 4 + 4), *es = xmalloc((size_t)b->n * 4 + 4), i;
    int ok;
    *len = hp_bfs_path(b, target, vs, es, b->n);
    ok = *len > 0 && vs[*len - 1] == target && es[0] < spec->nroots && spec->roots[es[0]] == vs[0];
    for (i = 1; ok && i < *len; i++) {
        uint32_t degree;
        const uint32_t *row = hp_graph_row(g, vs[i - 1], &degree);
        ok = es[i] < degree && row[es[i]] == vs[i];
    }
    free(vs);
    free(es);
    return ok;
}

static void test_bfs_random(void)
{
    uint32_t seed = 31337, round;
    for (round = 0; round < 1500; round++) {
        uint32_t n = xorshift(&seed) % (round < 1200 ? 60 : 800), roots[8], v, targets[4], *dist, *queue;
        size_t nroots = random_roots(roots, n, &seed), i, head = 0, tail = 0;
        kinds k = { 0, 0, 0 };
        uint64_t *leaves = NULL;
        hp_bfs_spec spec;
        hp_graph g;
        hp_bfs b;
        hp_error err;
        ref_bfs r;
        int mode = (int)(round % 4), bad = 0;
        tg t;

        tg_random(&t, n, (xorshift(&seed) % 40) / 10.0, &seed);
        CHECK(build(&g, &t, &err) == HP_OK);
        memset(&spec, 0, sizeof spec);
        spec.roots = roots;
        spec.nroots = nroots;
        if (mode >= 1) {
            /* Classes of edges and roots, leaves. */
            k.low_percent = 5 + xorshift(&seed) % 30;
            k.ignore_percent = xorshift(&seed) % 15;
            spec.classify = classify_hash;
            spec.classify_ctx = &k;
            leaves = hp_bits_new(&hp_default_alloc, n);
            for (v = 0; v < n; v++)
                if (xorshift(&seed) % 12 == 0)
                    hp_bit_set(leaves, v);
            spec.leaves = leaves;
        }
        if (mode == 3 && n > 0) {
            for (i = 0; i < 4; i++)
                targets[i] = i == 3 ? HP_NONE : xorshift(&seed) % n;
            spec.targets = targets;
            spec.ntargets = 4;
        }
        CHECK(hp_bfs_run(&b, &g, &spec, NULL, &err) == HP_OK);
        ref_search(&r, &t, &spec, &k);
        for (v = 0; v < n; v++) {
            if (hp_bit(b.visited, v) != r.seen[v]) {
                bad++;
                continue;
            }
            if (!r.done[v])
                continue;
            if (b.parent[v] != r.parent[v] || b.edge[v] != r.edge[v] || hp_bit(b.low, v) != r.low[v])
                bad++;
        }
        CHECK_EQ_U64(bad, 0);

        if (mode == 0) {
            /* All NORMAL: path lengths are plain BFS distances. */
            dist = xmalloc((size_t)n * 4 + 4);
            queue = xmalloc((size_t)n * 4 + 4);
            memset(dist, 0xFF, (size_t)n * 4);
            for (i = 0; i < nroots; i++)
                if (roots[i] != HP_NONE && dist[roots[i]] == HP_NONE) {
                    dist[roots[i]] = 0;
                    queue[tail++] = roots[i];
                }
            while (head < tail) {
                uint32_t u = queue[head++], e;
                for (e = t.off[u]; e < t.off[u + 1]; e++)
                    if (dist[t.adj[e]] == HP_NONE) {
                        dist[t.adj[e]] = dist[u] + 1;
                        queue[tail++] = t.adj[e];
                    }
            }
            for (v = 0; v < n; v++) {
                uint32_t len = 0;
                if (dist[v] == HP_NONE) {
                    bad += hp_bit(b.visited, v);
                    continue;
                }
                bad += !path_is_real(&b, &g, &spec, v, &len) || len != dist[v] + 1;
            }
            CHECK_EQ_U64(bad, 0);
            CHECK_EQ_U64(b.visited_count, tail);
            free(dist);
            free(queue);
        } else {
            for (v = 0; v < n; v++) {
                uint32_t len;
                if (r.done[v])
                    bad += !path_is_real(&b, &g, &spec, v, &len);
            }
            CHECK_EQ_U64(bad, 0);
        }
        if (mode == 2) {
            /* The same search twice gives the same answer. */
            hp_bfs b2;
            CHECK(hp_bfs_run(&b2, &g, &spec, NULL, &err) == HP_OK);
            CHECK(memcmp(b2.visited, b.visited, (size_t)hp_bits_bytes(n)) == 0);
            CHECK(memcmp(b2.low, b.low, (size_t)hp_bits_bytes(n)) == 0);
            for (v = 0; v < n; v++)
                if (hp_bit(b.visited, v) && (b2.parent[v] != b.parent[v] || b2.edge[v] != b.edge[v]))
                    bad++;
            CHECK_EQ_U64(bad, 0);
            hp_bfs_free(&b2);
        }
        if (mode == 1) {
            /* Asking only for the edges of `special` vertices gives the same
             * search when the others' edges are all NORMAL anyway: here,
             * mark every vertex special except those without LOW/IGNORE edges. */
            uint64_t *special = hp_bits_new(&hp_default_alloc, n);
            hp_bfs b2;
            for (v = 0; v < n; v++) {
                uint32_t e;
                for (e = t.off[v]; e < t.off[v + 1]; e++)
                    if (classify_hash(&k, v, e - t.off[v], t.adj[e]) != HP_EDGE_NORMAL)
                        hp_bit_set(special, v);
            }
            spec.special = special;
            CHECK(hp_bfs_run(&b2, &g, &spec, NULL, &err) == HP_OK);
            CHECK_EQ_U64(b2.visited_count, b.visited_count);
            for (v = 0; v < n; v++)
                if (hp_bit(b.visited, v) &&
                    (b2.parent[v] != b.parent[v] || b2.edge[v] != b.edge[v] || hp_bit(b2.low, v) != hp_bit(b.low, v)))
                    bad++;
            CHECK_EQ_U64(bad, 0);
            hp_bfs_free(&b2);
            free(special);
        }
        ref_free(&r);
        hp_bfs_free(&b);
        hp_graph_free(&g);
        CHECK_EQ_U64(countalloc_live, 0);
        free(leaves);
        tg_free(&t);
    }
}

/* A fixed classification for the scenario tests: edges listed as LOW or IGNORE. */
typedef struct listed {
    const uint32_t (*edges)[3]; /* { v, index, kind } */
    size_t count;
} listed;

static int classify_listed(void *ctx, uint32_t v, uint32_t index, uint32_t target)
{
    const listed *l = ctx;
    size_t i;
    (void)target;
    for (i = 0; i < l->count; i++)
        if (l->edges[i][0] == v && l->edges[i][1] == index)
            return (int)l->edges[i][2];
    return HP_EDGE_NORMAL;
}

static void test_bfs_scenarios(void)
{
    /* 0 -> 1 -> 2 -> 3 -> 4, 0 -> 4 (LOW), 0 -> 5 (LOW) -> 6,
     * 0 -> 7 (LOW) -> 8, 1 -> 7, 8 -> 9 (IGNORE), 2 -> 10 -> 11. */
    static const uint32_t off[] = { 0, 4, 6, 8, 9, 9, 10, 10, 11, 12, 12, 13, 13 };
    static const uint32_t adj[] = { 1, 4, 5, 7, 2, 7, 3, 10, 4, 6, 8, 9, 11 };
    /* Root 1 (7) is LOW, root 2 (7 again) NORMAL but IGNORE in all_of_0_low. */
    static const uint32_t special_edges[][3] = {
        { 0, 1, HP_EDGE_LOW }, { 0, 2, HP_EDGE_LOW }, { 0, 3, HP_EDGE_LOW }, { 8, 0, HP_EDGE_IGNORE },
        { HP_MARK, 1, HP_EDGE_LOW },
    };
    static const uint32_t all_of_0_low[][3] = {
        { 0, 0, HP_EDGE_LOW }, { 0, 1, HP_EDGE_LOW }, { 0, 2, HP_EDGE_LOW }, { 0, 3, HP_EDGE_LOW },
        { HP_MARK, 1, HP_EDGE_LOW }, { HP_MARK, 2, HP_EDGE_IGNORE },
    };
    listed l = { special_edges, 5 }, l0 = { all_of_0_low, 6 };
    tg t = { 12, (uint32_t *)off, (uint32_t *)adj };
    uint32_t roots[] = { 0, 7, 7 }, vs[16], es[16], target;
    uint64_t leaves = 0;
    hp_bfs_spec spec;
    hp_graph g;
    hp_bfs b;
    hp_error err;

    CHECK(build(&g, &t, &err) == HP_OK);
    memset(&spec, 0, sizeof spec);
    spec.roots = roots;
    spec.nroots = 1;
    spec.classify = classify_listed;
    spec.classify_ctx = &l;
    CHECK(hp_bfs_run(&b, &g, &spec, NULL, &err) == HP_OK);
    /* A longer NORMAL path beats a LOW edge: 0 1 2 3 4. */
    CHECK_EQ_U64(hp_bfs_path(&b, 4, vs, es, 16), 5);
    CHECK(vs[3] == 3 && es[4] == 0 && !hp_bit(b.low, 4));
    /* The only path crosses a LOW edge: 0 5 6, marked LOW. */
    CHECK_EQ_U64(hp_bfs_path(&b, 6, vs, es, 16), 3);
    CHECK(vs[1] == 5 && es[1] == 2 && hp_bit(b.low, 5) && hp_bit(b.low, 6));
    /* Promoted: 7 was parked from 0 (LOW), then reached from 1 (NORMAL). */
    CHECK_EQ_U64(hp_bfs_path(&b, 8, vs, es, 16), 4);
    CHECK(vs[1] == 1 && vs[2] == 7 && es[2] == 1 && !hp_bit(b.low, 7) && !hp_bit(b.low, 8));
    /* IGNORE is never traversed. */
    CHECK(!hp_bit(b.visited, 9));
    CHECK_EQ_U64(hp_bfs_path(&b, 9, vs, es, 16), 0);
    CHECK_EQ_U64(b.visited_count, 11);
    CHECK(b.complete);
    /* A cap too small: the length, nothing written. */
    vs[0] = 77;
    CHECK_EQ_U64(hp_bfs_path(&b, 4, vs, es, 2), 5);
    CHECK_EQ_U64(vs[0], 77);
    hp_bfs_free(&b);

    /* Roots: 7 given LOW then NORMAL is promoted to root number 2. */
    spec.nroots = 3;
    CHECK(hp_bfs_run(&b, &g, &spec, NULL, &err) == HP_OK);
    CHECK_EQ_U64(hp_bfs_path(&b, 7, vs, es, 16), 1);
    CHECK(es[0] == 2 && !hp_bit(b.low, 7));
    hp_bfs_free(&b);
    /* ... and stays parked (LOW) as a LOW root only, searched once the
     * normal queue ran dry: before 0's successors, all LOW here. */
    spec.classify_ctx = &l0;
    CHECK(hp_bfs_run(&b, &g, &spec, NULL, &err) == HP_OK);
    CHECK_EQ_U64(hp_bfs_path(&b, 8, vs, es, 16), 2);
    CHECK(vs[0] == 7 && es[0] == 1 && hp_bit(b.low, 8));
    /* 1 is reached only through LOW edges of 0, so 2 is found in the second phase. */
    CHECK(hp_bit(b.low, 1) && hp_bit(b.low, 2));
    hp_bfs_free(&b);
    spec.classify_ctx = &l;

    /* Leaves: 2 is reached but not expanded, so 3 and 10 are not reached
     * and 4 only through its LOW edge. */
    hp_bit_set(&leaves, 2);
    spec.nroots = 1;
    spec.leaves = &leaves;
    CHECK(hp_bfs_run(&b, &g, &spec, NULL, &err) == HP_OK);
    CHECK(hp_bit(b.visited, 2) && !hp_bit(b.visited, 3) && !hp_bit(b.visited, 10));
    CHECK_EQ_U64(hp_bfs_path(&b, 4, vs, es, 16), 2);
    CHECK(hp_bit(b.low, 4));
    hp_bfs_free(&b);
    spec.leaves = NULL;

    /* Early stop: once 2 leaves its queue, nothing further is expanded. */
    target = 2;
    spec.targets = &target;
    spec.ntargets = 1;
    CHECK(hp_bfs_run(&b, &g, &spec, NULL, &err) == HP_OK);
    CHECK(!b.complete && b.targets_found == 1);
    CHECK(hp_bit(b.visited, 2) && !hp_bit(b.visited, 3) && !hp_bit(b.visited, 10));
    CHECK_EQ_U64(hp_bfs_path(&b, 2, vs, es, 16), 3);
    hp_bfs_free(&b);
    /* A target found only through LOW waits for the second phase. */
    target = 6;
    CHECK(hp_bfs_run(&b, &g, &spec, NULL, &err) == HP_OK);
    CHECK(hp_bit(b.visited, 11) && b.targets_found == 1);
    CHECK_EQ_U64(hp_bfs_path(&b, 6, vs, es, 16), 3);
    hp_bfs_free(&b);
    /* Out-of-range targets and roots are refused, naming their index. */
    target = 12;
    CHECK(hp_bfs_run(&b, &g, &spec, NULL, &err) == HP_E_USAGE);
    CHECK_EQ_U64(err.offset, 0);
    hp_bfs_free(&b);
    spec.targets = NULL;
    roots[1] = 40;
    spec.nroots = 2;
    CHECK(hp_bfs_run(&b, &g, &spec, NULL, &err) == HP_E_USAGE);
    CHECK_EQ_U64(err.offset, 1);
    hp_bfs_free(&b);
    hp_graph_free(&g);
    CHECK_EQ_U64(countalloc_live, 0);
}

/* ---- aborts and allocation failures free everything ---- */

typedef struct stopper {
    uint32_t calls, stop_at;
} stopper;

static int stop_at(void *ctx)
{
    stopper *s = ctx;
    return ++s->calls == s->stop_at;
}

static hp_code run_everything(const shape *s, const hp_checkpoint *cp)
{
    hp_graph g, tr;
    hp_dominators d;
    hp_bfs b;
    hp_bfs_spec spec;
    hp_error err;
    uint32_t root = 0, target = s->n - 1;
    hp_code rc;
    memset(&spec, 0, sizeof spec);
    spec.roots = &root;
    spec.nroots = 1;
    spec.targets = &target;
    spec.ntargets = 1;
    if ((rc = build_shape(&g, s, s->n, cp, &err)) != HP_OK)
        return rc;
    rc = hp_graph_transpose(&tr, &g, NULL, NULL, 0, threads, cp, &err);
    hp_graph_free(&tr);
    if (rc == HP_OK) {
        lean_mode = !lean_mode;
        rc = dominate(&d, &g, &root, 1, sizes_mod7, NULL, cp, &err);
        hp_dominators_free(&d);
    }
    if (rc == HP_OK) {
        rc = hp_bfs_run(&b, &g, &spec, cp, &err);
        hp_bfs_free(&b);
    }
    hp_graph_free(&g);
    return rc;
}

static void test_abort_and_nomem(void)
{
    shape shapes[] = { { DLIST, 1000000 }, { STAR, 20000 }, { LIST, 20000 } };
    size_t i;
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        uint32_t k, aborts = 0, failures = 0;
        hp_code rc;
        /* Stop at the k-th checkpoint, for every k until none is left. */
        for (k = 1;; k++) {
            stopper st = { 0, k };
            hp_checkpoint cp = { stop_at, &st };
            rc = run_everything(&shapes[i], &cp);
            CHECK_EQ_U64(countalloc_live, 0);
            if (rc != HP_E_ABORTED)
                break;
            aborts++;
        }
        CHECK_EQ_U64(rc, HP_OK);
        /* Fail the k-th allocation, for every k until none is left. */
        if (shapes[i].n <= 20000) {
            for (countalloc_fail_call = 0;; countalloc_fail_call++) {
                countalloc_calls = 0;
                rc = run_everything(&shapes[i], NULL);
                CHECK_EQ_U64(countalloc_live, 0);
                if (rc != HP_E_NOMEM)
                    break;
                failures++;
            }
            countalloc_fail_call = (size_t)-1;
            CHECK_EQ_U64(rc, HP_OK);
            CHECK(failures >= 10);
        }
        printf("  shape %d of %u: stopped at %u checkpoints, %u allocation failures, all freed\n", shapes[i].kind,
               shapes[i].n, aborts, failures);
        CHECK(shapes[i].n < 1000000 || aborts >= 3);
    }
}

/* The length of the hostile lists and stars. */
#ifndef TEST_BIG
#define TEST_BIG 10000000
#endif

static void run(const char *name, void (*test)(void))
{
    double t0 = seconds();
    test();
    printf("  %s: %.1f s\n", name, seconds() - t0);
    fflush(stdout);
}

static void test_hostile_two_threads(void) { test_hostile(TEST_BIG / 5); }

static void test_hostile_big(void)
{
    test_hostile(TEST_BIG);
    lean_mode = 1;
    test_hostile(TEST_BIG / 5);
    lean_mode = 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    run("build and transpose", test_build_and_transpose);
    run("build errors", test_build_errors);
    run("dominators, small", test_dominators_small);
    run("holes", test_holes);
    run("dominators, random", test_dominators_random);
    run("top values", test_top_values);
    run("hostile shapes", test_hostile_big);
    run("BFS scenarios", test_bfs_scenarios);
    run("BFS, random", test_bfs_random);
    run("aborts and failures", test_abort_and_nomem);
    /* Again with two threads where the graph layer splits work. */
    threads = 2;
    run("build and transpose, 2 threads", test_build_and_transpose);
    run("holes, 2 threads", test_holes);
    run("build errors, 2 threads", test_build_errors);
    run("dominators, random, 2 threads", test_dominators_random);
    run("hostile shapes, 2 threads", test_hostile_two_threads);
    run("aborts and failures, 2 threads", test_abort_and_nomem);
#ifdef TEST_LSAN
    CHECK(__lsan_do_recoverable_leak_check() == 0);
#endif
    return check_report("test_graph");
}
