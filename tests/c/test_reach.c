/* hp_reach over dumps shaped as chosen graphs: edges, roots, paths with
 * rules, dominators and retained sizes against a naive model (a vertex d
 * dominates v when v is reachable but not once d is removed), hostile
 * shapes (cycles, self references, islands, roots and fields naming
 * missing objects, a long list), the VisualVM semantics on the same
 * graphs, interruption and every allocation failing in turn. */
#include "countalloc.h"
#include "reachkit.h"

#include "hp_heap.h"
#include "hp_histogram.h"
#include "hp_reach.h"
#include "hp_reach_live.h"

#ifndef TEST_LIST
#define TEST_LIST 10000000
#endif

typedef struct fixture {
    bb dump;
    hp_heap *heap;
    hp_reach *reach;
} fixture;

static const hp_alloc counting = { countalloc_malloc, countalloc_realloc, countalloc_free };

static int fixture_open(fixture *f, const rk_graph *g, int semantics)
{
    hp_heap_options opt;
    hp_error err;
    hp_code rc;
    memset(&opt, 0, sizeof opt);
    rk_dump(&f->dump, g);
    f->reach = NULL;
    rc = hp_heap_build(f->dump.d, f->dump.len, &opt, &f->heap, &err);
    if (rc != HP_OK) {
        show_error("heap", rc, &err);
        return 0;
    }
    rc = hp_reach_build(f->heap, semantics, NULL, NULL, &f->reach, &err);
    if (rc == HP_OK)
        rc = hp_reach_dominators(f->reach, 1, NULL, &err);
    if (rc != HP_OK) {
        show_error("reach", rc, &err);
        return 0;
    }
    return 1;
}

static void fixture_close(fixture *f)
{
    hp_reach_free(f->reach);
    hp_heap_free(f->heap);
    free(f->dump.d);
}

/* ---- the naive model over the graph as specified ---- */

/* Vertices: nodes 0..n-1, the weak reference n, the array n + 1. */
typedef struct model {
    int n;               /* model vertices */
    int *adj, *deg;      /* up to 2 (node) or nitems (array) successors each */
    int width;
    int *roots, nroots;
    uint32_t *index;     /* model vertex -> heap index */
} model;

static int model_vertex(const rk_graph *g, int node) { return node == RK_ROOT_WEAK ? g->n : node == RK_ROOT_ARRAY ? g->n + 1 : node; }

/* `skip_other`: leave the `other` fields out (a rule ignoring them). */
static void model_init(model *m, const rk_graph *g, const hp_heap *h, int skip_other)
{
    int k;
    m->n = g->n + 2;
    m->width = g->nitems > 2 ? g->nitems : 2;
    m->adj = xmalloc((size_t)m->n * (size_t)m->width * sizeof(int));
    m->deg = calloc((size_t)m->n, sizeof(int));
    m->roots = xmalloc((size_t)(g->nroots + 1) * sizeof(int));
    m->index = xmalloc((size_t)m->n * 4);
    m->nroots = 0;
    for (k = 0; k < g->n; k++) {
        m->index[k] = hp_heap_find(h, rk_node_id(k));
        if (g->next[k] >= 0)
            m->adj[k * m->width + m->deg[k]++] = g->next[k];
        if (g->other[k] >= 0 && !skip_other)
            m->adj[k * m->width + m->deg[k]++] = g->other[k];
    }
    m->index[g->n] = hp_heap_find(h, RK_WEAK);
    m->index[g->n + 1] = hp_heap_find(h, RK_ARRAY);
    for (k = 0; k < g->nitems; k++)
        if (g->items[k] >= 0)
            m->adj[(g->n + 1) * m->width + m->deg[g->n + 1]++] = g->items[k];
    for (k = 0; k < g->nroots; k++)
        if (g->roots[k].node != RK_MISSING)
            m->roots[m->nroots++] = model_vertex(g, g->roots[k].node);
}

static void model_free(model *m)
{
    free(m->adj);
    free(m->deg);
    free(m->roots);
    free(m->index);
}

