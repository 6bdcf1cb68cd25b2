/* zlib with the core's allocation hooks: every z_stream of the core gets
 * its memory through an hp_alloc (the glue's PyMem_Raw*, seen by
 * tracemalloc).  Not a public header. */
#ifndef HP_ZLIB_H
#define HP_ZLIB_H

#include <zlib.h>

#include "hp_common.h"

/* Zeroes z and points its allocator at `alloc`, which must outlive it. */
void hp_zlib_init(z_stream *z, const hp_alloc *alloc);

#endif
