/* The dominator tree made navigable (hp_domtree.h, hp_reach_tree.h):
 * children rows, the walk and the union rule on random trees against
 * naive computations written here (ancestor chains walked one by one), a
 * 10 M-deep chain (nothing may recurse), the fold by key (hp_domfold.h)
 * against the ancestor chains, hp_reach_tree, group totals and the class
 * tree on dumps shaped as random graphs in both semantics, merged paths against
 * the paths one by one, and errors, aborts and every allocation failing in
 * turn. */
#include "countalloc.h"
#include "reachkit.h"

#include "hp_domfold.h"
#include "hp_domtree.h"
#include "hp_heap.h"
#include "hp_reach_classtree.h"
#include "hp_reach_merged.h"
#include "hp_reach_tree.h"

#include <time.h>

#ifndef TEST_DEEP
#define TEST_DEEP 10000000
#endif

static const hp_alloc counting = { countalloc_malloc, countalloc_realloc, countalloc_free };

/* ---- random trees ---- */

/* A random forest under the virtual root: vertices in a random order, each
 * hanging from one placed before it, from the virtual root, or from
 * nothing (unreachable, with its would-be subtree).  Sizes random, some 0;
 * retained[v] the sum over v's subtree, by walking every ancestor chain. */
typedef struct tree {
    uint32_t n;
    uint32_t *idom;
    uint64_t *size, *retained;
} tree;

static void tree_random(tree *t, uint32_t n, uint32_t *seed)
{
    uint32_t *order = xmalloc((size_t)n * 4), k, v;
    t->n = n;
    t->idom = xmalloc((size_t)n * 4);
    t->size = xmalloc((size_t)n * 8);
    t->retained = xmalloc((size_t)n * 8);
    for (k = 0; k < n; k++)
        order[k] = k;
    for (k = n; k > 1; k--) {
        uint32_t j = xorshift(seed) % k, x = order[k - 1];
        order[k - 1] = order[j];
        order[j] = x;
    }
    for (k = 0; k < n; k++) {
        uint32_t r = xorshift(seed);
        v = order[k];
        t->size[v] = r % 5 == 0 ? 0 : r % 97;
        if (k == 0 || r % 11 == 0)
            t->idom[v] = HP_DOM_VIRTUAL;
        else if (r % 13 == 0)
            t->idom[v] = HP_NONE;
        else /* mostly near the end: deep chains as well as wide rows */
            t->idom[v] = order[r % 3 == 0 ? xorshift(seed) % k : k - 1 - xorshift(seed) % (k < 4 ? k : 4)];
    }
    /* An unreachable vertex's descendants are unreachable too. */
    for (v = 0; v < n; v++) {
        uint32_t a = t->idom[v];
        while (a != HP_DOM_VIRTUAL && a != HP_NONE)
            a = t->idom[a];
        if (a == HP_NONE)
            t->idom[v] = HP_NONE;
        t->retained[v] = 0;
    }
    for (v = 0; v < n; v++) {
        uint32_t a = v;
        if (t->idom[v] == HP_NONE)
            continue;
        for (; a != HP_DOM_VIRTUAL; a = t->idom[a])
            t->retained[a] += t->size[v];
    }
    free(order);
}

static void tree_free(tree *t)
{
    free(t->idom);
    free(t->size);
    free(t->retained);
}

/* Whether d is v or one of v's dominators. */
static int dominates(const tree *t, uint32_t d, uint32_t v)
{
    for (; v != HP_DOM_VIRTUAL && v != HP_NONE; v = t->idom[v])
        if (v == d)
            return 1;
    return 0;
}

/* Each in-tree vertex once, in its idom's row, rows ordered. */
static void check_rows(const tree *t, const hp_domtree *d, int ordered)
{
    uint32_t *seen = calloc(t->n ? t->n : 1, 4), v, k, count, total = 0;
    for (v = 0; v <= t->n; v++) {
        uint32_t row = v == t->n ? HP_DOM_VIRTUAL : v;
        const uint32_t *kids = hp_domtree_children(d, row, &count);
        total += count;
        for (k = 0; k < count; k++) {
            CHECK(kids[k] < t->n && t->idom[kids[k]] == row);
            seen[kids[k]]++;
            if (k > 0 && ordered)
                CHECK(t->retained[kids[k - 1]] > t->retained[kids[k]] ||
                      (t->retained[kids[k - 1]] == t->retained[kids[k]] && kids[k - 1] < kids[k]));
            if (k > 0 && !ordered)
                CHECK(kids[k - 1] < kids[k]);
        }
    }
    for (v = 0; v < t->n; v++)
        CHECK_EQ_U64(seen[v], t->idom[v] != HP_NONE);
    (void)total;
    free(seen);
}

/* The walk: every in-tree vertex entered once after its dominator and
 * before its descendants, left after them. */
typedef struct walk_log {
    const tree *t;
    uint8_t *state; /* 0 not yet, 1 entered, 2 left */
    uint32_t entered, bad;
} walk_log;

static void log_enter(void *ctx, uint32_t v)
{
    walk_log *w = ctx;
    uint32_t p = w->t->idom[v];
    if (w->state[v] != 0 || (p != HP_DOM_VIRTUAL && w->state[p] != 1))
        w->bad++;
    w->state[v] = 1;
    w->entered++;
}

static void log_leave(void *ctx, uint32_t v)
{
    walk_log *w = ctx;
    uint32_t p = w->t->idom[v];
    if (w->state[v] != 1 || (p != HP_DOM_VIRTUAL && w->state[p] != 1))
        w->bad++;
    w->state[v] = 2;
}