/* BFS distances from the roots avoiding `removed` (-1: none); -1 unreached. */
static void model_bfs(const model *m, int removed, int *dist)
{
    int *queue = xmalloc((size_t)m->n * sizeof(int)), head = 0, tail = 0, k;
    for (k = 0; k < m->n; k++)
        dist[k] = -1;
    for (k = 0; k < m->nroots; k++)
        if (m->roots[k] != removed && dist[m->roots[k]] < 0) {
            dist[m->roots[k]] = 0;
            queue[tail++] = m->roots[k];
        }
    while (head < tail) {
        int u = queue[head++], e;
        for (e = 0; e < m->deg[u]; e++) {
            int v = m->adj[u * m->width + e];
            if (v != removed && dist[v] < 0) {
                dist[v] = dist[u] + 1;
                queue[tail++] = v;
            }
        }
    }
    free(queue);
}

/* dom[d * n + v]: d dominates v (d != v). */
static char *model_dominance(const model *m)
{
    char *dom = calloc((size_t)m->n * (size_t)m->n, 1);
    int *all = xmalloc((size_t)m->n * sizeof(int)), *without = xmalloc((size_t)m->n * sizeof(int)), d, v;
    model_bfs(m, -1, all);
    for (d = 0; d < m->n; d++) {
        model_bfs(m, d, without);
        for (v = 0; v < m->n; v++)
            dom[d * m->n + v] = (char)(v != d && all[v] >= 0 && all[d] >= 0 && without[v] < 0);
    }
    free(all);
    free(without);
    return dom;
}

/* ---- checks ---- */

static int vertex_of(const model *m, uint32_t index)
{
    int k;
    for (k = 0; k < m->n; k++)
        if (m->index[k] == index)
            return k;
    return -1;
}

/* Dominators, retained sizes and counts, by class too, under hprofkit. */
static void check_dominators(const fixture *f, const model *m)
{
    char *dom = model_dominance(m);
    int *dist = xmalloc((size_t)m->n * sizeof(int)), v, d;
    const uint64_t *by_class;
    uint64_t node_class_total = 0;
    uint32_t node_class = hp_heap_find_class_id(f->heap, RK_C_NODE);
    hp_error err;
    model_bfs(m, -1, dist);
    for (v = 0; v < m->n; v++) {
        uint32_t vi = m->index[v], idom = HP_NONE, idom_count = 0xFFFFFFFFu, count = 0;
        uint64_t size = 0;
        int under_node = 0;
        if (dist[v] < 0) {
            CHECK_EQ_U64(hp_reach_retained(f->reach, vi), 0);
            CHECK_EQ_U64(hp_reach_retained_count(f->reach, vi), 0);
            continue;
        }
        for (d = 0; d < m->n; d++) {
            if (dom[v * m->n + d]) { /* v dominates d */
                size += hp_heap_shallow_size(f->heap, m->index[d]);
                count++;
            }
            if (dom[d * m->n + v]) { /* d dominates v: the closest dominates the fewest */
                uint32_t c = 0;
                int w;
                for (w = 0; w < m->n; w++)
                    c += (uint32_t)dom[d * m->n + w];
                if (c < idom_count) {
                    idom_count = c;
                    idom = m->index[d];
                }
                under_node |= d < m->n - 2;
            }
        }
        CHECK_EQ_U64(hp_reach_retained(f->reach, vi), size + hp_heap_shallow_size(f->heap, vi));
        CHECK_EQ_U64(hp_reach_retained_count(f->reach, vi), count + 1);
        CHECK_EQ_U64(hp_reach_idom(f->reach, vi), idom);
        if (v < m->n - 2 && !under_node)
            node_class_total += size + hp_heap_shallow_size(f->heap, vi);
    }
    CHECK(hp_reach_class_retained(f->reach, NULL, &by_class, &err) == HP_OK);
    CHECK_EQ_U64(by_class[node_class], node_class_total);
    {
        uint32_t top[4];
        size_t k, got = hp_reach_top(f->reach, 4, top);
        for (k = 1; k < got; k++)
            CHECK(hp_reach_retained(f->reach, top[k - 1]) >= hp_reach_retained(f->reach, top[k]));
    }
    free(dom);
    free(dist);
}

