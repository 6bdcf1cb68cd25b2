/* Shared by test_routes.c and the path fuzzers: a dump (4-byte ids) of
 * chosen classes and objects, and a model of the path search over it.
 *
 * Classes form a forest (class k extends parent[k] < k, or nothing); each
 * declares own[k] reference fields, named "f0", "f1"... (the same names in
 * many classes, as in real heaps), except that the class chosen as
 * java.lang.ref.Reference names its first "referent".  Objects are
 * instances (their reference slots in layout order: the class's own
 * fields, then its superclass's...) or Object[] arrays; a slot holds an
 * object, RK_NULL or RK_MISSING.  Roots are JNI globals.
 *
 * The model knows each edge's class under a set of rules (instance-field
 * rules by declaring class and name, root-class rules) and gives each
 * object its tier: the least, over the paths from the roots, of the worst
 * class of edge on the path (hp_paths.h), by one plain search per
 * threshold. */
#ifndef ROUTEKIT_H
#define ROUTEKIT_H

#include "reachkit.h"

#include "hp_reach.h"

enum { RT_CLASS0 = 0x100000, RT_ARRAY_CLASS = 0x90000, RT_OBJECT0 = 0x4000000, RT_MISSING = 0x7770 };

typedef struct rt_spec {
    int nclasses;
    int *parent, *own;  /* per class */
    int *refs, *up;     /* per class (rt_classes_done): its layout's slots, and the nearest of it and
                         * its superclasses declaring some (or -1) */
    int reference;      /* the class named java.lang.ref.Reference (its own[] >= 1), or -1 */
    int nobjects;
    int *cls;           /* per object: its class, or -1 for an Object[] */
    int *start;         /* per object + 1: its slots in `slots` */
    int *slots;
    int nroots;
    int *roots;         /* objects */
} rt_spec;

static inline uint64_t rt_id(int object) { return object == RK_NULL ? 0 : object == RK_MISSING ? RT_MISSING : RT_OBJECT0 + 8 * (uint64_t)object; }

/* Fills refs[] and up[] once the classes are set (parents before children). */
static inline void rt_classes_done(rt_spec *s)
{
    int k;
    s->refs = xmalloc((size_t)s->nclasses * sizeof(int));
    s->up = xmalloc((size_t)s->nclasses * sizeof(int));
    for (k = 0; k < s->nclasses; k++) {
        int p = s->parent[k];
        s->refs[k] = s->own[k] + (p >= 0 ? s->refs[p] : 0);
        s->up[k] = s->own[k] ? k : p >= 0 ? s->up[p] : -1;
    }
}

/* Reference slots of class c's layout (own and inherited). */
static inline int rt_refs(const rt_spec *s, int c) { return s->refs[c]; }

/* The class declaring slot `slot` of class c's layout, and its own index
 * there: a layout lists the class's own fields, then its superclass's. */
static inline int rt_declaring(const rt_spec *s, int c, int slot, int *own_index)
{
    for (c = c >= 0 ? s->up[c] : -1; c >= 0; c = s->parent[c] >= 0 ? s->up[s->parent[c]] : -1) {
        if (slot < s->own[c]) {
            *own_index = slot;
            return c;
        }
        slot -= s->own[c];
    }
    *own_index = -1;
    return -1;
}

static inline int rt_extends(const rt_spec *s, int c, int base)
{
    for (; c >= 0; c = s->parent[c])
        if (c == base)
            return 1;
    return 0;
}