static void check_walk(const tree *t, const hp_domtree *d)
{
    walk_log w = { t, calloc(t->n ? t->n : 1, 1), 0, 0 };
    hp_domtree_visitor vis = { log_enter, log_leave, &w };
    hp_error err;
    uint32_t v, reachable = 0;
    CHECK_EQ_U64(hp_domtree_walk(d, &vis, NULL, &err), HP_OK);
    for (v = 0; v < t->n; v++) {
        reachable += t->idom[v] != HP_NONE;
        CHECK_EQ_U64(w.state[v], t->idom[v] == HP_NONE ? 0 : 2);
    }
    CHECK_EQ_U64(w.entered, reachable);
    CHECK_EQ_U64(w.bad, 0);
    free(w.state);
}

/* Random groups; the tops found against the naive test (no other member
 * of the group among the dominators), and their retained sum against the
 * size of the union of the members' subtrees. */
typedef struct groups {
    uint32_t *of;        /* per vertex: group or HP_NONE */
    uint32_t ngroups;
    uint8_t *top;        /* per vertex: reported as a top */
    uint64_t *sum;       /* per group: retained of its tops */
    uint32_t calls;
    const uint64_t *retained;
} groups;

static void groups_top(void *ctx, uint32_t v, uint32_t g)
{
    groups *gs = ctx;
    gs->calls++;
    gs->top[v]++;
    gs->sum[g] += gs->retained[v];
}

static void check_group_tops(const tree *t, const hp_domtree *d, uint32_t *seed)
{
    groups gs;
    hp_error err;
    uint32_t v, u, g;
    uint64_t *union_size;
    gs.ngroups = 1 + xorshift(seed) % 7;
    gs.of = xmalloc((size_t)t->n * 4 + 4);
    gs.top = calloc(t->n + 1, 1);
    gs.sum = calloc(gs.ngroups, 8);
    union_size = calloc(gs.ngroups, 8);
    gs.calls = 0;
    gs.retained = t->retained;
    for (v = 0; v < t->n; v++) {
        gs.of[v] = xorshift(seed) % 4 == 0 ? HP_NONE : xorshift(seed) % gs.ngroups;
        if (gs.of[v] != HP_NONE && xorshift(seed) % 6 == 0)
            gs.of[v] |= HP_GROUP_SHADOW; /* hides, is never a top */
    }
    CHECK_EQ_U64(hp_domtree_group_tops(d, gs.of, gs.ngroups, groups_top, &gs, NULL, &err), HP_OK);
    for (v = 0; v < t->n; v++) {
        int expect = t->idom[v] != HP_NONE && gs.of[v] != HP_NONE && !(gs.of[v] & HP_GROUP_SHADOW);
        for (u = t->idom[v]; expect && u != HP_DOM_VIRTUAL; u = t->idom[u])
            if (gs.of[u] != HP_NONE && (gs.of[u] & ~HP_GROUP_SHADOW) == gs.of[v])
                expect = 0;
        CHECK_EQ_U64(gs.top[v], expect);
    }
    for (v = 0; v < t->n; v++)
        if (gs.of[v] != HP_NONE)
            gs.of[v] &= ~HP_GROUP_SHADOW;
    memset(gs.top, 0, t->n + 1);
    memset(gs.sum, 0, (size_t)gs.ngroups * 8);
    CHECK_EQ_U64(hp_domtree_group_tops(d, gs.of, gs.ngroups, groups_top, &gs, NULL, &err), HP_OK);
    /* The union of the members' retained sets, vertex by vertex. */
    for (u = 0; u < t->n; u++)
        for (g = 0; g < gs.ngroups; g++) {
            int in = 0;
            for (v = 0; v < t->n && !in; v++)
                in = gs.of[v] == g && t->idom[u] != HP_NONE && dominates(t, v, u);
            if (in)
                union_size[g] += t->size[u];
        }
    for (g = 0; g < gs.ngroups; g++)
        CHECK_EQ_U64(gs.sum[g], union_size[g]);
    free(gs.of);
    free(gs.top);
    free(gs.sum);
    free(union_size);
}

static void test_random_trees(void)
{
    uint32_t seed = 777, round;
    for (round = 0; round < 400; round++) {
        tree t;
        hp_domtree d;
        hp_error err;
        tree_random(&t, 1 + xorshift(&seed) % (round < 300 ? 40 : 300), &seed);
        CHECK_EQ_U64(hp_domtree_build(&d, t.idom, t.n, t.retained, &counting, NULL, &err), HP_OK);
        check_rows(&t, &d, 1);
        check_walk(&t, &d);
        check_group_tops(&t, &d, &seed);
        hp_domtree_free(&d);
        hp_domtree_free(&d); /* twice: harmless */
        CHECK_EQ_U64(hp_domtree_build(&d, t.idom, t.n, NULL, &counting, NULL, &err), HP_OK);
        check_rows(&t, &d, 0);
        hp_domtree_free(&d);
        CHECK_EQ_U64(countalloc_live, 0);
        tree_free(&t);
    }
}

/* ---- hostile shapes ---- */

typedef struct deep {
    uint32_t tops, last_top, depth, max_depth;
} deep;

/* Every thousandth vertex in group 1, the others in group 0. */
static uint32_t *one_in_a_thousand(uint32_t n)
{
    uint32_t *group = xmalloc((size_t)n * 4 + 4), v;
    for (v = 0; v < n; v++)
        group[v] = v % 1000 == 500 ? 1 : 0;
    return group;
}

static void deep_top(void *ctx, uint32_t v, uint32_t g)
{
    deep *dp = ctx;
    dp->tops++;
    if (g == 1)
        dp->last_top = v;
}

static void deep_enter(void *ctx, uint32_t v)
{
    deep *dp = ctx;
    (void)v;
    if (++dp->depth > dp->max_depth)
        dp->max_depth = dp->depth;
}

