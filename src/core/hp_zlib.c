#include "hp_zlib.h"

#include <string.h>

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    const hp_alloc *a = opaque;
    if (size && items > (size_t)-1 / size)
        return Z_NULL;
    return a->malloc_fn((size_t)items * size);
}

static void z_free(voidpf opaque, voidpf p)
{
    const hp_alloc *a = opaque;
    a->free_fn(p);
}

void hp_zlib_init(z_stream *z, const hp_alloc *alloc)
{
    memset(z, 0, sizeof *z);
    z->zalloc = z_alloc;
    z->zfree = z_free;
    z->opaque = (voidpf)(uintptr_t)alloc;
}