static inline void rt_dump(bb *b, const rt_spec *s)
{
    uint8_t header[HP_HEADER_MAX];
    char name[32];
    int k, j, maxown = 1;
    memset(b, 0, sizeof *b);
    b->id = 4;
    bb_raw(b, header, hp_header_write(header, 2, 4, 1700000000000ULL));
    for (k = 0; k < s->nclasses; k++)
        maxown = s->own[k] > maxown ? s->own[k] : maxown;
    hk_string(b, 99, "referent");
    hk_string(b, 98, "[Ljava/lang/Object;");
    for (j = 0; j < maxown; j++) {
        snprintf(name, sizeof name, "f%d", j);
        hk_string(b, 100 + (uint64_t)j, name);
    }
    for (k = 0; k < s->nclasses; k++) {
        snprintf(name, sizeof name, "C%d", k);
        hk_string(b, 1000000 + (uint64_t)k, k == s->reference ? "java/lang/ref/Reference" : name);
        hk_load(b, (uint32_t)k + 1, RT_CLASS0 + 8 * (uint64_t)k, 1000000 + (uint64_t)k);
    }
    hk_load(b, (uint32_t)s->nclasses + 1, RT_ARRAY_CLASS, 98);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_SEGMENT);
    for (k = 0; k < s->nroots; k++) {
        bb_u1(b, HP_SUB_ROOT_JNI_GLOBAL);
        bb_id(b, rt_id(s->roots[k]));
        bb_id(b, 0x99);
    }
    for (k = 0; k < s->nclasses; k++) {
        bb_u1(b, HP_SUB_CLASS_DUMP);
        bb_id(b, RT_CLASS0 + 8 * (uint64_t)k);
        bb_u4(b, 1);
        bb_id(b, s->parent[k] >= 0 ? RT_CLASS0 + 8 * (uint64_t)s->parent[k] : 0);
        for (j = 0; j < 5; j++)
            bb_id(b, 0);
        bb_u4(b, 4 * (uint32_t)s->own[k]);
        bb_u2(b, 0);
        bb_u2(b, 0);
        bb_u2(b, (unsigned)s->own[k]);
        for (j = 0; j < s->own[k]; j++) {
            bb_id(b, k == s->reference && j == 0 ? 99 : 100 + (uint64_t)j);
            bb_u1(b, HP_T_OBJECT);
        }
    }
    rk_class_dump(b, RT_ARRAY_CLASS, 0, 0, 0, NULL, NULL); /* extends no class of the spec */
    for (k = 0; k < s->nobjects; k++) {
        int n = s->start[k + 1] - s->start[k];
        if (s->cls[k] < 0) {
            bb_u1(b, HP_SUB_OBJ_ARRAY_DUMP);
            bb_id(b, rt_id(k));
            bb_u4(b, 1);
            bb_u4(b, (uint32_t)n);
            bb_id(b, RT_ARRAY_CLASS);
        } else {
            hk_instance_head(b, rt_id(k), RT_CLASS0 + 8 * (uint64_t)s->cls[k], 4 * (uint32_t)n);
        }
        for (j = s->start[k]; j < s->start[k + 1]; j++)
            bb_id(b, rt_id(s->slots[j]));
    }
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(b);
}

/* ---- the model ---- */

typedef struct rt_rule {
    int pattern; /* HP_RULE_FIELD (declaring class + own index) or HP_RULE_ROOT_CLASS */
    int edge;    /* HP_EDGE_LOW or HP_EDGE_IGNORE */
    int cls, own_index;
} rt_rule;

/* The class of slot `slot` of object o (HP_EDGE_*): the first rule
 * matching its field (its number in *rule, else -1), WEAK for a referent,
 * else NORMAL. */
static inline int rt_slot_class(const rt_spec *s, const rt_rule *rules, int nrules, int o, int slot, int *rule)
{
    int own, d, k;
    *rule = -1;
    if (s->cls[o] < 0)
        return HP_EDGE_NORMAL;
    d = rt_declaring(s, s->cls[o], slot, &own);
    if (d == s->reference && own == 0)
        return HP_EDGE_WEAK;
    for (k = 0; k < nrules; k++)
        if (rules[k].pattern == HP_RULE_FIELD && rules[k].cls == d && rules[k].own_index == own) {
            *rule = k;
            return rules[k].edge;
        }
    return HP_EDGE_NORMAL;
}

static inline int rt_root_class(const rt_spec *s, const rt_rule *rules, int nrules, int o, int *rule)
{
    int k;
    *rule = -1;
    for (k = 0; k < nrules; k++)
        if (rules[k].pattern == HP_RULE_ROOT_CLASS && s->cls[o] >= 0 && rt_extends(s, s->cls[o], rules[k].cls)) {
            *rule = k;
            return rules[k].edge;
        }
    return HP_EDGE_NORMAL;
}

