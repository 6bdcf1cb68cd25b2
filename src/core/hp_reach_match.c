/* Paths from GC roots: reference rules compiled into the edge classes of
 * the two-queue search (hp_paths.h). */
#include "hp_reach_impl.h"

#include <string.h>

struct hp_reach_matcher {
    const hp_reach *r;
    hp_reach_rule *rules;
    size_t nrules;
    /* Instance-field rules: per class, the first of the links of the rules
     * that apply to it (declared by it or a superclass).  A class's links
     * go on with its superclass's, so they cost one per rule. */
    uint32_t *field_head;    /* per class: a link, or HP_NONE */
    uint32_t *links;         /* (rule, class_refs[declaring] - own position, next link) triples */
    uint32_t nlinks;
    uint32_t *static_rules;  /* (class object vertex, static number, rule) */
    size_t nstatic;
    uint32_t *root_rules;    /* the thread and root-class rules */
    size_t nroot_rules;
    int32_t *root_rule;      /* per root position: the rule, or -1 (NULL: no root rules) */
    uint64_t *special;       /* vertices whose edges a rule may match */
    reach_cursor cursor;     /* the edge named last: the search asks in row order */
};

/* The links of the instance-field rules: superclasses first, each class
 * starts from its superclass's first link and adds the rules it declares.
 * O(classes + rules), whatever the depth of the hierarchy. */
static hp_code compile_fields(hp_reach_matcher *m, hp_pacer *pacer)
{
    const hp_reach *r = m->r;
    uint32_t *declared = hp_array_new(&r->alloc, r->nclasses, 4), *next_declared = NULL, c, i;
    size_t k;
    hp_code rc = HP_OK;
    m->field_head = hp_array_new(&r->alloc, r->nclasses, 4);
    m->links = hp_array_new(&r->alloc, m->nrules * 3 + 1, 4);
    next_declared = hp_array_new(&r->alloc, m->nrules, 4);
    if (!declared || !m->field_head || !m->links || !next_declared) {
        rc = HP_E_NOMEM;
        goto done;
    }
    /* The rules each class declares, as lists (rule order kept: built backwards). */
    for (c = 0; c < r->nclasses; c++)
        declared[c] = HP_NONE;
    for (k = m->nrules; k-- > 0;) {
        const hp_reach_rule *rule = &m->rules[k];
        if (rule->pattern != HP_RULE_FIELD)
            continue;
        next_declared[k] = declared[rule->cls];
        declared[rule->cls] = (uint32_t)k;
    }
    for (i = 0; i < r->nclasses; i++) {
        uint32_t cls = r->class_order[i], super = r->class_super[cls];
        uint32_t head = super != HP_NONE ? m->field_head[super] : HP_NONE;
        uint32_t j;
        for (j = declared[cls]; j != HP_NONE; j = next_declared[j]) {
            const hp_reach_rule *rule = &m->rules[j];
            uint32_t own = reach_own_ref_slot(r->heap, cls, rule->name, rule->name_len);
            if (own == HP_NONE)
                continue;
            m->links[3 * m->nlinks] = j;
            m->links[3 * m->nlinks + 1] = r->class_refs[cls] - own;
            m->links[3 * m->nlinks + 2] = head;
            head = m->nlinks++;
        }
        m->field_head[cls] = head;
        if (hp_pace(pacer, 1)) {
            rc = HP_E_ABORTED;
            goto done;
        }
    }
done:
    r->alloc.free_fn(declared);
    r->alloc.free_fn(next_declared);
    return rc;
}

static hp_code compile_statics(hp_reach_matcher *m)
{
    const hp_reach *r = m->r;
    size_t k;
    m->static_rules = hp_array_new(&r->alloc, m->nrules * 3 + 1, 4);
    if (!m->static_rules)
        return HP_E_NOMEM;
    for (k = 0; k < m->nrules; k++) {
        const hp_reach_rule *rule = &m->rules[k];
        hp_static_iter it;
        hp_field f;
        if (rule->pattern != HP_RULE_STATIC)
            continue;
        hp_static_iter_init(&it, r->heap, rule->cls);
        while (hp_static_next(&it, &f))
            if (f.type == HP_T_OBJECT && hp_heap_field_is(r->heap, &f, rule->name, rule->name_len)) {
                m->static_rules[3 * m->nstatic] = r->class_object[rule->cls];
                m->static_rules[3 * m->nstatic + 1] = f.offset;
                m->static_rules[3 * m->nstatic++ + 2] = (uint32_t)k;
                if (r->class_object[rule->cls] != HP_NONE)
                    hp_bit_set(m->special, r->class_object[rule->cls]);
                break;
            }
    }
    return HP_OK;
}