static void deep_leave(void *ctx, uint32_t v)
{
    (void)v;
    ((deep *)ctx)->depth--;
}

/* A chain of TEST_DEEP vertices (a long linked list), and a star of a
 * tenth as many: the walk goes as deep as the chain with no recursion, and
 * the union rule finds one top per group on the chain, every leaf on the
 * star, whose one row is sorted. */
static void test_hostile(void)
{
    uint32_t n = TEST_DEEP, v, count;
    uint32_t *idom = xmalloc((size_t)n * 4);
    uint64_t *keys = xmalloc((size_t)n * 8);
    uint32_t *group = one_in_a_thousand(n);
    hp_domtree d;
    hp_domtree_visitor vis;
    deep dp;
    hp_error err;
    for (v = 0; v < n; v++) {
        idom[v] = v == 0 ? HP_DOM_VIRTUAL : v - 1;
        keys[v] = n - v;
    }
    CHECK_EQ_U64(hp_domtree_build(&d, idom, n, keys, NULL, NULL, &err), HP_OK);
    memset(&dp, 0, sizeof dp);
    vis.enter = deep_enter;
    vis.leave = deep_leave;
    vis.ctx = &dp;
    CHECK_EQ_U64(hp_domtree_walk(&d, &vis, NULL, &err), HP_OK);
    CHECK_EQ_U64(dp.max_depth, n);
    CHECK_EQ_U64(dp.depth, 0);
    CHECK_EQ_U64(hp_domtree_group_tops(&d, group, 2, deep_top, &dp, NULL, &err), HP_OK);
    CHECK_EQ_U64(dp.tops, 2);
    CHECK_EQ_U64(dp.last_top, 500);
    hp_domtree_free(&d);
    /* The star: the virtual root holds everything; the row is sorted. */
    n /= 10;
    for (v = 0; v < n; v++) {
        idom[v] = HP_DOM_VIRTUAL;
        keys[v] = (uint64_t)(v * 2654435761u) % 1000;
    }
    CHECK_EQ_U64(hp_domtree_build(&d, idom, n, keys, NULL, NULL, &err), HP_OK);
    {
        const uint32_t *kids = hp_domtree_children(&d, HP_DOM_VIRTUAL, &count);
        CHECK_EQ_U64(count, n);
        for (v = 1; v < count; v++)
            if (keys[kids[v - 1]] < keys[kids[v]] || (keys[kids[v - 1]] == keys[kids[v]] && kids[v - 1] > kids[v])) {
                CHECK(0);
                break;
            }
    }
    memset(&dp, 0, sizeof dp);
    CHECK_EQ_U64(hp_domtree_group_tops(&d, group, 2, deep_top, &dp, NULL, &err), HP_OK);
    CHECK_EQ_U64(dp.tops, n);
    hp_domtree_free(&d);
    free(idom);
    free(keys);
    free(group);
}

/* ---- errors, aborts, allocation failures ---- */

typedef struct stopper {
    uint32_t calls, stop_at;
} stopper;

static int stop_at(void *ctx)
{
    stopper *s = ctx;
    return ++s->calls >= s->stop_at;
}

static void no_top(void *ctx, uint32_t v, uint32_t g)
{
    (void)ctx;
    (void)v;
    (void)g;
}

/* Builds a tree of n and runs everything over it; the first failure. */
static hp_code run_everything(uint32_t n, const hp_checkpoint *cp)
{
    uint32_t *idom = xmalloc((size_t)n * 4), v;
    uint64_t *keys = xmalloc((size_t)n * 8);
    uint32_t *group = one_in_a_thousand(n);
    hp_domtree d;
    hp_domtree_visitor vis = { NULL, NULL, NULL };
    hp_error err;
    hp_code rc;
    for (v = 0; v < n; v++) {
        idom[v] = v < 3 ? HP_DOM_VIRTUAL : v % 3 ? v - 1 : v / 2; /* deep and wide */
        keys[v] = v % 17;
    }
    rc = hp_domtree_build(&d, idom, n, keys, &counting, cp, &err);
    if (rc == HP_OK)
        rc = hp_domtree_walk(&d, &vis, cp, &err);
    if (rc == HP_OK)
        rc = hp_domtree_group_tops(&d, group, 2, no_top, NULL, cp, &err);
    hp_domtree_free(&d);
    free(idom);
    free(keys);
    free(group);
    return rc;
}

/* Runs `run` stopped at the k-th checkpoint (on a tree of 3,000,000), then
 * with the k-th allocation failing (50,000), for every k until none is
 * left: each ends HP_E_ABORTED or HP_E_NOMEM with nothing left allocated,
 * the last run HP_OK. */
static void fail_every_way(hp_code (*run)(uint32_t n, const hp_checkpoint *cp), const char *what,
                           uint32_t min_aborts, uint32_t min_failures)
{
    uint32_t k, aborts = 0, failures = 0;
    hp_code rc;
    for (k = 1;; k++) {
        stopper st = { 0, k };
        hp_checkpoint cp = { stop_at, &st };
        rc = run(3000000, &cp);
        CHECK_EQ_U64(countalloc_live, 0);
        if (rc != HP_E_ABORTED)
            break;
        aborts++;
    }
    CHECK_EQ_U64(rc, HP_OK);
    CHECK(aborts >= min_aborts);
    for (countalloc_fail_call = 0;; countalloc_fail_call++) {
        countalloc_calls = 0;
        rc = run(50000, NULL);
        CHECK_EQ_U64(countalloc_live, 0);
        if (rc != HP_E_NOMEM)
            break;
        failures++;
    }
    countalloc_fail_call = (size_t)-1;
    CHECK_EQ_U64(rc, HP_OK);
    CHECK(failures >= min_failures);
    printf("  %sstopped at %u checkpoints, %u allocation failures, all freed\n", what, aborts, failures);
}

