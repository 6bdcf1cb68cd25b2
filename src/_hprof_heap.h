/* Shared by the heap glue files: the Heap object and the handles on it. */
#ifndef HPROF_HEAP_GLUE_H
#define HPROF_HEAP_GLUE_H

#include "_hprof.h"

#include <pythread.h>

#include "core/hp_heap.h"

/* A heap index over a buffer export (the dump's mmap).  Handles hold a
 * strong reference to it; close() frees the index at once, or, while a
 * call runs without the GIL or a primitive array is exported, when the
 * last of those ends. */
typedef struct {
    PyObject_HEAD
    hp_heap *index;           /* NULL once closed */
    Py_buffer view;
    int has_view;
    int closing;
    Py_ssize_t busy;          /* calls running without the GIL, exported arrays */
    PyThread_type_lock lock;  /* serialises the lazy builds */
    long long dangling;       /* -1 until counted */
    PyObject *names;          /* list of Java class names by ordinal (None until asked) */
    PyObject *by_name;        /* dict: name -> list of ordinals */
    PyObject *classes;        /* list of HeapClass handles by ordinal */
    PyObject *field_maps;     /* list of per-class field maps by ordinal (None until asked) */
    hprof_state *st;
    PyObject *module;
} HeapIndex;

/* A handle: the heap and an object's index.  HeapClass adds the ordinal. */
typedef struct {
    PyObject_HEAD
    HeapIndex *heap;
    uint32_t index;
    uint32_t ord;             /* HeapClass: the class; else HP_NONE */
} HeapHandle;

/* The index, or NULL with ValueError set when the heap is closed. */
const hp_heap *heap_index(HeapIndex *heap);

/* A new handle for object `index` (a HeapClass for class objects). */
PyObject *heap_handle(HeapIndex *heap, uint32_t index);
/* The HeapClass of ordinal `ord`, or None for HP_NONE (a new reference). */
PyObject *heap_class_handle(HeapIndex *heap, uint32_t ord);
/* The Java name of class `ord` ("java.lang.String", "int[]"), borrowed. */
PyObject *heap_class_name(HeapIndex *heap, uint32_t ord);
/* A STRING record's text, decoded with replacement (a new reference). */
PyObject *heap_utf8(const hp_heap *index, uint64_t sid);
/* A field value as Python: bool, int, float, 1-char str, handle or None. */
PyObject *heap_value(HeapIndex *heap, int type, const uint8_t *value);

/* Builds the referrer index on first use (without the GIL, under the
 * heap's lock); 0, or -1 with an exception set. */
int heap_ensure_referrers(HeapIndex *heap);
/* A GC root kind's name without its ROOT_ prefix ("JNI_GLOBAL"). */
PyObject *heap_root_kind(int tag);
/* heap.objects(): an iterator over every object (_hprof_heap_object.c). */
PyObject *heap_objects_iter(HeapIndex *heap, PyObject *unused);

/* Enters / leaves a stretch that may run without the GIL. */
static inline void heap_enter(HeapIndex *heap) { heap->busy++; }
void heap_leave(HeapIndex *heap);

#endif