/* ---- random shapes ---- */

/* Numbers for a spec: the bytes of a fuzzer's input, then a xorshift stream. */
typedef struct rt_src {
    const uint8_t *data;
    size_t size, pos;
    uint32_t seed;
} rt_src;

static inline uint32_t rt_next(rt_src *src, uint32_t bound)
{
    uint32_t v;
    if (src->pos + 2 <= src->size) {
        v = (uint32_t)src->data[src->pos] << 8 | src->data[src->pos + 1];
        src->pos += 2;
    } else {
        v = xorshift(&src->seed);
    }
    return bound ? v % bound : 0;
}

static inline void rt_free(rt_spec *s)
{
    free(s->parent);
    free(s->own);
    free(s->refs);
    free(s->up);
    free(s->cls);
    free(s->start);
    free(s->slots);
    free(s->roots);
    memset(s, 0, sizeof *s);
}

/* The shapes the tests and fuzzers draw: `depth` classes in a chain (with
 * side branches), few of them declaring fields; `nobjects` objects, a
 * third of them Object[] of up to `width` slots, the others instances of
 * random classes; slots pointing mostly forward (chains), some back,
 * some null or missing; a Reference class when `reference`. */
static inline void rt_random(rt_spec *s, rt_src *src, int depth, int nobjects, int width, int reference)
{
    int k, j, nslots = 0;
    memset(s, 0, sizeof *s);
    s->nclasses = depth + 3;
    s->parent = xmalloc((size_t)s->nclasses * sizeof(int));
    s->own = xmalloc((size_t)s->nclasses * sizeof(int));
    for (k = 0; k < s->nclasses; k++) {
        uint32_t r = rt_next(src, 64);
        s->parent[k] = k == 0 ? -1 : r < 8 ? (int)rt_next(src, (uint32_t)k) : k - 1; /* mostly a chain */
        s->own[k] = k == 0 ? 1 : r % 16 == 1 ? 1 + (int)(r % 3) : 0;
    }
    s->reference = reference ? 1 : -1;
    if (reference)
        s->own[1] = s->own[1] ? s->own[1] : 1;
    rt_classes_done(s);
    s->nobjects = nobjects;
    s->cls = xmalloc((size_t)(nobjects + 1) * sizeof(int));
    s->start = xmalloc((size_t)(nobjects + 1) * sizeof(int));
    for (k = 0; k < nobjects; k++) {
        s->cls[k] = rt_next(src, 3) == 0 ? -1 : (int)rt_next(src, (uint32_t)s->nclasses);
        s->start[k] = nslots;
        nslots += s->cls[k] < 0 ? (int)rt_next(src, (uint32_t)width + 1) : rt_refs(s, s->cls[k]);
    }
    s->start[nobjects] = nslots;
    s->slots = xmalloc((size_t)(nslots + 1) * sizeof(int));
    for (k = 0; k < nobjects; k++)
        for (j = s->start[k]; j < s->start[k + 1]; j++) {
            uint32_t r = rt_next(src, 100);
            s->slots[j] = r < 15 ? RK_NULL : r < 18 ? RK_MISSING : r < 80 ? (k + 1 + (int)(r % 3)) % nobjects
                                                                        : (int)rt_next(src, (uint32_t)nobjects);
        }
    s->nroots = 1 + (int)rt_next(src, 4);
    s->roots = xmalloc((size_t)s->nroots * sizeof(int));
    for (k = 0; k < s->nroots; k++)
        s->roots[k] = k == 0 ? 0 : rt_next(src, 9) == 0 ? RK_MISSING : (int)rt_next(src, (uint32_t)nobjects);
}

/* Up to 4 rules on the spec's fields and classes (LOW or IGNORE). */
static inline int rt_random_rules(const rt_spec *s, rt_src *src, rt_rule *rules)
{
    int n = (int)rt_next(src, 5), k;
    for (k = 0; k < n; k++) {
        int c = (int)rt_next(src, (uint32_t)s->nclasses);
        rules[k].edge = rt_next(src, 2) ? HP_EDGE_LOW : HP_EDGE_IGNORE;
        if (rt_next(src, 4) == 0 || s->own[c] == 0) {
            rules[k].pattern = HP_RULE_ROOT_CLASS;
            rules[k].cls = c;
            rules[k].own_index = -1;
        } else {
            rules[k].pattern = HP_RULE_FIELD;
            rules[k].cls = c;
            rules[k].own_index = (int)rt_next(src, (uint32_t)s->own[c]);
        }
    }
    return n;
}