static void test_errors(void)
{
    uint32_t idom[4] = { HP_DOM_VIRTUAL, 0, 9, 1 }, k;
    hp_domtree d;
    hp_error err;
    CHECK_EQ_U64(hp_domtree_build(&d, idom, 4, NULL, &counting, NULL, &err), HP_E_USAGE);
    CHECK_EQ_U64(err.offset, 2);
    CHECK_EQ_U64(countalloc_live, 0);
    hp_domtree_free(&d);
    {   /* a group out of range: vertex 7's */
        uint32_t chain[10], group[10];
        for (k = 0; k < 10; k++) {
            chain[k] = k == 0 ? HP_DOM_VIRTUAL : k - 1;
            group[k] = k == 7 ? 5 : k == 8 ? 4 | HP_GROUP_SHADOW : HP_NONE;
        }
        CHECK_EQ_U64(hp_domtree_build(&d, chain, 10, NULL, &counting, NULL, &err), HP_OK);
        CHECK_EQ_U64(hp_domtree_group_tops(&d, group, 6, no_top, NULL, NULL, &err), HP_OK);
        CHECK_EQ_U64(hp_domtree_group_tops(&d, group, 5, no_top, NULL, NULL, &err), HP_E_USAGE);
        CHECK_EQ_U64(err.offset, 7);
        group[7] = 0;
        CHECK_EQ_U64(hp_domtree_group_tops(&d, group, 4, no_top, NULL, NULL, &err), HP_E_USAGE);
        CHECK_EQ_U64(err.offset, 8); /* a shadow's group is checked too */
        hp_domtree_free(&d);
    }
    /* An empty tree. */
    CHECK_EQ_U64(hp_domtree_build(&d, NULL, 0, NULL, &counting, NULL, &err), HP_OK);
    CHECK_EQ_U64(hp_domtree_walk(&d, &(hp_domtree_visitor){ NULL, NULL, NULL }, NULL, &err), HP_OK);
    hp_domtree_free(&d);
    CHECK_EQ_U64(countalloc_live, 0);
    fail_every_way(run_everything, "", 3, 4);
}

/* ---- the fold by key (hp_domfold.h) ---- */

typedef struct fold_keys {
    const tree *t;
    uint32_t kinds;
} fold_keys;

static uint32_t fold_key(void *ctx, uint32_t v)
{
    const fold_keys *k = ctx;
    return (v * 2654435761u >> 7) % k->kinds;
}

static uint64_t fold_size(void *ctx, uint32_t v)
{
    const fold_keys *k = ctx;
    return k->t->size[v];
}

static uint64_t fold_rank(void *ctx, uint32_t v)
{
    const fold_keys *k = ctx;
    return k->t->retained[v];
}

/* Whether u ranks before v among a node's tops: larger retained, then lower index. */
static int ranks_before(const tree *t, uint32_t u, uint32_t v)
{
    return t->retained[u] > t->retained[v] || (t->retained[u] == t->retained[v] && u < v);
}

/* Against the ancestor chains: each in-tree vertex in one node, whose key
 * is its own and whose parent node holds its dominator (node 0 for the
 * virtual root's children); no two nodes with one (parent, key); counts
 * and shallow sums; retained = the sizes of every vertex some member
 * dominates (or of the whole tree for node 0). */
static void check_fold(const tree *t, const hp_domtree *d, const hp_domfold *f, const hp_domfold_keys *keys)
{
    uint32_t *node_of = xmalloc(((size_t)t->n + 1) * 4), node, k, v, w, count, *members;
    uint64_t shallow, retained, all = 0;
    hp_error err;
    for (v = 0; v < t->n; v++)
        node_of[v] = HP_NONE;
    CHECK_EQ_U64(f->parent[0], HP_NONE);
    CHECK_EQ_U64(f->objects[0], 0);
    for (node = 0; node < f->count; node++) {
        CHECK_EQ_U64(hp_domfold_members(f, d, keys, node, &members, &count, NULL, &err), HP_OK);
        CHECK_EQ_U64(count, f->objects[node]);
        CHECK(node == 0 || (f->parent[node] < node && count > 0));
        for (k = 1; k < node; k++)
            CHECK(f->parent[k] != f->parent[node] || f->key[k] != f->key[node]);
        shallow = retained = 0;
        /* The tops: the members that no member outranks but the tops before. */
        for (k = 0; k < f->top; k++) {
            uint32_t top = f->tops[(size_t)node * f->top + k], j, above = 0, found = 0;
            CHECK_EQ_U64(top == HP_NONE, k >= count);
            if (top == HP_NONE)
                continue;
            for (j = 0; j < count; j++) {
                above += ranks_before(t, members[j], top);
                found += members[j] == top;
            }
            CHECK_EQ_U64(found, 1);
            CHECK_EQ_U64(above, k);
        }
        for (k = 0; k < count; k++) {
            v = members[k];
            CHECK(node_of[v] == HP_NONE);
            node_of[v] = node;
            CHECK_EQ_U64(keys->key(keys->ctx, v), f->key[node]);
            shallow += t->size[v];
        }
        for (w = 0; w < t->n; w++)
            for (k = 0; k < count; k++)
                if (dominates(t, members[k], w)) {
                    retained += t->size[w];
                    break;
                }
        CHECK_EQ_U64(shallow, f->shallow[node]);
        if (node > 0)
            CHECK_EQ_U64(retained, f->retained[node]);
        if (members)
            f->alloc.free_fn(members);
    }
    for (v = 0; v < t->n; v++) {
        CHECK_EQ_U64(node_of[v] != HP_NONE, t->idom[v] != HP_NONE);
        if (node_of[v] == HP_NONE)
            continue;
        all += t->size[v];
        CHECK_EQ_U64(f->parent[node_of[v]], t->idom[v] == HP_DOM_VIRTUAL ? 0 : node_of[t->idom[v]]);
    }
    CHECK_EQ_U64(f->retained[0], all);
    CHECK_EQ_U64(hp_domfold_members(f, d, keys, f->count, &members, &count, NULL, &err), HP_E_USAGE);
    free(node_of);
}

