/* Inside the mapping parser: the metadata comments (hp_mapping_meta.c) and
 * the growable arrays both halves share.  Not for callers of hp_mapping.h. */
#ifndef HP_MAPPING_IMPL_H
#define HP_MAPPING_IMPL_H

#include "hp_mapping.h"

/* A growable array of int32 (the outline call-site position pairs). */
typedef struct hp_i32s {
    int32_t *data;
    size_t len, cap;
} hp_i32s;

int hp_i32s_push(hp_i32s *a, const hp_alloc *alloc, int32_t value); /* 0, or -1 out of memory */

/* What a metadata comment says. */
typedef enum hp_meta_kind {
    HP_META_NONE = 0,     /* not metadata (a plain comment), or an id that does not matter here */
    HP_META_VERSION,      /* com.android.tools.r8.mapping: value = the version */
    HP_META_SOURCE_FILE,  /* sourceFile: value = fileName */
    HP_META_SYNTHESIZED,  /* com.android.tools.r8.synthesized */
    HP_META_RESIDUAL,     /* com.android.tools.r8.residualsignature: value = signature */
    HP_META_OUTLINE,      /* com.android.tools.r8.outline */
    HP_META_CALLSITE      /* com.android.tools.r8.outlineCallsite: pairs appended to `positions` */
} hp_meta_kind;

typedef struct hp_meta {
    hp_meta_kind kind;
    hp_span value;
    size_t first_position, n_positions; /* HP_META_CALLSITE: the pairs it appended (as int32 indexes) */
} hp_meta;

/* Reads the comment text[off : off+len] (from its '#').  Anything that is
 * not a well-formed object with a known id is HP_META_NONE: a comment.
 * Returns 0, or -1 when memory ran out (positions). */
int hp_meta_read(const char *text, uint32_t off, uint32_t len, hp_meta *out, hp_i32s *positions,
                 const hp_alloc *alloc);

#endif