/* ---- the tiers ---- */

/* tier[o]: HP_TIER_* or HP_ROUTE_NONE; dist0[o]: the plain BFS distance
 * over NORMAL edges (-1 when none). */
static inline void rt_model(const rt_spec *s, const rt_rule *rules, int nrules, int *tier, int *dist0)
{
    int *queue = xmalloc((size_t)(s->nobjects + 1) * sizeof(int)), *dist = xmalloc((size_t)(s->nobjects + 1) * sizeof(int));
    int t, o, k, rule;
    for (o = 0; o < s->nobjects; o++)
        tier[o] = HP_ROUTE_NONE;
    for (t = HP_TIER_WEAK; t >= HP_TIER_NORMAL; t--) {
        int head = 0, tail = 0;
        for (o = 0; o < s->nobjects; o++)
            dist[o] = -1;
        for (k = 0; k < s->nroots; k++) {
            int r = s->roots[k];
            if (r >= 0 && dist[r] < 0 && rt_root_class(s, rules, nrules, r, &rule) <= t) {
                dist[r] = 0;
                queue[tail++] = r;
            }
        }
        while (head < tail) {
            int u = queue[head++], j;
            for (j = s->start[u]; j < s->start[u + 1]; j++) {
                int v = s->slots[j];
                if (v >= 0 && dist[v] < 0 && rt_slot_class(s, rules, nrules, u, j - s->start[u], &rule) <= t) {
                    dist[v] = dist[u] + 1;
                    queue[tail++] = v;
                }
            }
        }
        for (o = 0; o < s->nobjects; o++)
            if (dist[o] >= 0)
                tier[o] = t;
        if (t == HP_TIER_NORMAL)
            for (o = 0; o < s->nobjects; o++)
                dist0[o] = dist[o];
    }
    free(queue);
    free(dist);
}

/* The rules as hp_reach_rule against the dump's classes. */
static inline void rt_rules(const rt_spec *s, const hp_heap *h, const rt_rule *rules, int nrules, hp_reach_rule *out,
                            char (*names)[16])
{
    int k;
    memset(out, 0, (size_t)nrules * sizeof *out);
    for (k = 0; k < nrules; k++) {
        out[k].pattern = rules[k].pattern;
        out[k].edge = rules[k].edge;
        out[k].cls = hp_heap_find_class_id(h, RT_CLASS0 + 8 * (uint64_t)rules[k].cls);
        if (rules[k].pattern == HP_RULE_FIELD) {
            if (rules[k].cls == s->reference && rules[k].own_index == 0)
                snprintf(names[k], 16, "referent");
            else
                snprintf(names[k], 16, "f%d", rules[k].own_index);
            out[k].name = names[k];
            out[k].name_len = strlen(names[k]);
        }
    }
}

#ifdef RT_DEBUG
#define RT_BAD(what) (fprintf(stderr, "rt: %s (target %d, tier %d model %d)\n", what, o, rt->tier[i], tier[o]), 1)
#else
#define RT_BAD(what) 1
#endif

static inline int rt_object_of(const hp_heap *h, uint32_t v)
{
    uint64_t id = hp_heap_object_id(h, v);
    return id >= RT_OBJECT0 ? (int)((id - RT_OBJECT0) / 8) : -1;
}

/* Checks the routes of `targets` (objects) against the model: each is
 * made of the holders' references, named by their slots (the namer, twice,
 * and hp_reach_edge agree), its worst edge is its tier, its rule the first
 * edge's raising it there; without `leaves` the tier is the model's and a
 * strong path is a shortest one; with `leaves` no target is on the way to
 * another.  Returns the failures. */