/* Every path is a shortest one, made of the graph's edges, named as the
 * fields and elements that hold them.  `low_expected`: with a LOW rule on
 * `other`, which vertices only an `other` reaches (NULL: no rule). */
static void check_paths(const fixture *f, const model *m, const model *without_other, hp_reach_matcher *rules,
                        int low)
{
    int *dist = xmalloc((size_t)m->n * sizeof(int)), *plain = NULL, v;
    uint32_t vertices[4096], edges[4096];
    hp_bfs b;
    hp_error err;
    model_bfs(without_other && !low ? without_other : m, -1, dist);
    if (low) {
        plain = xmalloc((size_t)m->n * sizeof(int));
        model_bfs(without_other, -1, plain);
    }
    CHECK(hp_reach_paths(f->reach, rules, NULL, 0, 0, NULL, &b, &err) == HP_OK);
    for (v = 0; v < m->n; v++) {
        uint32_t len = hp_bfs_path(&b, m->index[v], vertices, edges, 4096), k;
        if (dist[v] < 0) {
            CHECK_EQ_U64(len, 0);
            continue;
        }
        if (low) {
            CHECK_EQ_U64(hp_bit(b.low, m->index[v]), plain[v] < 0);
            if (plain[v] >= 0)
                CHECK_EQ_U64(len, (uint32_t)plain[v] + 1);
        } else {
            CHECK_EQ_U64(len, (uint32_t)dist[v] + 1);
        }
        if (len > 4096)
            continue;
        for (k = 1; k < len; k++) {
            hp_ref ref;
            int u = vertex_of(m, vertices[k - 1]), t = vertex_of(m, vertices[k]);
            CHECK(hp_reach_edge(f->reach, vertices[k - 1], edges[k], &ref));
            CHECK_EQ_U64(ref.target, vertices[k]);
            if (u >= 0 && u < m->n - 2)
                CHECK(ref.kind == HP_REF_FIELD && ref.slot <= 1);
            if (u == m->n - 1)
                CHECK(ref.kind == HP_REF_ELEMENT);
            CHECK(t >= 0);
        }
    }
    hp_bfs_free(&b);
    free(dist);
    free(plain);
}

/* ---- graphs ---- */

static void test_random_graphs(void)
{
    uint32_t seed = 12345;
    int round;
    for (round = 0; round < 300; round++) {
        rk_spec s;
        fixture f;
        model m, plain;
        hp_reach_rule rule;
        hp_reach_matcher *rules;
        hp_error err;
        rk_random_spec(&s, &seed);
        if (!fixture_open(&f, &s.g, HP_REACH_HPROFKIT)) {
            CHECK(0);
            continue;
        }
        model_init(&m, &s.g, f.heap, 0);
        model_init(&plain, &s.g, f.heap, 1);
        check_dominators(&f, &m);
        check_paths(&f, &m, NULL, NULL, 0);
        memset(&rule, 0, sizeof rule);
        rule.pattern = HP_RULE_FIELD;
        rule.cls = hp_heap_find_class_id(f.heap, RK_C_NODE);
        rule.name = "other";
        rule.name_len = 5;
        rule.edge = HP_EDGE_IGNORE;
        CHECK(hp_reach_matcher_new(f.reach, &rule, 1, NULL, &rules, &err) == HP_OK);
        check_paths(&f, &m, &plain, rules, 0);
        hp_reach_matcher_free(rules);
        rule.edge = HP_EDGE_LOW;
        CHECK(hp_reach_matcher_new(f.reach, &rule, 1, NULL, &rules, &err) == HP_OK);
        check_paths(&f, &m, &plain, rules, 1);
        hp_reach_matcher_free(rules);
        model_free(&m);
        model_free(&plain);
        fixture_close(&f);
        /* VisualVM's semantics on the same graph: it runs, and a vertex
         * retains at least itself when the search reached it. */
        if (fixture_open(&f, &s.g, HP_REACH_VISUALVM)) {
            uint32_t v;
            for (v = 0; v < hp_heap_object_count(f.heap); v++)
                CHECK(hp_reach_retained(f.reach, v) >= -1);
            fixture_close(&f);
        } else {
            CHECK(0);
        }
    }
}