static void test_fold_random(void)
{
    uint32_t seed = 9191, round;
    for (round = 0; round < 300; round++) {
        tree t;
        hp_domtree d;
        hp_domfold f;
        fold_keys fk;
        hp_domfold_keys keys = { fold_key, fold_size, fold_rank, &fk };
        hp_error err;
        tree_random(&t, 1 + xorshift(&seed) % (round < 200 ? 40 : 300), &seed);
        fk.t = &t;
        fk.kinds = 1 + round % 5;
        CHECK_EQ_U64(hp_domtree_build(&d, t.idom, t.n, t.retained, &counting, NULL, &err), HP_OK);
        CHECK_EQ_U64(hp_domfold_build(&f, &d, &keys, round % 4, &counting, NULL, &err), HP_OK);
        check_fold(&t, &d, &f, &keys);
        hp_domfold_free(&f);
        hp_domfold_free(&f); /* twice: harmless */
        hp_domtree_free(&d);
        CHECK_EQ_U64(countalloc_live, 0);
        tree_free(&t);
    }
}

static uint32_t key_zero(void *ctx, uint32_t v)
{
    (void)ctx;
    (void)v;
    return 0;
}

static uint32_t key_third(void *ctx, uint32_t v)
{
    (void)ctx;
    return v % 3;
}

static uint32_t key_none(void *ctx, uint32_t v)
{
    (void)ctx;
    return v == 5 ? HP_NONE : 0;
}

static uint64_t size_one(void *ctx, uint32_t v)
{
    (void)ctx;
    (void)v;
    return 1;
}

/* A chain of a tenth of TEST_DEEP vertices of one key folds into one node
 * per level (the paths differ in length), with no recursion; a star of as
 * many into one node per key; the deepest node's objects found again. */
static void test_fold_shapes(void)
{
    uint32_t n = TEST_DEEP / 10, v, count, *members;
    uint32_t *idom = xmalloc((size_t)n * 4);
    hp_domtree d;
    hp_domfold f;
    hp_domfold_keys keys = { key_zero, size_one, NULL, NULL };
    hp_error err;
    for (v = 0; v < n; v++)
        idom[v] = v == 0 ? HP_DOM_VIRTUAL : v - 1;
    CHECK_EQ_U64(hp_domtree_build(&d, idom, n, NULL, NULL, NULL, &err), HP_OK);
    CHECK_EQ_U64(hp_domfold_build(&f, &d, &keys, 0, &counting, NULL, &err), HP_OK);
    CHECK_EQ_U64(f.count, (uint64_t)n + 1);
    CHECK_EQ_U64(f.retained[0], n);
    CHECK_EQ_U64(f.retained[1], n);
    CHECK_EQ_U64(f.retained[n], 1);
    CHECK_EQ_U64(hp_domfold_members(&f, &d, &keys, n, &members, &count, NULL, &err), HP_OK);
    CHECK(count == 1 && members[0] == n - 1);
    f.alloc.free_fn(members);
    hp_domfold_free(&f);
    hp_domtree_free(&d);
    for (v = 0; v < n; v++)
        idom[v] = HP_DOM_VIRTUAL;
    keys.key = key_third;
    CHECK_EQ_U64(hp_domtree_build(&d, idom, n, NULL, NULL, NULL, &err), HP_OK);
    CHECK_EQ_U64(hp_domfold_build(&f, &d, &keys, 0, &counting, NULL, &err), HP_OK);
    CHECK_EQ_U64(f.count, 4);
    CHECK_EQ_U64(f.objects[1] + f.objects[2] + f.objects[3], n);
    CHECK_EQ_U64(f.retained[0], n);
    hp_domfold_free(&f);
    /* A key of HP_NONE is refused, naming the vertex. */
    keys.key = key_none;
    CHECK_EQ_U64(hp_domfold_build(&f, &d, &keys, 0, &counting, NULL, &err), HP_E_USAGE);
    CHECK_EQ_U64(err.offset, 5);
    CHECK_EQ_U64(f.count, 0);
    hp_domfold_free(&f);
    CHECK_EQ_U64(hp_domfold_build(&f, &d, &keys, HP_DOMFOLD_TOPS + 1, &counting, NULL, &err), HP_E_USAGE);
    hp_domfold_free(&f);
    hp_domtree_free(&d);
    CHECK_EQ_U64(countalloc_live, 0);
    free(idom);
}

/* Folds a deep and wide tree of n and finds a deep node's objects; the
 * first failure. */
static hp_code fold_everything(uint32_t n, const hp_checkpoint *cp)
{
    uint32_t *idom = xmalloc((size_t)n * 4), v, count, *members = NULL;
    hp_domtree d;
    hp_domfold f;
    hp_domfold_keys keys = { key_third, size_one, size_one, NULL };
    hp_error err;
    hp_code rc;
    for (v = 0; v < n; v++)
        idom[v] = v < 3 ? HP_DOM_VIRTUAL : v % 3 ? v - 1 : v / 2;
    rc = hp_domtree_build(&d, idom, n, NULL, NULL, NULL, &err);
    if (rc == HP_OK)
        rc = hp_domfold_build(&f, &d, &keys, 2, &counting, cp, &err);
    if (rc == HP_OK) {
        rc = hp_domfold_members(&f, &d, &keys, f.count - 1, &members, &count, cp, &err);
        if (members)
            f.alloc.free_fn(members);
    }
    hp_domfold_free(&f);
    hp_domtree_free(&d);
    free(idom);
    return rc;
}