static inline int rt_check_routes(const rt_spec *s, const hp_heap *h, const hp_reach *r, const rt_rule *rules,
                                  int nrules, const int *targets, int ntargets, const hp_reach_routes *rt, int leaves)
{
    int *tier = xmalloc((size_t)(s->nobjects + 1) * sizeof(int)), *dist0 = xmalloc((size_t)(s->nobjects + 1) * sizeof(int));
    uint8_t *is_target = calloc((size_t)s->nobjects + 1, 1);
    uint32_t *nodes = xmalloc((size_t)(s->nobjects + 2) * 4);
    hp_reach_namer *nm = hp_reach_namer_new(r);
    const hp_bfs_tree *t = &rt->tree;
    int i, bad = 0, pass;
    uint32_t k;
    rt_model(s, rules, nrules, tier, dist0);
    for (i = 0; i < ntargets; i++)
        is_target[targets[i]] = 1;
    for (k = 0; k < t->count; k++)
        bad += t->parent[k] != HP_NONE && t->parent[k] >= k; /* parents first */
    for (pass = 0; pass < 2; pass++) /* the namer's second pass reads its tables */
        for (i = 0; i < ntargets; i++) {
            int o = targets[i], worst = HP_EDGE_NORMAL, first_rule = -1;
            uint32_t node = t->node[i], len, j;
            if (!leaves && rt->tier[i] != tier[o]) {
                bad += RT_BAD("tier");
                continue;
            }
            if (node == HP_NONE) {
                bad += rt->tier[i] != HP_ROUTE_NONE || rt->rule[i] != -1;
                continue;
            }
            len = hp_bfs_tree_path(t, node, nodes, (uint32_t)s->nobjects + 2);
            if (rt_object_of(h, t->vertex[nodes[len - 1]]) != o || t->tier[node] != rt->tier[i]) {
                bad += RT_BAD("route end");
                continue;
            }
            if (!leaves && tier[o] == HP_TIER_NORMAL && (int)len != dist0[o] + 1)
                bad += RT_BAD("length");
            for (j = 0; j < len; j++) {
                uint32_t v = t->vertex[nodes[j]];
                int here = rt_object_of(h, v), cls, rule;
                hp_ref ref, direct;
                if (j == 0) {
                    bad += t->edge[nodes[0]] >= hp_reach_root_count(r) || hp_reach_roots(r)[t->edge[nodes[0]]] != v;
                    cls = rt_root_class(s, rules, nrules, here, &rule);
                } else {
                    uint32_t u = t->vertex[nodes[j - 1]];
                    int holder = rt_object_of(h, u);
                    if (hp_reach_namer_edge(nm, u, t->edge[nodes[j]], &ref) != 1 || ref.target != v ||
                        hp_reach_edge(r, u, t->edge[nodes[j]], &direct) != 1 || direct.slot != ref.slot ||
                        direct.kind != ref.kind || (int)ref.slot >= s->start[holder + 1] - s->start[holder] ||
                        s->slots[s->start[holder] + (int)ref.slot] != here) {
                        bad += RT_BAD("edge");
                        break;
                    }
                    cls = rt_slot_class(s, rules, nrules, holder, (int)ref.slot, &rule);
                }
                if (cls > worst) {
                    worst = cls;
                    first_rule = rule;
                }
                if (leaves && j + 1 < len)
                    bad += is_target[here]; /* another target on the way */
            }
            bad += worst != rt->tier[i] && RT_BAD("worst");
            bad += (worst == HP_TIER_LOW || worst == HP_TIER_IGNORED ? first_rule : -1) != rt->rule[i] && RT_BAD("rule");
        }
    hp_reach_namer_free(nm);
    free(tier);
    free(dist0);
    free(is_target);
    free(nodes);
    return bad;
}

/* ---- the fuzzers' body ---- */

/* One input of fuzz_paths_*: the spec its bytes draw (depth, objects and
 * array width up to the maxima), its routes under random rules checked
 * against the model (every object when few, else the last 16 and some
 * others; then some as leaves), and the same search under VisualVM's
 * semantics (no model: the tree and the namer must hold).  Aborts on a
 * disagreement; the sanitizers catch the rest. */
