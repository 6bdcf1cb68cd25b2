/* The class tree of an hp_reach (hp_reach_classtree.h). */
#include "hp_reach_classtree.h"

#include "hp_reach_impl.h"

typedef struct class_keys {
    hp_reach *r;
    const hp_domtree *tree;
    uint32_t classes;
} class_keys;

static uint32_t class_key(void *ctx, uint32_t v)
{
    const class_keys *k = ctx;
    const hp_heap *h = k->r->heap;
    uint32_t cls;
    if (hp_heap_object_kind(h, v) == HP_KIND_CLASS) {
        hp_object o;
        hp_heap_object(h, v, &o);
        return o.self_ord == HP_NONE ? 2 * k->classes : k->classes + o.self_ord;
    }
    cls = hp_heap_object_class(h, v);
    return cls == HP_NONE ? 2 * k->classes : cls;
}

static uint64_t object_size(void *ctx, uint32_t v)
{
    const class_keys *k = ctx;
    return hp_reach_tree_shallow(k->r, k->tree, v);
}

/* Under visualvm an object its search did not reach has no retained size (-1): it ranks last. */
static uint64_t object_retained(void *ctx, uint32_t v)
{
    const class_keys *k = ctx;
    int64_t size = hp_reach_retained(k->r, v);
    return size > 0 ? (uint64_t)size : 0;
}

/* The keys over r's tree, built if needed; HP_OK or its error. */
static hp_code keys_of(hp_reach *r, class_keys *k, hp_domfold_keys *keys, const hp_checkpoint *cp, hp_error *err)
{
    hp_code rc = hp_reach_tree(r, cp, &k->tree, err);
    k->r = r;
    k->classes = hp_heap_class_count(r->heap);
    keys->key = class_key;
    keys->size = object_size;
    keys->rank = object_retained;
    keys->ctx = k;
    return rc;
}

hp_code hp_reach_class_tree(hp_reach *r, uint32_t top, const hp_checkpoint *cp, hp_domfold *out, hp_error *err)
{
    class_keys k;
    hp_domfold_keys keys;
    hp_code rc = keys_of(r, &k, &keys, cp, err);
    if (rc != HP_OK)
        return rc;
    return hp_domfold_build(out, k.tree, &keys, top, &r->alloc, cp, err);
}

hp_code hp_reach_class_tree_members(hp_reach *r, const hp_domfold *f, uint32_t node, uint32_t **out,
                                    uint32_t *count, const hp_checkpoint *cp, hp_error *err)
{
    class_keys k;
    hp_domfold_keys keys;
    hp_code rc = keys_of(r, &k, &keys, cp, err);
    if (rc != HP_OK)
        return rc;
    return hp_domfold_members(f, k.tree, &keys, node, out, count, cp, err);
}