static int root_rule(const hp_reach_matcher *m, size_t pos)
{
    const hp_reach *r = m->r;
    hp_root root;
    size_t k;
    hp_heap_root(r->heap, r->root_records[pos], &root);
    for (k = 0; k < m->nroot_rules; k++) {
        const hp_reach_rule *rule = &m->rules[m->root_rules[k]];
        if (rule->pattern == HP_RULE_THREAD && root.thread_serial == rule->thread_serial &&
            (root.kind == HP_SUB_ROOT_JAVA_FRAME || root.kind == HP_SUB_ROOT_JNI_LOCAL))
            return (int)m->root_rules[k];
        if (rule->pattern == HP_RULE_ROOT_CLASS &&
            reach_extends(r, hp_heap_object_class(r->heap, root.index), rule->cls))
            return (int)m->root_rules[k];
    }
    return -1;
}

static hp_code compile_roots(hp_reach_matcher *m, hp_pacer *pacer)
{
    const hp_reach *r = m->r;
    size_t k;
    m->root_rules = hp_array_new(&r->alloc, m->nrules, 4);
    if (!m->root_rules)
        return HP_E_NOMEM;
    for (k = 0; k < m->nrules; k++)
        if (m->rules[k].pattern == HP_RULE_THREAD || m->rules[k].pattern == HP_RULE_ROOT_CLASS)
            m->root_rules[m->nroot_rules++] = (uint32_t)k;
    if (!m->nroot_rules)
        return HP_OK;
    m->root_rule = hp_array_new(&r->alloc, r->nroots, 4);
    if (!m->root_rule)
        return HP_E_NOMEM;
    for (k = 0; k < r->nroots; k++) {
        m->root_rule[k] = root_rule(m, k);
        if (hp_pace(pacer, m->nroot_rules))
            return HP_E_ABORTED;
    }
    return HP_OK;
}

/* The instances whose class has a matched field (or, under visualvm, a
 * referent the search skips). */
static hp_code mark_special(hp_reach_matcher *m, hp_pacer *pacer)
{
    const hp_reach *r = m->r;
    uint32_t v;
    for (v = 0; v < r->n; v++) {
        uint32_t c = hp_heap_object_class(r->heap, v);
        if (c != HP_NONE && hp_heap_object_kind(r->heap, v) == HP_KIND_INSTANCE &&
            (m->field_head[c] != HP_NONE || (r->semantics == HP_REACH_VISUALVM && r->referent_slot[c] != HP_NONE)))
            hp_bit_set(m->special, v);
        if ((v & 0xFFFF) == 0xFFFF && hp_pace(pacer, 0x10000))
            return HP_E_ABORTED;
    }
    return HP_OK;
}

hp_code hp_reach_matcher_new(const hp_reach *r, const hp_reach_rule *rules, size_t nrules,
                             const hp_checkpoint *cp, hp_reach_matcher **out, hp_error *err)
{
    hp_pacer pacer = { cp, 0 };
    hp_reach_matcher *m;
    hp_code rc;
    size_t k;
    *out = NULL;
    for (k = 0; k < nrules; k++) {
        if ((rules[k].pattern == HP_RULE_FIELD || rules[k].pattern == HP_RULE_STATIC ||
             rules[k].pattern == HP_RULE_ROOT_CLASS) && rules[k].cls >= r->nclasses)
            return hp_vertex_fail(err, HP_E_USAGE, k, "a rule names no class of the dump");
        if (rules[k].pattern > HP_RULE_ROOT_CLASS || rules[k].pattern < 0 ||
            (rules[k].edge != HP_EDGE_LOW && rules[k].edge != HP_EDGE_IGNORE))
            return hp_vertex_fail(err, HP_E_USAGE, k, "bad rule");
    }
    if (nrules > UINT32_MAX / 3)
        return hp_vertex_fail(err, HP_E_USAGE, nrules, "too many rules");
    m = r->alloc.malloc_fn(sizeof *m);
    if (!m)
        return hp_graph_stop(err, HP_E_NOMEM);
    memset(m, 0, sizeof *m);
    m->r = r;
    m->cursor.v = HP_NONE;
    m->nrules = nrules;
    m->rules = hp_array_new(&r->alloc, nrules, sizeof *rules);
    m->special = hp_bits_new(&r->alloc, r->n);
    rc = m->rules && m->special ? HP_OK : HP_E_NOMEM;
    if (rc == HP_OK) {
        if (nrules)
            memcpy(m->rules, rules, nrules * sizeof *rules);
        rc = compile_fields(m, &pacer);
    }
    if (rc == HP_OK)
        rc = compile_statics(m);
    if (rc == HP_OK)
        rc = compile_roots(m, &pacer);
    if (rc == HP_OK)
        rc = mark_special(m, &pacer);
    if (rc != HP_OK) {
        hp_reach_matcher_free(m);
        return hp_graph_stop(err, rc);
    }
    *out = m;
    return HP_OK;
}