static void test_fold_failures(void) { fail_every_way(fold_everything, "fold: ", 1, 8); }

/* ---- hp_reach_tree over dumps ---- */

typedef struct heap_groups {
    const hp_heap *h;
    uint32_t *of;
} heap_groups;

/* Whether d dominates v in r's tree (d == v counts). */
static int reach_dominates(const hp_reach *r, uint32_t d, uint32_t v)
{
    for (; v != HP_DOM_VIRTUAL && v != HP_NONE; v = hp_reach_tree_parent(r, v))
        if (v == d)
            return 1;
    return 0;
}

static void check_reach_tree(const hp_heap *h, hp_reach *r, int semantics, uint32_t *seed)
{
    uint32_t n = hp_heap_object_count(h), v, u, g, count, k, ngroups = 1 + xorshift(seed) % 4;
    const hp_domtree *tree;
    heap_groups hg = { h, xmalloc((size_t)n * 4 + 4) };
    uint64_t objects[4], shallow[4], retained[4], want_objects[4] = { 0 }, want_shallow[4] = { 0 },
             want_retained[4] = { 0 };
    hp_error err;
    CHECK_EQ_U64(hp_reach_tree(r, NULL, &tree, &err), HP_OK);
    for (v = 0; v <= n; v++) {
        uint32_t row = v == n ? HP_DOM_VIRTUAL : v;
        const uint32_t *kids = hp_domtree_children(tree, row, &count);
        for (k = 0; k < count; k++) {
            CHECK_EQ_U64(hp_reach_tree_parent(r, kids[k]), row);
            if (k > 0)
                CHECK(hp_reach_retained(r, kids[k - 1]) >= hp_reach_retained(r, kids[k]));
        }
    }
    for (v = 0; v < n; v++) {
        uint32_t x = xorshift(seed);
        hg.of[v] = x % 5 == 0 ? HP_NONE : x % ngroups;
        /* A shadow member now and then: it hides, counts for nothing. */
        if (x % 7 == 0 && hg.of[v] != HP_NONE)
            hg.of[v] |= HP_GROUP_SHADOW;
    }
    CHECK_EQ_U64(hp_reach_group_totals(r, hg.of, ngroups, objects, shallow, retained, NULL, &err),
                 HP_OK);
    for (v = 0; v < n; v++) {
        int top;
        int64_t size;
        if (hg.of[v] == HP_NONE || (hg.of[v] & HP_GROUP_SHADOW))
            continue;
        g = hg.of[v];
        want_objects[g]++;
        want_shallow[g] += hp_heap_shallow_size(h, v);
        top = hp_reach_tree_parent(r, v) != HP_NONE;
        for (u = 0; u < n && top; u++)
            if (u != v && hg.of[u] != HP_NONE && (hg.of[u] & ~HP_GROUP_SHADOW) == g && reach_dominates(r, u, v))
                top = 0;
        size = hp_reach_retained(r, v);
        if (top && size > 0)
            want_retained[g] += (uint64_t)size;
    }
    for (g = 0; g < ngroups; g++) {
        CHECK_EQ_U64(objects[g], want_objects[g]);
        CHECK_EQ_U64(shallow[g], want_shallow[g]);
        CHECK_EQ_U64(retained[g], want_retained[g]);
    }
    /* Under hprofkit, retained sizes are subtree sums: without shadows the
     * group's retained size is the size of the union of the subtrees. */
    if (semantics == HP_REACH_HPROFKIT) {
        for (v = 0; v < n; v++)
            if (hg.of[v] != HP_NONE)
                hg.of[v] &= ~HP_GROUP_SHADOW;
        CHECK_EQ_U64(hp_reach_group_totals(r, hg.of, ngroups, objects, shallow, retained, NULL, &err),
                     HP_OK);
        for (g = 0; g < ngroups; g++) {
            uint64_t union_size = 0;
            for (u = 0; u < n; u++) {
                int in = 0;
                for (v = 0; v < n && !in; v++)
                    in = hg.of[v] == g && hp_reach_tree_parent(r, u) != HP_NONE && reach_dominates(r, v, u);
                if (in)
                    union_size += hp_heap_shallow_size(h, u);
            }
            CHECK_EQ_U64(retained[g], union_size);
        }
    }
    free(hg.of);
}

/* ---- merged paths ---- */

/* A hash of one step of a path as the merged tree keys it: the root kind
 * or the reference (an array's elements as one), and the class. */
static uint64_t step_hash(uint64_t prefix, const hp_reach *r, const hp_heap *h, const uint32_t *vertices,
                          const uint32_t *edges, uint32_t i)
{
    uint64_t step;
    hp_object o;
    hp_heap_object(h, vertices[i], &o);
    step = o.kind == HP_KIND_CLASS ? 0x100000000ULL + o.self_ord : o.class_ord;
    if (i == 0) {
        hp_root root;
        hp_heap_root(h, hp_reach_root_record(r, edges[0]), &root);
        step = step * 31 + 1000 + (uint64_t)root.kind;
    } else if (hp_heap_object_kind(h, vertices[i - 1]) == HP_KIND_OBJ_ARRAY) {
        step = step * 31 + 7;
    } else {
        hp_ref ref;
        CHECK(hp_reach_edge(r, vertices[i - 1], edges[i], &ref));
        step = (step * 31 + 11 + ref.kind) * 1000003 + ref.slot;
    }
    return (prefix ^ step) * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
}

