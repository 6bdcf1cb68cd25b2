/* The path search as paths_to_root uses it (hp_reach_routes_find, the
 * namer, hp_bfs_tree), against routekit.h's model: on random heaps with
 * rules and weak referents, each object's tier (a strong path, one across
 * a library rule, an excluded reference, a weak referent, none), its
 * route's edges, names and rule; leaves; a class hierarchy a hundred
 * thousand classes deep (linear compile, O(1) subclass tests); a holder
 * large enough for the namer's tables; a long chain; interruption and
 * every allocation failing in turn. */
#include "countalloc.h"
#include "routekit.h"

#include "hp_heap.h"
#include "hp_reach.h"
#include "hp_reach_impl.h" /* the graph, to check the namer against its rows */

#ifndef TEST_DEPTH
#define TEST_DEPTH 100000
#endif

static const hp_alloc counting = { countalloc_malloc, countalloc_realloc, countalloc_free };

typedef struct fixture {
    bb dump;
    hp_heap *heap;
    hp_reach *reach;
} fixture;

static int fixture_open(fixture *f, const rt_spec *s)
{
    hp_heap_options opt;
    hp_error err;
    hp_code rc;
    memset(&opt, 0, sizeof opt);
    rt_dump(&f->dump, s);
    f->reach = NULL;
    if ((rc = hp_heap_build(f->dump.d, f->dump.len, &opt, &f->heap, &err)) != HP_OK) {
        show_error("heap", rc, &err);
        free(f->dump.d);
        return 0;
    }
    if ((rc = hp_reach_build(f->heap, HP_REACH_HPROFKIT, NULL, NULL, &f->reach, &err)) != HP_OK) {
        show_error("reach", rc, &err);
        hp_heap_free(f->heap);
        free(f->dump.d);
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

/* Routes of `targets` (objects) with the model's rules; their failures. */
static int check_spec(const fixture *f, const rt_spec *s, const rt_rule *rules, int nrules, const int *targets,
                      int ntargets, int leaves)
{
    hp_reach_rule hr[8];
    char names[8][16];
    uint32_t *vertices = xmalloc((size_t)(ntargets + 1) * 4);
    hp_reach_routes rt;
    hp_error err;
    hp_code rc;
    int k, bad;
    rt_rules(s, f->heap, rules, nrules, hr, names);
    for (k = 0; k < ntargets; k++)
        vertices[k] = hp_heap_find(f->heap, rt_id(targets[k]));
    rc = hp_reach_routes_find(f->reach, hr, (size_t)nrules, vertices, (size_t)ntargets, leaves ? HP_PATHS_LEAVES : 0,
                              NULL, &rt, &err);
    if (rc != HP_OK) {
        show_error("routes", rc, &err);
        free(vertices);
        return 1;
    }
    bad = rt_check_routes(s, f->heap, f->reach, rules, nrules, targets, ntargets, &rt, leaves);
    hp_reach_routes_free(&rt);
    free(vertices);
    return bad;
}

static void test_random_heaps(void)
{
    rt_src src = { NULL, 0, 0, 4242 };
    int round, tiers[5] = { 0, 0, 0, 0, 0 };
    for (round = 0; round < 400; round++) {
        rt_spec s;
        rt_rule rules[4];
        fixture f;
        int nrules, k, *all, some[6], nsome = 0, *tier, *dist0;
        rt_random(&s, &src, 1 + (int)rt_next(&src, round < 300 ? 6 : 40), 1 + (int)rt_next(&src, 60),
                  round % 10 == 0 ? 300 : 8, round % 3 == 0);
        nrules = rt_random_rules(&s, &src, rules);
        if (!fixture_open(&f, &s)) {
            CHECK(0);
            rt_free(&s);
            continue;
        }
        all = xmalloc((size_t)s.nobjects * sizeof(int));
        for (k = 0; k < s.nobjects; k++)
            all[k] = k;
        CHECK_EQ_U64(check_spec(&f, &s, rules, nrules, all, s.nobjects, 0), 0);
        for (k = 0; k < 6 && k < s.nobjects; k++)
            some[nsome++] = (int)rt_next(&src, (uint32_t)s.nobjects);
        CHECK_EQ_U64(check_spec(&f, &s, rules, nrules, some, nsome, 1), 0);
        tier = xmalloc((size_t)s.nobjects * sizeof(int));
        dist0 = xmalloc((size_t)s.nobjects * sizeof(int));
        rt_model(&s, rules, nrules, tier, dist0);
        for (k = 0; k < s.nobjects; k++)
            tiers[tier[k]]++;
        free(tier);
        free(dist0);
        free(all);
        fixture_close(&f);
        rt_free(&s);
    }
    /* Every tier was met, many times. */
    for (round = 0; round < 5; round++)
        CHECK(tiers[round] > 50);
    printf("  random heaps: tiers %d %d %d %d %d\n", tiers[0], tiers[1], tiers[2], tiers[3], tiers[4]);
}

/* A chain of `depth` classes; C0 and C(depth/2) declare a field each; the
 * deepest class's instance 0 holds object 1 by C(depth/2).f0 and object 2
 * by C0.f0.  A rule ignores C0.f0, a root-class rule on C(depth/3) marks
 * the root (object 0) as LOW. */
static void test_deep_hierarchy(void)
{
    const int depth = TEST_DEPTH, half = depth / 2;
    int k, targets[3] = { 0, 1, 2 };
    rt_rule rules[2] = { { HP_RULE_FIELD, HP_EDGE_IGNORE, 0, 0 }, { HP_RULE_ROOT_CLASS, HP_EDGE_LOW, depth / 3, -1 } };
    rt_spec s;
    fixture f;
    memset(&s, 0, sizeof s);
    s.nclasses = depth;
    s.parent = xmalloc((size_t)depth * sizeof(int));
    s.own = xmalloc((size_t)depth * sizeof(int));
    for (k = 0; k < depth; k++) {
        s.parent[k] = k - 1;
        s.own[k] = k == 0 || k == half;
    }
    s.reference = -1;
    rt_classes_done(&s);
    s.nobjects = 3;
    s.cls = xmalloc(3 * sizeof(int));
    s.start = xmalloc(4 * sizeof(int));
    s.slots = xmalloc(2 * sizeof(int));
    s.cls[0] = depth - 1;
    s.cls[1] = s.cls[2] = 0;
    s.start[0] = 0;
    s.start[1] = s.start[2] = s.start[3] = 2;
    s.slots[0] = 1; /* C(half).f0: the layout lists the nearer class first */
    s.slots[1] = 2; /* C0.f0 */
    s.nroots = 1;
    s.roots = xmalloc(sizeof(int));
    s.roots[0] = 0;
    CHECK_EQ_U64(rt_refs(&s, depth - 1), 2);
    if (!fixture_open(&f, &s)) {
        CHECK(0);
        rt_free(&s);
        return;
    }
    {
        hp_reach_rule hr[2];
        char names[2][16];
        uint32_t vertices[3];
        hp_reach_routes rt;
        hp_error err;
        for (k = 0; k < 3; k++)
            vertices[k] = hp_heap_find(f.heap, rt_id(k));
        rt_rules(&s, f.heap, rules, 2, hr, names);
        CHECK(hp_reach_routes_find(f.reach, hr, 2, vertices, 3, 0, NULL, &rt, &err) == HP_OK);
        CHECK_EQ_U64(rt.tier[0], HP_TIER_LOW);      /* the root's class extends C(depth/3) */
        CHECK_EQ_U64(rt.rule[0], 1);
        CHECK_EQ_U64(rt.tier[1], HP_TIER_LOW);      /* through it, by a field no rule names */
        CHECK_EQ_U64(rt.tier[2], HP_TIER_IGNORED);  /* C0.f0, in a class 100,000 below C0 */
        CHECK_EQ_U64(rt.rule[2], 0);
        CHECK_EQ_U64(rt_check_routes(&s, f.heap, f.reach, rules, 2, targets, 3, &rt, 0), 0);
        hp_reach_routes_free(&rt);
    }
    fixture_close(&f);
    rt_free(&s);
}

/* A chain of n objects, the last holding an Object[] of `width` slots,
 * each slot one more object (or null every 7th). */
static void chain_spec(rt_spec *s, int n, int width)
{
    int k;
    memset(s, 0, sizeof *s);
    s->nclasses = 1;
    s->parent = xmalloc(sizeof(int));
    s->own = xmalloc(sizeof(int));
    s->parent[0] = -1;
    s->own[0] = 1;
    s->reference = -1;
    rt_classes_done(s);
    s->nobjects = n + 1 + width;
    s->cls = xmalloc((size_t)s->nobjects * sizeof(int));
    s->start = xmalloc((size_t)(s->nobjects + 1) * sizeof(int));
    s->slots = xmalloc((size_t)(n + width) * sizeof(int));
    for (k = 0; k < s->nobjects; k++) {
        s->cls[k] = k == n ? -1 : 0;
        s->start[k] = k <= n ? k : n + width;
    }
    s->start[s->nobjects] = n + width;
    for (k = 0; k < n; k++)
        s->slots[k] = k + 1;
    for (k = 0; k < width; k++)
        s->slots[n + k] = k % 7 == 3 ? RK_NULL : n + 1 + k;
    s->nroots = 1;
    s->roots = xmalloc(sizeof(int));
    s->roots[0] = 0;
}

/* Many paths cross the array, named from the namer's table; the chain's
 * last object has a path of n hops. */
static void chain_and_wide_array(int n, int width, int all_elements)
{
    int k, *targets = xmalloc((size_t)(width + 1) * sizeof(int)), ntargets = 0;
    rt_spec s;
    fixture f;
    chain_spec(&s, n, width);
    if (!fixture_open(&f, &s)) {
        CHECK(0);
        rt_free(&s);
        free(targets);
        return;
    }
    targets[ntargets++] = n - 1;
    for (k = width; all_elements && k-- > 0;)
        if (k % 7 != 3)
            targets[ntargets++] = n + 1 + k;
    CHECK_EQ_U64(check_spec(&f, &s, NULL, 0, targets, ntargets, 0), 0);
    {
        hp_reach_namer *nm = hp_reach_namer_new(f.reach);
        uint32_t arr = hp_heap_find(f.heap, rt_id(n)), pos, degree, *slot = xmalloc((size_t)width * 4 + 4);
        const uint32_t *row = hp_graph_row(&f.reach->graph, arr, &degree);
        hp_ref ref;
        for (k = 0, pos = 0; k < width; k++)
            if (k % 7 != 3)
                slot[pos++] = (uint32_t)k;
        CHECK_EQ_U64(pos, degree);
        /* The first naming scans the holder; the second tables it. */
        CHECK(degree == 0 || hp_reach_namer_edge(nm, arr, degree - 1, &ref) == 1);
        CHECK(hp_reach_namer_bytes(nm) < 4096);
        for (pos = degree; pos-- > 0;)
            CHECK(hp_reach_namer_edge(nm, arr, pos, &ref) == 1 && ref.kind == HP_REF_ELEMENT && ref.slot == slot[pos] &&
                  ref.target == row[pos]);
        CHECK(width <= HP_NAMER_SMALL || hp_reach_namer_bytes(nm) >= (uint64_t)degree * 5);
        CHECK(hp_reach_namer_edge(nm, arr, degree, &ref) == 0);
        hp_reach_namer_free(nm);
        free(slot);
    }
    fixture_close(&f);
    rt_free(&s);
    free(targets);
}

static int stop_later(void *ctx)
{
    int *left = ctx;
    return --*left <= 0;
}

/* Interrupted at the k-th checkpoint, or out of memory at the k-th
 * allocation: a clean error, nothing left allocated. */
static void test_interrupts_and_failures(void)
{
    rt_src src = { NULL, 0, 0, 99 };
    rt_rule rules[4];
    hp_reach_rule hr[4];
    char names[4][16];
    rt_spec s;
    fixture f;
    int nrules, stop_at, stopped = 0, k;
    uint32_t targets[50];
    size_t call;
    /* Interrupted: a chain long enough to meet many checkpoints. */
    chain_spec(&s, 3000000, 10);
    if (!fixture_open(&f, &s)) {
        CHECK(0);
        rt_free(&s);
        return;
    }
    targets[0] = hp_heap_find(f.heap, rt_id(2999999));
    for (stop_at = 1; stop_at < 4096 && !stopped; stop_at *= 2) {
        int left = stop_at;
        hp_checkpoint cp = { stop_later, &left };
        hp_reach *r = NULL;
        hp_reach_routes rt;
        hp_error err;
        hp_code rc = hp_reach_build(f.heap, HP_REACH_HPROFKIT, &counting, &cp, &r, &err);
        if (rc == HP_OK) {
            rc = hp_reach_routes_find(r, NULL, 0, targets, 1, 0, &cp, &rt, &err);
            if (rc == HP_OK)
                hp_reach_routes_free(&rt);
            hp_reach_free(r);
        }
        CHECK(rc == HP_OK || rc == HP_E_ABORTED);
        CHECK_EQ_U64(countalloc_live, 0);
        stopped = rc == HP_OK;
    }
    CHECK(stop_at > 2);
    fixture_close(&f);
    rt_free(&s);
    /* Out of memory at each allocation in turn: a small random heap. */
    rt_random(&s, &src, 30, 200, 80, 1);
    nrules = rt_random_rules(&s, &src, rules);
    if (!fixture_open(&f, &s)) {
        CHECK(0);
        rt_free(&s);
        return;
    }
    rt_rules(&s, f.heap, rules, nrules, hr, names);
    for (k = 0; k < 50; k++)
        targets[k] = hp_heap_find(f.heap, rt_id(s.nobjects - 1 - k));
    for (call = 0; call < 1000; call++) {
        hp_reach *r = NULL;
        hp_reach_routes rt;
        hp_error err;
        hp_code rc;
        countalloc_calls = 0;
        countalloc_fail_call = call;
        rc = hp_reach_build(f.heap, HP_REACH_HPROFKIT, &counting, NULL, &r, &err);
        if (rc == HP_OK) {
            rc = hp_reach_routes_find(r, hr, (size_t)nrules, targets, 50, call & 1, NULL, &rt, &err);
            if (rc == HP_OK) {
                hp_reach_namer *nm = hp_reach_namer_new(r);
                uint32_t i, nodes[256];
                if (!nm)
                    rc = HP_E_NOMEM;
                for (i = 0; nm && i < 50; i++) {
                    uint32_t len = rt.tree.node[i] == HP_NONE ? 0 : hp_bfs_tree_path(&rt.tree, rt.tree.node[i], nodes, 256), j;
                    hp_ref ref;
                    for (j = 1; j < len && len <= 256; j++) /* twice: tabled the second time */
                        if (hp_reach_namer_edge(nm, rt.tree.vertex[nodes[j - 1]], rt.tree.edge[nodes[j]], &ref) < 0 ||
                            hp_reach_namer_edge(nm, rt.tree.vertex[nodes[j - 1]], rt.tree.edge[nodes[j]], &ref) < 0)
                            rc = HP_E_NOMEM;
                }
                hp_reach_namer_free(nm);
                hp_reach_routes_free(&rt);
            }
            hp_reach_free(r);
        }
        CHECK(rc == HP_OK || rc == HP_E_NOMEM);
        CHECK_EQ_U64(countalloc_live, 0);
        if (rc == HP_OK && countalloc_calls <= call)
            break; /* every allocation has failed once */
    }
    CHECK(call < 1000);
    countalloc_fail_call = (size_t)-1;
    fixture_close(&f);
    rt_free(&s);
}

int main(void)
{
    test_random_heaps();
    test_deep_hierarchy();
    chain_and_wide_array(300, 5000, 1);
    chain_and_wide_array(TEST_DEPTH * 3, 100, 0);
    test_interrupts_and_failures();
    return check_report("test_routes");
}
