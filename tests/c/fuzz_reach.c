/* libFuzzer harness for reachability (hp_reach): the input is a whole
 * HPROF file; when its index builds, the graph, dominators, retained sizes
 * (by object and by class), the dominator tree's rows, group totals and
 * paths with rules are computed under both semantics and checked for
 * consistency: every path is made of edges that name the next vertex, a
 * dominator retains at least what it dominates, a reachable object retains
 * itself, each row lists what its object immediately dominates, largest
 * first, and a group's total is the union rule's.  Sanitizers catch the
 * rest.
 *
 * Built with -DHP_FUZZ_SEEDGEN it writes the seeds instead (`seedgen
 * OUTDIR DATADIR MAXLEN`): dumps shaped as small graphs (reachkit.h) with
 * cycles, self references, weak referents, frames and missing objects. */
#ifdef HP_FUZZ_SEEDGEN
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reachkit.h"
#include "hp_heap.h"
#include "hp_reach.h"
#include "hp_reach_tree.h"

static void die(const char *what)
{
    fprintf(stderr, "fuzz_reach: %s\n", what);
    abort();
}

static void check_paths(const hp_reach *r, const hp_bfs *b, uint32_t n)
{
    uint32_t v, vertices[64], edges[64];
    for (v = 0; v < n; v++) {
        uint32_t len = hp_bfs_path(b, v, vertices, edges, 64), k;
        if (hp_bit(b->visited, v) != (len > 0))
            die("a visited vertex without a path, or the reverse");
        if (len == 0 || len > 64)
            continue;
        if (edges[0] >= hp_reach_root_count(r) || hp_reach_roots(r)[edges[0]] != vertices[0])
            die("a path does not start at its root");
        for (k = 1; k < len; k++) {
            hp_ref ref;
            if (!hp_reach_edge(r, vertices[k - 1], edges[k], &ref) || ref.target != vertices[k])
                die("a path edge names another object");
        }
    }
}

/* The rows against hp_reach_tree_parent, and group totals (groups from the
 * input's bytes, a few shadows) against the union rule checked naively. */
static void check_tree(hp_reach *r, const hp_heap *h, const uint8_t *data, size_t size)
{
    const uint32_t n = hp_heap_object_count(h), ngroups = 1 + (size > 4 ? data[size - 4] % 5 : 0);
    uint32_t v, k, count, seen = 0, *group = malloc(((size_t)n + 1) * 4);
    uint64_t objects[6], shallow[6], retained[6], want[6] = { 0 };
    const hp_domtree *tree;
    hp_error err;
    if (!group)
        die("out of memory");
    if (hp_reach_tree(r, NULL, &tree, &err) != HP_OK)
        die("the tree did not build");
    for (v = 0; v <= n; v++) {
        uint32_t row = v == n ? HP_DOM_VIRTUAL : v;
        const uint32_t *kids = hp_domtree_children(tree, row, &count);
        for (k = 0; k < count; k++) {
            if (kids[k] >= n || hp_reach_tree_parent(r, kids[k]) != row)
                die("a row lists what its object does not immediately dominate");
            if (k > 0 && hp_reach_retained(r, kids[k - 1]) < hp_reach_retained(r, kids[k]) &&
                hp_reach_retained(r, kids[k - 1]) >= 0)
                die("a row is not largest retained first");
        }
        seen += count;
    }
    for (v = 0; v < n; v++) {
        uint8_t b = size ? data[v % size] : 0;
        group[v] = b % 4 == 0 ? HP_NONE : b % ngroups;
        if (group[v] != HP_NONE && b % 7 == 0)
            group[v] |= HP_GROUP_SHADOW;
        seen -= hp_reach_tree_parent(r, v) != HP_NONE;
    }
    if (seen != 0)
        die("the rows do not hold every object of the tree once");
    if (hp_reach_group_totals(r, group, ngroups, objects, shallow, retained, NULL, &err) != HP_OK)
        die("the group totals failed");
    for (v = 0; v < n && n <= 4096; v++) {
        uint32_t g = group[v], d;
        int64_t size_v = hp_reach_retained(r, v);
        if (g == HP_NONE || (g & HP_GROUP_SHADOW) || hp_reach_tree_parent(r, v) == HP_NONE)
            continue;
        for (d = hp_reach_tree_parent(r, v); d != HP_DOM_VIRTUAL; d = hp_reach_tree_parent(r, d))
            if (group[d] != HP_NONE && (group[d] & ~HP_GROUP_SHADOW) == g)
                break;
        if (d == HP_DOM_VIRTUAL && size_v > 0)
            want[g] += (uint64_t)size_v;
    }
    for (k = 0; k < ngroups && n <= 4096; k++)
        if (retained[k] != want[k])
            die("a group's retained size is not the union rule's");
    free(group);
}