/* A weak reference's referent is not strong: only weakly reachable, it is
 * unreachable, has no path and retains nothing; under visualvm it has no
 * path either and VisualVM's retained size 0. */
static void test_weak_referent(void)
{
    static const int next[2] = { RK_NULL, RK_NULL }, other[2] = { RK_NULL, RK_NULL };
    static const rk_root roots[2] = { { HP_SUB_ROOT_JNI_GLOBAL, RK_ROOT_WEAK, 0 }, { HP_SUB_ROOT_JNI_GLOBAL, 1, 0 } };
    rk_graph g = { 2, next, other, 0, NULL, 0, roots, 2 };
    int semantics;
    for (semantics = 0; semantics < 2; semantics++) {
        fixture f;
        hp_bfs b;
        hp_error err;
        uint32_t node0, weak;
        if (!fixture_open(&f, &g, semantics)) {
            CHECK(0);
            continue;
        }
        node0 = hp_heap_find(f.heap, rk_node_id(0));
        weak = hp_heap_find(f.heap, RK_WEAK);
        CHECK(hp_reach_paths(f.reach, NULL, NULL, 0, 0, NULL, &b, &err) == HP_OK);
        CHECK(!hp_bit(b.visited, node0));
        CHECK(hp_bit(b.visited, weak));
        hp_bfs_free(&b);
        CHECK_EQ_U64(hp_reach_retained(f.reach, node0), 0);
        CHECK_EQ_U64(hp_reach_retained(f.reach, weak), hp_heap_shallow_size(f.heap, weak));
        fixture_close(&f);
    }
}

/* The live set follows every reference (a weak referent too) and each
 * object's class, whatever the semantics; garbage holding live objects
 * stays garbage.  The class histogram counts what it is asked to. */
static void test_live_set(void)
{
    /* node 0: the weak reference's referent; 1 -> 2 rooted; 3 -> 1, unrooted */
    static const int next[4] = { RK_NULL, 2, RK_NULL, 1 }, other[4] = { RK_NULL, RK_NULL, RK_NULL, RK_NULL };
    static const rk_root roots[2] = { { HP_SUB_ROOT_JNI_GLOBAL, RK_ROOT_WEAK, 0 }, { HP_SUB_ROOT_JNI_GLOBAL, 1, 0 } };
    rk_graph g = { 4, next, other, 0, NULL, 0, roots, 2 };
    int semantics, k;
    for (semantics = 0; semantics < 2; semantics++) {
        fixture f;
        hp_error err;
        const uint64_t *live;
        uint64_t counts[64 + HP_HISTOGRAM_TYPE_ROWS], bytes[64 + HP_HISTOGRAM_TYPE_ROWS];
        uint32_t node_class, nclasses;
        if (!fixture_open(&f, &g, semantics)) {
            CHECK(0);
            continue;
        }
        CHECK(hp_reach_live_bits(f.reach) == NULL);
        CHECK(hp_reach_live(f.reach, NULL, &err) == HP_OK && hp_reach_live(f.reach, NULL, &err) == HP_OK);
        live = hp_reach_live_bits(f.reach);
        for (k = 0; k < 4; k++)
            CHECK(hp_bit(live, hp_heap_find(f.heap, rk_node_id(k))) == (k != 3));
        CHECK(hp_bit(live, hp_heap_find(f.heap, RK_WEAK)));
        /* Node's class object through its instances, Object's as the superclass of a live class */
        CHECK(hp_bit(live, hp_heap_find(f.heap, RK_C_NODE)) && hp_bit(live, hp_heap_find(f.heap, RK_C_OBJECT)));
        nclasses = hp_heap_class_count(f.heap);
        node_class = hp_heap_find_class_id(f.heap, RK_C_NODE);
        CHECK(nclasses <= 64);
        for (k = 0; k < 3; k++) {
            const uint64_t *keep = k == 0 ? NULL : live;
            uint64_t garbage[8];
            size_t w;
            if (k == 2) { /* the complement: what no root reaches */
                for (w = 0; w < 8; w++)
                    garbage[w] = w < hp_bits_bytes(hp_heap_object_count(f.heap)) / 8 ? ~live[w] : 0;
                keep = garbage;
            }
            memset(counts, 0, sizeof counts);
            memset(bytes, 0, sizeof bytes);
            CHECK(hp_heap_class_histogram(f.heap, keep, NULL, 1, counts, bytes, NULL, NULL, &err) == HP_OK);
            CHECK_EQ_U64(counts[node_class], k == 0 ? 4 : k == 1 ? 3 : 1);
            CHECK_EQ_U64(bytes[node_class], counts[node_class] * hp_heap_shallow_size(f.heap, hp_heap_find(f.heap,
                                                                                            rk_node_id(3))));
        }
        {
            uint32_t v, marked = 0;
            for (v = 0; v < hp_heap_object_count(f.heap); v++)
                marked += (uint32_t)hp_bit(live, v);
            CHECK_EQ_U64(hp_reach_live_count(f.reach), marked);
        }
        fixture_close(&f);
    }
}