static inline void rt_fuzz(const uint8_t *data, size_t size, int max_depth, int max_objects, int max_width)
{
    rt_src src = { data, size, 0, (uint32_t)size | 1 };
    int depth = 1 + (int)rt_next(&src, (uint32_t)max_depth), nobjects = 1 + (int)rt_next(&src, (uint32_t)max_objects);
    int width = (int)rt_next(&src, (uint32_t)max_width + 1), reference = (int)rt_next(&src, 2), semantics;
    int nrules, ntargets, *targets, k;
    hp_reach_rule hr[4];
    char names[4][16];
    hp_heap_options opt;
    rt_rule rules[4];
    hp_heap *h;
    hp_error err;
    rt_spec s;
    bb dump;
    rt_random(&s, &src, depth, nobjects, width, reference);
    nrules = rt_random_rules(&s, &src, rules);
    ntargets = nobjects <= 300 ? nobjects : 24;
    targets = xmalloc((size_t)ntargets * sizeof(int));
    for (k = 0; k < ntargets; k++)
        targets[k] = nobjects <= 300 ? k : k < 16 ? nobjects - 1 - k : (int)rt_next(&src, (uint32_t)nobjects);
    rt_dump(&dump, &s);
    memset(&opt, 0, sizeof opt);
    if (hp_heap_build(dump.d, dump.len, &opt, &h, &err) != HP_OK) {
        fprintf(stderr, "rt_fuzz: the heap did not build: %s\n", err.detail ? err.detail : "?");
        abort();
    }
    rt_rules(&s, h, rules, nrules, hr, names);
    for (semantics = 0; semantics < 2; semantics++) {
        uint32_t *vertices = xmalloc((size_t)ntargets * 4);
        hp_reach_routes rt;
        hp_reach *r;
        int leaves;
        if (hp_reach_build(h, semantics, NULL, NULL, &r, &err) != HP_OK)
            abort();
        for (k = 0; k < ntargets; k++)
            vertices[k] = hp_heap_find(h, rt_id(targets[k]));
        for (leaves = 0; leaves < 2; leaves++) {
            int n = leaves ? (ntargets < 8 ? ntargets : 8) : ntargets, bad;
            if (hp_reach_routes_find(r, hr, (size_t)nrules, vertices, (size_t)n, leaves ? HP_PATHS_LEAVES : 0, NULL,
                                     &rt, &err) != HP_OK)
                abort();
            if (semantics == HP_REACH_HPROFKIT)
                bad = rt_check_routes(&s, h, r, rules, nrules, targets, n, &rt, leaves);
            else {
                uint32_t j;
                for (bad = 0, j = 0; j < rt.tree.count; j++)
                    bad += rt.tree.parent[j] != HP_NONE && rt.tree.parent[j] >= j;
            }
            hp_reach_routes_free(&rt);
            if (bad) {
                fprintf(stderr, "rt_fuzz: %d disagreements (semantics %d, leaves %d)\n", bad, semantics, leaves);
                abort();
            }
        }
        free(vertices);
        hp_reach_free(r);
    }
    hp_heap_free(h);
    free(dump.d);
    free(targets);
    rt_free(&s);
}

/* Seeds for fuzz_paths_*: inputs of random bytes (any input draws a spec). */
static inline int rt_seedgen(int argc, char **argv, const char *prefix)
{
    uint32_t seed = 11;
    int k, written = 0;
    if (argc != 4) {
        fprintf(stderr, "usage: %s OUTDIR DATADIR MAXLEN\n", argv[0]);
        return 2;
    }
    for (k = 0; k < 16; k++) {
        char path[4096];
        uint8_t bytes[512];
        size_t j, n = 16 + (size_t)k * 31;
        FILE *f;
        for (j = 0; j < n; j++)
            bytes[j] = (uint8_t)xorshift(&seed);
        snprintf(path, sizeof path, "%s/%s-%d", argv[1], prefix, k);
        if ((f = fopen(path, "wb")) != NULL) {
            written += fwrite(bytes, 1, n, f) == n;
            fclose(f);
        }
    }
    printf("seedgen: %d seeds in %s\n", written, argv[1]);
    return written ? 0 : 1;
}

#endif