static void run(const hp_heap *h, int semantics, const uint8_t *data, size_t size)
{
    const uint32_t n = hp_heap_object_count(h);
    hp_reach_matcher *m = NULL;
    hp_reach_rule rules[2];
    const uint64_t *by_class;
    hp_reach *r;
    hp_error err;
    hp_bfs b;
    uint32_t v, target;
    if (hp_reach_build(h, semantics, NULL, NULL, &r, &err) != HP_OK)
        die("the graph did not build");
    if (hp_reach_dominators(r, (int)(size & 1), NULL, &err) != HP_OK)
        die("the dominators failed");
    if (hp_reach_class_retained(r, NULL, &by_class, &err) != HP_OK)
        die("the retained sizes by class failed");
    check_tree(r, h, data, size);
    for (v = 0; v < n; v++) {
        uint32_t d = hp_reach_idom(r, v);
        int64_t size_v = hp_reach_retained(r, v);
        if (d != HP_NONE && (d >= n || hp_reach_retained_count(r, d) <= hp_reach_retained_count(r, v)))
            die("a dominator retains fewer objects than it dominates");
        if (semantics == HP_REACH_HPROFKIT && hp_reach_retained_count(r, v) &&
            size_v < (int64_t)hp_heap_shallow_size(h, v))
            die("a reachable object retains less than itself");
    }
    /* Rules from the input's last bytes: a field of some class, a thread. */
    memset(rules, 0, sizeof rules);
    rules[0].pattern = HP_RULE_FIELD;
    rules[0].edge = size > 1 && (data[size - 1] & 1) ? HP_EDGE_LOW : HP_EDGE_IGNORE;
    rules[0].cls = hp_heap_class_count(h) ? (size > 2 ? data[size - 2] : 0) % hp_heap_class_count(h) : 0;
    rules[0].name = "next";
    rules[0].name_len = 4;
    rules[1].pattern = HP_RULE_THREAD;
    rules[1].edge = HP_EDGE_LOW;
    rules[1].thread_serial = size > 3 ? data[size - 3] : 1;
    if (hp_heap_class_count(h) && hp_reach_matcher_new(r, rules, 2, NULL, &m, &err) != HP_OK)
        die("the rules did not compile");
    target = n ? (uint32_t)(size % n) : 0;
    if (hp_reach_paths(r, m, n ? &target : NULL, n ? 1 : 0, HP_PATHS_LEAVES, NULL, &b, &err) != HP_OK)
        die("the search failed");
    hp_bfs_free(&b);
    if (hp_reach_paths(r, m, NULL, 0, 0, NULL, &b, &err) != HP_OK)
        die("the full search failed");
    check_paths(r, &b, n);
    hp_bfs_free(&b);
    hp_reach_matcher_free(m);
    hp_reach_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hp_heap_options opt;
    hp_heap *h = NULL;
    hp_error err;
    memset(&opt, 0, sizeof opt);
    if (hp_heap_build(data, size, &opt, &h, &err) != HP_OK)
        return 0;
    run(h, HP_REACH_HPROFKIT, data, size);
    run(h, HP_REACH_VISUALVM, data, size);
    hp_heap_free(h);
    return 0;
}

#ifdef HP_FUZZ_SEEDGEN
#include "seedgen.h"

int main(int argc, char **argv)
{
    const char *out, *data_dir;
    size_t max, n_seeds = 0;
    uint32_t seed = 7;
    int round;
    if (seedgen_args(argc, argv, &out, &data_dir, &max) != 0)
        return 2;
    for (round = 0; round < 24; round++) {
        int next[12], other[12], items[4], k, n = 1 + round % 12;
        rk_root roots[4];
        rk_graph g;
        bb b;
        char path[4096];
        FILE *f;
        for (k = 0; k < n; k++) {
            next[k] = xorshift(&seed) % 5 == 0 ? RK_NULL : (int)(xorshift(&seed) % (uint32_t)n);
            other[k] = xorshift(&seed) % 7 == 0 ? RK_MISSING : (int)(xorshift(&seed) % (uint32_t)n);
        }
        for (k = 0; k < 4; k++) {
            items[k] = (int)(xorshift(&seed) % (uint32_t)n);
            roots[k].kind = k == 0 ? HP_SUB_ROOT_THREAD_OBJECT : k == 1 ? HP_SUB_ROOT_JAVA_FRAME : HP_SUB_ROOT_JNI_GLOBAL;
            roots[k].node = k == 3 ? RK_ROOT_WEAK : k == 2 && round % 3 == 0 ? RK_MISSING : (int)(xorshift(&seed) % (uint32_t)n);
            roots[k].serial = 1;
        }
        g.n = n;
        g.next = next;
        g.other = other;
        g.referent = (int)(xorshift(&seed) % (uint32_t)n);
        g.items = items;
        g.nitems = 4;
        g.roots = roots;
        g.nroots = 4;
        rk_dump(&b, &g);
        snprintf(path, sizeof path, "%s/reach-%d", out, round);
        f = fopen(path, "wb");
        if (f && fwrite(b.d, 1, b.len < max ? b.len : max, f) > 0)
            n_seeds++;
        if (f)
            fclose(f);
        free(b.d);
    }
    (void)data_dir;
    printf("seedgen: %zu seeds in %s\n", n_seeds, out);
    return n_seeds ? 0 : 1;
}
#endif