/* Thread objects come first among the roots; a thread_local rule ignores
 * (or takes last) the Java-frame roots of that thread only; a root_class
 * rule the roots of that class.  Missing roots are skipped. */
static void test_roots_and_rules(void)
{
    static const int next[4] = { RK_NULL, RK_NULL, 3, RK_NULL }, other[4] = { RK_NULL, RK_NULL, RK_NULL, RK_NULL };
    static const rk_root roots[5] = { { HP_SUB_ROOT_JAVA_FRAME, 1, 7 }, { HP_SUB_ROOT_JNI_GLOBAL, RK_MISSING, 0 },
                                      { HP_SUB_ROOT_JAVA_FRAME, 2, 8 }, { HP_SUB_ROOT_THREAD_OBJECT, 0, 7 },
                                      { HP_SUB_ROOT_JNI_GLOBAL, RK_ROOT_ARRAY, 0 } };
    static const int items[1] = { 1 };
    rk_graph g = { 4, next, other, RK_NULL, items, 1, roots, 5 };
    hp_reach_rule rule;
    hp_reach_matcher *m;
    fixture f;
    hp_bfs b;
    hp_error err;
    uint32_t n1, n3, arr;
    if (!fixture_open(&f, &g, HP_REACH_HPROFKIT)) {
        CHECK(0);
        return;
    }
    n1 = hp_heap_find(f.heap, rk_node_id(1));
    n3 = hp_heap_find(f.heap, rk_node_id(3));
    arr = hp_heap_find(f.heap, RK_ARRAY);
    CHECK_EQ_U64(hp_reach_root_count(f.reach), 4);
    CHECK_EQ_U64(hp_reach_roots(f.reach)[0], hp_heap_find(f.heap, rk_node_id(0)));
    CHECK_EQ_U64(hp_reach_root_record(f.reach, 0), 3);
    CHECK_EQ_U64(hp_reach_thread_object(f.reach, 7), hp_heap_find(f.heap, rk_node_id(0)));
    CHECK_EQ_U64(hp_reach_thread_object(f.reach, 8), HP_NONE);
    memset(&rule, 0, sizeof rule);
    rule.pattern = HP_RULE_THREAD;
    rule.thread_serial = 7;
    rule.edge = HP_EDGE_LOW;
    CHECK(hp_reach_matcher_new(f.reach, &rule, 1, NULL, &m, &err) == HP_OK);
    CHECK(hp_reach_paths(f.reach, m, &n1, 1, HP_PATHS_LEAVES, NULL, &b, &err) == HP_OK);
    {
        uint32_t vertices[4], edges[4];
        CHECK_EQ_U64(hp_bfs_path(&b, n1, vertices, edges, 4), 2); /* through the array, not the frame */
        CHECK_EQ_U64(vertices[0], arr);
        CHECK(!hp_bit(b.low, n1));
        /* Roots: the thread, the array (JNI global), then the frames. */
        CHECK_EQ_U64(hp_reach_matcher_rule(m, HP_MARK, 2), 0);  /* the frame of thread 7 */
        CHECK(hp_reach_matcher_rule(m, HP_MARK, 3) == -1); /* thread 8's */
    }
    hp_bfs_free(&b);
    hp_reach_matcher_free(m);
    rule.pattern = HP_RULE_ROOT_CLASS;
    rule.cls = hp_heap_find_class_id(f.heap, RK_C_NODE);
    rule.edge = HP_EDGE_IGNORE;
    CHECK(hp_reach_matcher_new(f.reach, &rule, 1, NULL, &m, &err) == HP_OK);
    CHECK(hp_reach_paths(f.reach, m, NULL, 0, 0, NULL, &b, &err) == HP_OK);
    CHECK(!hp_bit(b.visited, n3)); /* node 2 (its only holder) is rooted by a frame only */
    CHECK(hp_bit(b.visited, n1)); /* through the array */
    hp_bfs_free(&b);
    hp_reach_matcher_free(m);
    rule.cls = 999;
    CHECK(hp_reach_matcher_new(f.reach, &rule, 1, NULL, &m, &err) == HP_E_USAGE);
    fixture_close(&f);
}