void hp_reach_matcher_free(hp_reach_matcher *m)
{
    if (!m)
        return;
    m->r->alloc.free_fn(m->rules);
    m->r->alloc.free_fn(m->field_head);
    m->r->alloc.free_fn(m->links);
    m->r->alloc.free_fn(m->static_rules);
    m->r->alloc.free_fn(m->root_rules);
    m->r->alloc.free_fn(m->root_rule);
    m->r->alloc.free_fn(m->special);
    m->r->alloc.free_fn(m);
}

/* The reference of edge `pos` of v, reusing the cursor when the search
 * walks a row in order. */
static int edge_ref(hp_reach_matcher *m, uint32_t v, uint32_t pos, hp_ref *out)
{
    reach_cursor *c = &m->cursor;
    if (c->v != v || c->next > pos + 1 || c->next == 0)
        reach_cursor_init(m->r, c, v);
    while (c->next <= pos)
        if (!reach_cursor_step(m->r, c, out))
            return 0;
    *out = c->last;
    return 1;
}

/* The rule of an edge, or -1; *skip: a referent VisualVM's search skips. */
static int edge_rule(hp_reach_matcher *m, uint32_t v, uint32_t pos, int *skip)
{
    const hp_reach *r = m->r;
    hp_ref ref;
    uint32_t k, cls;
    *skip = 0;
    if (v == HP_MARK)
        return m->root_rule ? m->root_rule[pos] : -1;
    if (v >= r->n || !hp_bit(m->special, v) || !edge_ref(m, v, pos, &ref))
        return -1;
    cls = hp_heap_object_class(r->heap, v);
    if (ref.kind == HP_REF_FIELD && cls != HP_NONE) {
        uint32_t best = HP_NONE;
        for (k = m->field_head[cls]; k != HP_NONE; k = m->links[3 * k + 2])
            if (r->class_refs[cls] - m->links[3 * k + 1] == ref.slot && m->links[3 * k] < best)
                best = m->links[3 * k];
        if (best != HP_NONE)
            return (int)best;
        *skip = r->semantics == HP_REACH_VISUALVM && reach_is_referent(r, cls, &ref);
    } else if (ref.kind == HP_REF_STATIC) {
        for (k = 0; k < m->nstatic; k++)
            if (m->static_rules[3 * k] == v && m->static_rules[3 * k + 1] == ref.slot)
                return (int)m->static_rules[3 * k + 2];
    }
    return -1;
}

int hp_reach_matcher_rule(hp_reach_matcher *m, uint32_t v, uint32_t pos)
{
    int skip;
    return edge_rule(m, v, pos, &skip);
}

static int classify(void *ctx, uint32_t v, uint32_t index, uint32_t target)
{
    hp_reach_matcher *m = ctx;
    int skip, rule = edge_rule(m, v, index, &skip);
    (void)target;
    if (skip)
        return HP_EDGE_WEAK;
    return rule >= 0 ? m->rules[rule].edge : HP_EDGE_NORMAL;
}

/* hprofkit: a Reference's referent, the weak edge the graph leaves out. */
static int weak_referent(void *ctx, uint32_t v, uint32_t *target)
{
    hp_ref ref;
    if (!reach_weak_edge(ctx, v, &ref))
        return 0;
    *target = ref.target;
    return 1;
}

hp_code hp_reach_paths(const hp_reach *r, hp_reach_matcher *m, const uint32_t *targets, size_t ntargets, int flags,
                       const hp_checkpoint *cp, hp_bfs *out, hp_error *err)
{
    hp_reach_matcher *own = NULL;
    uint64_t *leaves = NULL;
    hp_bfs_spec spec;
    hp_code rc;
    size_t k;
    memset(out, 0, sizeof *out);
    out->alloc = r->alloc; /* hp_bfs_free is safe whatever fails */
    if (!m) {
        if ((rc = hp_reach_matcher_new(r, NULL, 0, cp, &own, err)) != HP_OK)
            return rc;
        m = own;
    }
    if (ntargets && (flags & HP_PATHS_LEAVES)) {
        leaves = hp_bits_new(&r->alloc, r->n);
        if (!leaves) {
            hp_reach_matcher_free(own);
            return hp_graph_stop(err, HP_E_NOMEM);
        }
        for (k = 0; k < ntargets; k++)
            if (targets[k] < r->n)
                hp_bit_set(leaves, targets[k]);
    }
    memset(&spec, 0, sizeof spec);
    spec.roots = r->roots;
    spec.nroots = r->nroots;
    spec.classify = classify;
    spec.classify_ctx = m;
    spec.special = m->special;
    spec.leaves = leaves;
    spec.targets = ntargets ? targets : NULL;
    spec.ntargets = ntargets;
    spec.explain = (flags & HP_PATHS_EXPLAIN) != 0;
    spec.weak = r->semantics == HP_REACH_HPROFKIT ? weak_referent : NULL;
    spec.weak_ctx = (void *)(uintptr_t)r;
    m->cursor.v = HP_NONE;
    rc = hp_bfs_run(out, &r->graph, &spec, cp, err);
    r->alloc.free_fn(leaves);
    hp_reach_matcher_free(own);
    return rc;
}