/* The merged tree of random targets against their paths folded by hand:
 * nodes named by the hash of their path of keys. */
static void check_merged(const hp_heap *h, hp_reach *r, uint32_t *seed)
{
    uint32_t n = hp_heap_object_count(h), ntargets = 1 + xorshift(seed) % (n + 2), k, i, j;
    uint32_t *targets = xmalloc((size_t)ntargets * 4), vertices[256], edges[256];
    uint64_t *node_hash, *seen_hash = xmalloc((size_t)n * 256 * 8 + 8);
    uint32_t nseen = 0, *seen_vertex = xmalloc((size_t)n * 256 * 4 + 4), reached = 0, unreached = 0;
    uint8_t *counted = calloc(n + 1, 1);
    hp_bfs b;
    hp_merged m;
    hp_error err;
    for (k = 0; k < ntargets; k++) /* duplicates, and one past the objects */
        targets[k] = k == 0 ? n : xorshift(seed) % n;
    CHECK_EQ_U64(hp_reach_paths(r, NULL, NULL, 0, 0, NULL, &b, &err), HP_OK);
    CHECK_EQ_U64(hp_reach_merged(r, &b, targets, ntargets, NULL, &m, &err), HP_OK);
    node_hash = xmalloc((size_t)m.count * 8 + 8);
    for (k = 0; k < m.count; k++) { /* parents first: a node's hash from its parent's */
        uint64_t step = m.class_object[k] ? 0x100000000ULL + m.cls[k] : m.cls[k];
        uint64_t prefix = m.parent[k] == HP_NONE ? 0 : node_hash[m.parent[k]];
        CHECK(m.parent[k] == HP_NONE || m.parent[k] < k);
        if (m.kind[k] == HP_MERGED_ROOT)
            step = step * 31 + 1000 + m.slot[k];
        else if (m.kind[k] == HP_REF_ELEMENT)
            step = step * 31 + 7;
        else
            step = (step * 31 + 11 + m.kind[k]) * 1000003 + m.slot[k];
        node_hash[k] = (prefix ^ step) * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    }
    for (k = 0; k < ntargets; k++) {
        uint32_t t = targets[k], len;
        uint64_t prefix = 0;
        if (t >= n || counted[t])
            continue;
        counted[t] = 1;
        len = hp_bfs_path(&b, t, vertices, edges, 256);
        if (len == 0) {
            unreached++;
            continue;
        }
        reached++;
        CHECK(len <= 256);
        for (i = 0; i < len && i < 256; i++) {
            prefix = step_hash(prefix, r, h, vertices, edges, i);
            seen_hash[nseen] = prefix;
            seen_vertex[nseen++] = vertices[i];
        }
    }
    CHECK_EQ_U64(m.reached, reached);
    CHECK_EQ_U64(m.unreached, unreached);
    /* Each node: the distinct vertices of its hash, their sizes; the targets through it. */
    for (k = 0; k < m.count; k++) {
        uint64_t objects = 0, shallow = 0, retained = 0, through = 0;
        for (i = 0; i < nseen; i++) {
            int first = seen_hash[i] == node_hash[k];
            for (j = 0; j < i && first; j++)
                if (seen_hash[j] == node_hash[k] && seen_vertex[j] == seen_vertex[i])
                    first = 0;
            if (!first)
                continue;
            objects++;
            shallow += hp_heap_shallow_size(h, seen_vertex[i]);
            retained += hp_reach_retained(r, seen_vertex[i]) > 0 ? (uint64_t)hp_reach_retained(r, seen_vertex[i]) : 0;
        }
        CHECK_EQ_U64(m.objects[k], objects);
        CHECK_EQ_U64(m.shallow[k], shallow);
        CHECK_EQ_U64(m.retained[k], retained);
        memset(counted, 0, n + 1);
        for (i = 0; i < ntargets; i++) { /* a target whose path holds the node's hash */
            uint64_t prefix = 0;
            uint32_t t = targets[i], len;
            if (t >= n || counted[t])
                continue;
            counted[t] = 1;
            len = hp_bfs_path(&b, t, vertices, edges, 256);
            for (j = 0; j < len && j < 256; j++) {
                prefix = step_hash(prefix, r, h, vertices, edges, j);
                if (prefix == node_hash[k]) {
                    through++;
                    break;
                }
            }
        }
        CHECK_EQ_U64(m.targets[k], through);
    }
    hp_merged_free(&m);
    hp_merged_free(&m); /* twice: harmless */
    hp_bfs_free(&b);
    free(targets);
    free(node_hash);
    free(seen_hash);
    free(seen_vertex);
    free(counted);
}

/* hp_reach_merged failing each of its allocations in turn frees all it
 * took (the tree it reads is built first, and kept by the reach). */