static int stop_now(void *ctx)
{
    (void)ctx;
    return 1;
}

/* Stops at the checkpoint call number *ctx (counting down). */
static int stop_later(void *ctx)
{
    int *left = ctx;
    return --*left <= 0;
}

/* A list of n nodes held by one root, each linked back to the one before. */
static void list_graph(rk_graph *g, int n, int *next, int *other)
{
    static const rk_root roots[1] = { { HP_SUB_ROOT_JNI_GLOBAL, 0, 0 } };
    int k;
    for (k = 0; k < n; k++) {
        next[k] = k + 1 < n ? k + 1 : RK_NULL;
        other[k] = k > 0 ? k - 1 : RK_NULL; /* back links: a cycle at every step */
    }
    g->n = n;
    g->next = next;
    g->other = other;
    g->referent = RK_NULL;
    g->items = NULL;
    g->nitems = 0;
    g->roots = roots;
    g->nroots = 1;
}

/* Long enough for the checkpoints to be called: stopping at the first,
 * second, fourth... of them fails cleanly, with nothing left allocated. */
static void test_interrupts(void)
{
    int n = 1000000, semantics;
    int *next = xmalloc((size_t)n * sizeof(int)), *other = xmalloc((size_t)n * sizeof(int));
    rk_graph g;
    list_graph(&g, n, next, other);
    for (semantics = 0; semantics < 2; semantics++) {
        fixture f;
        hp_error err;
        hp_bfs b;
        int stop_at, stopped = 0;
        if (!fixture_open(&f, &g, semantics)) {
            CHECK(0);
            continue;
        }
        for (stop_at = 1; stop_at < 1024 && !stopped; stop_at *= 2) {
            int left = stop_at;
            hp_checkpoint cp = { stop_later, &left };
            hp_reach *r = NULL;
            hp_code rc = hp_reach_build(f.heap, semantics, &counting, &cp, &r, &err);
            if (rc == HP_OK) {
                rc = hp_reach_dominators(r, 1, &cp, &err);
                if (rc == HP_OK)
                    rc = hp_reach_live(r, &cp, &err);
                if (rc == HP_OK)
                    rc = hp_reach_paths(r, NULL, NULL, 0, 0, &cp, &b, &err);
                if (rc == HP_OK)
                    hp_bfs_free(&b);
                hp_reach_free(r);
            }
            CHECK(rc == HP_OK || rc == HP_E_ABORTED);
            CHECK_EQ_U64(countalloc_live, 0);
            stopped = rc == HP_OK; /* no checkpoint left to stop at */
        }
        CHECK(stop_at > 2); /* it was stopped at least once */
        fixture_close(&f);
    }
    free(next);
    free(other);
}

