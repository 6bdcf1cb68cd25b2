/* A primitive array's payload read out under the SIGBUS guard: as bytes
 * (obj._payload), or as the PNG scanlines of the bitmap pixels it holds
 * (obj._png_rows, core/hp_pixels.h).  hprofkit/_bitmaps.py reads Android
 * bitmaps through them: a dump truncated under it raises FileChangedError
 * with the file's offset, as every handle read does. */
#include "_hprof_heap.h"

#include "core/hp_pixels.h"

/* The payload of primitive array `o` (pointers into the mapping); -1 with
 * TypeError set for any other object. */
static int payload_of(HeapHandle *o, hp_object *obj)
{
    const hp_heap *h = heap_index(o->heap);
    if (!h)
        return -1;
    if (hp_heap_object_kind(h, o->index) != HP_KIND_PRIM_ARRAY) {
        PyErr_SetString(PyExc_TypeError, "only primitive arrays have a payload of bytes");
        return -1;
    }
    if (heap_describe(o->heap, o->index, obj) < 0)
        return -1;
    if (!obj->data)
        obj->data_len = 0; /* PRIMITIVE_ARRAY_NODATA: a length, no bytes */
    return 0;
}

/* ValueError unless [offset, offset + length) lies in a payload of `have` bytes. */
static int check_range(unsigned long long offset, unsigned long long length, uint64_t have)
{
    if (offset > have || length > have - offset) {
        PyErr_Format(PyExc_ValueError, "bytes %llu to %llu are not in the array's %llu bytes", offset,
                     offset + length, (unsigned long long)have);
        return -1;
    }
    return 0;
}

PyObject *pixels_payload(HeapHandle *o, PyObject *args)
{
    unsigned long long offset, length;
    hp_object obj;
    if (!PyArg_ParseTuple(args, "KK:_payload", &offset, &length) || payload_of(o, &obj) < 0 ||
        check_range(offset, length, obj.data_len) < 0)
        return NULL;
    return hprof_guarded_bytes(o->heap->st, o->heap->view.buf, (size_t)o->heap->view.len, obj.data + offset,
                               (size_t)length);
}

typedef struct {
    int config, unpremultiply;
    const uint8_t *src;
    size_t stride, width, rows, step;
    uint8_t *dst;
} rows_call;

static void convert_rows(void *ctx)
{
    rows_call *c = ctx;
    hp_pixels_png_rows(c->config, c->unpremultiply, c->src, c->stride, c->width, c->rows, c->step, c->dst);
}

/* The bytes of the scanlines of `c`, checking that the rows it reads lie in
 * the payload's `have` bytes from `offset` (a stride of 0 becomes the row's
 * bytes); 0 with ValueError set. */
static size_t rows_size(rows_call *c, unsigned long long offset, uint64_t have)
{
    size_t pixel = hp_pixel_size(c->config), out_row;
    uint64_t row_bytes, last;
    if (!pixel) {
        PyErr_Format(PyExc_ValueError, "no pixel config %d", c->config);
        return 0;
    }
    if (c->step == 0 || c->width == 0 || c->rows == 0) {
        PyErr_SetString(PyExc_ValueError, "width, rows and step must be at least 1");
        return 0;
    }
    if (c->width > UINT32_MAX || c->rows > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "the rows do not fit the array");
        return 0;
    }
    /* The rows read: the last starts at offset + (rows - 1) * stride. */
    row_bytes = (uint64_t)c->width * pixel;
    if (!c->stride)
        c->stride = (size_t)row_bytes; /* rows that follow each other */
    if (c->stride > UINT64_MAX / c->rows ||
        (uint64_t)c->stride * (c->rows - 1) > UINT64_MAX - row_bytes) {
        PyErr_SetString(PyExc_ValueError, "the rows do not fit the array");
        return 0;
    }
    last = (uint64_t)c->stride * (c->rows - 1) + row_bytes;
    if (check_range(offset, last, have) < 0)
        return 0;
    out_row = 1 + 4 * hp_pixels_sampled(c->width, c->step);
    if (c->rows > (size_t)PY_SSIZE_T_MAX / out_row) {
        PyErr_SetString(PyExc_OverflowError, "the scanlines would not fit in memory");
        return 0;
    }
    return c->rows * out_row;
}

PyObject *pixels_png_rows(HeapHandle *o, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", "", "", "offset", "stride", "step", "unpremultiply", NULL };
    unsigned long long offset = 0, stride = 0, step = 1, width, rows;
    int config, unpremultiply = 0;
    rows_call call;
    hp_object obj;
    size_t size;
    PyObject *out;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iKK|$KKKp:_png_rows", keywords, &config, &width, &rows,
                                     &offset, &stride, &step, &unpremultiply) ||
        payload_of(o, &obj) < 0)
        return NULL;
    call.config = config;
    call.unpremultiply = unpremultiply;
    call.width = (size_t)(width > SIZE_MAX ? SIZE_MAX : width);
    call.rows = (size_t)(rows > SIZE_MAX ? SIZE_MAX : rows);
    call.step = (size_t)(step > SIZE_MAX ? SIZE_MAX : step);
    call.stride = (size_t)(stride > SIZE_MAX ? SIZE_MAX : stride);
    if (!(size = rows_size(&call, offset, obj.data_len)))
        return NULL;
    if (!(out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size)))
        return NULL;
    call.src = obj.data + offset;
    call.dst = (uint8_t *)PyBytes_AS_STRING(out);
    if (heap_guard(o->heap, convert_rows, &call) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}