static void test_merged_failures(void)
{
    uint32_t seed = 99, targets[40], k, failures = 0;
    rk_spec s;
    bb dump;
    hp_heap_options opt;
    hp_heap *h;
    hp_reach *r;
    const hp_domtree *tree;
    hp_bfs b;
    hp_merged m;
    hp_error err;
    hp_code rc;
    size_t live;
    do
        rk_random_spec(&s, &seed);
    while (s.g.n < 30);
    rk_dump(&dump, &s.g);
    memset(&opt, 0, sizeof opt);
    CHECK_EQ_U64(hp_heap_build(dump.d, dump.len, &opt, &h, &err), HP_OK);
    CHECK_EQ_U64(hp_reach_build(h, HP_REACH_HPROFKIT, &counting, NULL, &r, &err), HP_OK);
    CHECK_EQ_U64(hp_reach_dominators(r, 1, NULL, &err), HP_OK);
    CHECK_EQ_U64(hp_reach_tree(r, NULL, &tree, &err), HP_OK);
    CHECK_EQ_U64(hp_reach_paths(r, NULL, NULL, 0, 0, NULL, &b, &err), HP_OK);
    for (k = 0; k < 40; k++)
        targets[k] = k % hp_heap_object_count(h);
    live = countalloc_live;
    for (countalloc_fail_call = 0;; countalloc_fail_call++) {
        countalloc_calls = 0;
        rc = hp_reach_merged(r, &b, targets, 40, NULL, &m, &err);
        if (rc != HP_E_NOMEM)
            break;
        CHECK_EQ_U64(countalloc_live, live);
        failures++;
    }
    countalloc_fail_call = (size_t)-1;
    CHECK_EQ_U64(rc, HP_OK);
    CHECK(failures >= 8 && m.count > 0);
    hp_merged_free(&m);
    CHECK_EQ_U64(countalloc_live, live);
    hp_bfs_free(&b);
    hp_reach_free(r);
    hp_heap_free(h);
    free(dump.d);
    CHECK_EQ_U64(countalloc_live, 0);
    printf("  merged paths: %u allocation failures, all freed\n", failures);
}

/* The class tree of a dump: every object of the dominator tree in one
 * node keyed by its class (class objects by the class they are), the
 * sizes of its nodes as the tree's; node 0 holds what the virtual root's
 * children retain. */
static void check_class_tree(const hp_heap *h, hp_reach *r, int semantics)
{
    hp_domfold f;
    const hp_domtree *tree;
    hp_error err;
    uint32_t node, k, count, *members, seen = 0, in_tree = 0, v;
    uint64_t top = 0;
    const uint32_t *kids;
    CHECK_EQ_U64(hp_reach_class_tree(r, 3, NULL, &f, &err), HP_OK);
    CHECK_EQ_U64(hp_reach_tree(r, NULL, &tree, &err), HP_OK);
    kids = hp_domtree_children(tree, HP_DOM_VIRTUAL, &count);
    for (k = 0; k < count; k++)
        top += (uint64_t)hp_reach_retained(r, kids[k]);
    for (node = 1; node < f.count; node++) {
        uint64_t shallow = 0;
        CHECK_EQ_U64(hp_reach_class_tree_members(r, &f, node, &members, &count, NULL, &err), HP_OK);
        CHECK_EQ_U64(count, f.objects[node]);
        for (k = 0; k < count; k++) {
            hp_object o;
            v = members[k];
            hp_heap_object(h, v, &o);
            CHECK_EQ_U64(f.key[node], hp_heap_object_kind(h, v) == HP_KIND_CLASS
                                          ? hp_heap_class_count(h) + o.self_ord
                                          : hp_heap_object_class(h, v));
            shallow += hp_reach_tree_shallow(r, tree, v);
            if (k < 3) /* the tops: the members in the order sample() sorts them (hp_domfold_members keeps rows) */
                CHECK(f.tops[(size_t)node * 3 + k] != HP_NONE);
        }
        for (k = count; k < 3; k++)
            CHECK_EQ_U64(f.tops[(size_t)node * 3 + k], HP_NONE);
        CHECK_EQ_U64(shallow, f.shallow[node]);
        seen += count;
        f.alloc.free_fn(members);
    }
    for (v = 0; v < hp_heap_object_count(h); v++)
        in_tree += hp_reach_tree_parent(r, v) != HP_NONE;
    CHECK_EQ_U64(seen, in_tree);
    if (semantics == HP_REACH_HPROFKIT)
        CHECK_EQ_U64(f.retained[0], top);
    hp_domfold_free(&f);
}

static void test_reach_tree(void)
{
    uint32_t seed = 4242, round;
    int semantics;
    for (round = 0; round < 200; round++)
        for (semantics = HP_REACH_HPROFKIT; semantics <= HP_REACH_VISUALVM; semantics++) {
            rk_spec s;
            bb dump;
            hp_heap_options opt;
            hp_heap *h;
            hp_reach *r;
            const hp_domtree *tree;
            hp_error err;
            rk_random_spec(&s, &seed);
            rk_dump(&dump, &s.g);
            memset(&opt, 0, sizeof opt);
            CHECK_EQ_U64(hp_heap_build(dump.d, dump.len, &opt, &h, &err), HP_OK);
            CHECK_EQ_U64(hp_reach_build(h, semantics, &counting, NULL, &r, &err), HP_OK);
            /* Before the dominators: refused. */
            CHECK_EQ_U64(hp_reach_tree(r, NULL, &tree, &err), HP_E_USAGE);
            CHECK(tree == NULL);
            CHECK_EQ_U64(hp_reach_dominators(r, 1, NULL, &err), HP_OK);
            check_reach_tree(h, r, semantics, &seed);
            check_merged(h, r, &seed);
            check_class_tree(h, r, semantics);
            hp_reach_free(r);
            CHECK_EQ_U64(countalloc_live, 0);
            hp_heap_free(h);
            free(dump.d);
        }
}

static double seconds(void) { return (double)clock() / CLOCKS_PER_SEC; }

static void run(const char *name, void (*test)(void))
{
    double t0 = seconds();
    test();
    printf("  %s: %.1f s\n", name, seconds() - t0);
    fflush(stdout);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    run("random trees", test_random_trees);
    run("hostile shapes", test_hostile);
    run("errors, aborts and failures", test_errors);
    run("fold by key, random trees", test_fold_random);
    run("fold by key, a deep chain and a star", test_fold_shapes);
    run("fold by key, aborts and failures", test_fold_failures);
    run("hp_reach_tree and merged paths on dumps", test_reach_tree);
    run("merged paths, allocation failures", test_merged_failures);
    return check_report("test_domtree");
}