/* A list held by one root: every node dominates the rest; no recursion. */
static void test_long_list(void)
{
    int n = TEST_LIST, semantics;
    int *next = xmalloc((size_t)n * sizeof(int)), *other = xmalloc((size_t)n * sizeof(int));
    rk_graph g;
    list_graph(&g, n, next, other);
    for (semantics = 0; semantics < 2; semantics++) {
        fixture f;
        hp_bfs b;
        hp_error err;
        uint32_t first, last, len;
        if (!fixture_open(&f, &g, semantics)) {
            CHECK(0);
            continue;
        }
        first = hp_heap_find(f.heap, rk_node_id(0));
        last = hp_heap_find(f.heap, rk_node_id(n - 1));
        CHECK_EQ_U64(hp_reach_retained(f.reach, first), (uint64_t)n * hp_heap_shallow_size(f.heap, first));
        CHECK_EQ_U64(hp_reach_retained_count(f.reach, first), (uint64_t)n + (semantics == HP_REACH_VISUALVM));
        CHECK_EQ_U64(hp_reach_idom(f.reach, last), hp_heap_find(f.heap, rk_node_id(n - 2)));
        CHECK(hp_reach_paths(f.reach, NULL, &last, 1, HP_PATHS_LEAVES, NULL, &b, &err) == HP_OK);
        len = hp_bfs_path(&b, last, NULL, NULL, 0);
        CHECK_EQ_U64(len, (uint32_t)n);
        hp_bfs_free(&b);
        fixture_close(&f);
    }
    free(next);
    free(other);
}


/* Interrupted or out of memory at any allocation: a clean error, nothing
 * leaked (countalloc's live bytes return to zero). */
static void test_failures(void)
{
    static const int next[3] = { 1, 2, 0 }, other[3] = { 2, RK_MISSING, 1 }, items[2] = { 0, 2 };
    static const rk_root roots[2] = { { HP_SUB_ROOT_JNI_GLOBAL, 0, 0 }, { HP_SUB_ROOT_JNI_GLOBAL, RK_ROOT_ARRAY, 0 } };
    rk_graph g = { 3, next, other, 1, items, 2, roots, 2 };
    hp_heap_options opt;
    hp_checkpoint cp = { stop_now, NULL };
    hp_heap *h;
    hp_reach *r;
    hp_error err;
    bb dump;
    int semantics;
    memset(&opt, 0, sizeof opt);
    rk_dump(&dump, &g);
    CHECK(hp_heap_build(dump.d, dump.len, &opt, &h, &err) == HP_OK);
    for (semantics = 0; semantics < 2; semantics++) {
        size_t call;
        hp_code rc0;
        countalloc_fail_call = (size_t)-1;
        rc0 = hp_reach_build(h, semantics, &counting, &cp, &r, &err);
        CHECK(rc0 == HP_E_ABORTED || (rc0 == HP_OK && r != NULL));
        hp_reach_free(r);
        CHECK_EQ_U64(countalloc_live, 0);
        for (call = 0; call < 200; call++) {
            hp_code rc;
            hp_bfs b;
            countalloc_calls = 0;
            countalloc_fail_call = call;
            rc = hp_reach_build(h, semantics, &counting, NULL, &r, &err);
            if (rc == HP_OK) {
                rc = hp_reach_dominators(r, call & 1, NULL, &err);
                if (rc == HP_OK) {
                    const uint64_t *by_class;
                    rc = hp_reach_class_retained(r, NULL, &by_class, &err);
                }
                if (rc == HP_OK) {
                    rc = hp_reach_paths(r, NULL, NULL, 0, 0, NULL, &b, &err);
                    hp_bfs_free(&b);
                }
                hp_reach_free(r);
            }
            CHECK(rc == HP_OK || rc == HP_E_NOMEM);
            CHECK_EQ_U64(countalloc_live, 0);
            if (rc == HP_OK && countalloc_calls <= call)
                break; /* every allocation has failed once */
        }
    }
    countalloc_fail_call = (size_t)-1;
    hp_heap_free(h);
    free(dump.d);
}

int main(void)
{
    test_random_graphs();
    test_weak_referent();
    test_live_set();
    test_roots_and_rules();
    test_failures();
    test_interrupts();
    test_long_list();
    return check_report("test_reach");
}
