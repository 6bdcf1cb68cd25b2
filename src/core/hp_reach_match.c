/* Paths from GC roots: reference rules compiled into the edge classes of
 * the two-queue search (hp_paths.h). */
#include "hp_reach_impl.h"

#include <string.h>

struct hp_reach_matcher {
    const hp_reach *r;
    hp_reach_rule *rules;
    size_t nrules;
    uint32_t *field_start;   /* per class + 1: its range of field_pairs */
    uint32_t *field_pairs;   /* (reference slot, rule) */
    uint32_t *static_rules;  /* (class object vertex, static number, rule) */
    size_t nstatic;
    int32_t *root_rule;      /* per root position: the rule, or -1 (NULL: no root rules) */
    uint64_t *special;       /* vertices whose edges a rule may match */
    reach_cursor cursor;     /* the edge named last: the search asks in row order */
};

/* (slot, rule) pairs for the instance-field rules, class by class. */
static hp_code compile_fields(hp_reach_matcher *m)
{
    const hp_reach *r = m->r;
    const hp_heap *h = r->heap;
    size_t cap = 16, used = 0, k;
    uint32_t c;
    m->field_start = hp_array_new(&r->alloc, (uint64_t)r->nclasses + 1, 4);
    m->field_pairs = hp_array_new(&r->alloc, cap, 4);
    if (!m->field_start || !m->field_pairs)
        return HP_E_NOMEM;
    for (c = 0; c < r->nclasses; c++) {
        hp_field_iter it;
        hp_field f;
        uint32_t slot = 0;
        m->field_start[c] = (uint32_t)(used / 2);
        hp_field_iter_init(&it, h, c);
        while (hp_field_next(&it, &f)) {
            if (f.type != HP_T_OBJECT)
                continue;
            for (k = 0; k < m->nrules; k++) {
                const hp_reach_rule *rule = &m->rules[k];
                if (rule->pattern != HP_RULE_FIELD || rule->cls != f.declaring ||
                    !hp_heap_field_is(h, &f, rule->name, rule->name_len))
                    continue;
                if (used + 2 > cap) {
                    uint32_t *bigger = r->alloc.realloc_fn(m->field_pairs, cap * 2 * 4);
                    if (!bigger)
                        return HP_E_NOMEM;
                    m->field_pairs = bigger;
                    cap *= 2;
                }
                m->field_pairs[used++] = slot;
                m->field_pairs[used++] = (uint32_t)k;
                break;
            }
            slot++;
        }
    }
    m->field_start[r->nclasses] = (uint32_t)(used / 2);
    return HP_OK;
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
    for (k = 0; k < m->nrules; k++) {
        const hp_reach_rule *rule = &m->rules[k];
        if (rule->pattern == HP_RULE_THREAD && root.thread_serial == rule->thread_serial &&
            (root.kind == HP_SUB_ROOT_JAVA_FRAME || root.kind == HP_SUB_ROOT_JNI_LOCAL))
            return (int)k;
        if (rule->pattern == HP_RULE_ROOT_CLASS &&
            reach_extends(r->heap, hp_heap_object_class(r->heap, root.index), rule->cls))
            return (int)k;
    }
    return -1;
}

hp_code hp_reach_matcher_new(const hp_reach *r, const hp_reach_rule *rules, size_t nrules,
                             hp_reach_matcher **out, hp_error *err)
{
    hp_reach_matcher *m;
    size_t k, roots_rules = 0;
    uint32_t v;
    hp_code rc;
    *out = NULL;
    for (k = 0; k < nrules; k++) {
        if ((rules[k].pattern == HP_RULE_FIELD || rules[k].pattern == HP_RULE_STATIC ||
             rules[k].pattern == HP_RULE_ROOT_CLASS) && rules[k].cls >= r->nclasses)
            return hp_vertex_fail(err, HP_E_USAGE, k, "a rule names no class of the dump");
        if (rules[k].pattern > HP_RULE_ROOT_CLASS || rules[k].pattern < 0 ||
            (rules[k].edge != HP_EDGE_LOW && rules[k].edge != HP_EDGE_IGNORE))
            return hp_vertex_fail(err, HP_E_USAGE, k, "bad rule");
        roots_rules += rules[k].pattern == HP_RULE_THREAD || rules[k].pattern == HP_RULE_ROOT_CLASS;
    }
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
        rc = compile_fields(m);
    }
    if (rc == HP_OK)
        rc = compile_statics(m);
    if (rc == HP_OK && roots_rules) {
        m->root_rule = hp_array_new(&r->alloc, r->nroots, 4);
        if (!m->root_rule)
            rc = HP_E_NOMEM;
        for (k = 0; rc == HP_OK && k < r->nroots; k++)
            m->root_rule[k] = root_rule(m, k);
    }
    if (rc != HP_OK) {
        hp_reach_matcher_free(m);
        return hp_graph_stop(err, rc);
    }
    /* The instances whose class has a matched field (or, under visualvm,
     * a referent the search skips). */
    for (v = 0; v < r->n; v++) {
        uint32_t c = hp_heap_object_class(r->heap, v);
        if (c == HP_NONE || hp_heap_object_kind(r->heap, v) != HP_KIND_INSTANCE)
            continue;
        if (m->field_start[c] < m->field_start[c + 1] ||
            (r->semantics == HP_REACH_VISUALVM && r->referent_slot[c] != HP_NONE))
            hp_bit_set(m->special, v);
    }
    *out = m;
    return HP_OK;
}

void hp_reach_matcher_free(hp_reach_matcher *m)
{
    if (!m)
        return;
    m->r->alloc.free_fn(m->rules);
    m->r->alloc.free_fn(m->field_start);
    m->r->alloc.free_fn(m->field_pairs);
    m->r->alloc.free_fn(m->static_rules);
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
        for (k = m->field_start[cls]; k < m->field_start[cls + 1]; k++)
            if (m->field_pairs[2 * k] == ref.slot)
                return (int)m->field_pairs[2 * k + 1];
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
        return HP_EDGE_IGNORE;
    return rule >= 0 ? m->rules[rule].edge : HP_EDGE_NORMAL;
}

hp_code hp_reach_paths(const hp_reach *r, hp_reach_matcher *m, const uint32_t *targets, size_t ntargets,
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
        if ((rc = hp_reach_matcher_new(r, NULL, 0, &own, err)) != HP_OK)
            return rc;
        m = own;
    }
    if (ntargets) {
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
    m->cursor.v = HP_NONE;
    rc = hp_bfs_run(out, &r->graph, &spec, cp, err);
    r->alloc.free_fn(leaves);
    hp_reach_matcher_free(own);
    return rc;
}
