/* Private to the hp_coll*.c files: a layout resolved on a class
 * (hp_coll_resolve.c), the collection reads they share (hp_coll.c), the
 * walks (hp_coll_walk.c) and the measures (hp_coll_measure.c) stand on. */
#ifndef HP_COLL_IMPL_H
#define HP_COLL_IMPL_H

#include "hp_coll.h"
#include "hp_coll_layouts.h"

/* A field of a collection or node class: its offset in the instance data
 * and its type; offset -1 when the class has none. */
typedef struct coll_field {
    int64_t offset;
    int type;
} coll_field;

/* The collection fields a layout reads, resolved on one class (F_CELLS:
 * ConcurrentHashMap's counterCells, optional). */
enum { F_STORAGE, F_STORAGE2, F_SIZE, F_HEAD, F_NULL_ENTRY, F_CAPACITY, F_CELLS, F_COUNT };

typedef struct coll_layout {
    const coll_spec *spec;
    coll_field f[F_COUNT];
    uint64_t marker;        /* id of the marker object, 0 for none */
} coll_layout;

struct hp_coll {
    const hp_heap *h;
    hp_alloc alloc;
    uint32_t *layout_of;    /* per class ordinal: its layout, or HP_NONE */
    coll_layout *layouts;
    uint32_t n_layouts;
};

/* Wrappers of wrappers are followed this deep, no deeper (a view of a view
 * of a list is three; a cycle of views would be endless). */
#define WRAP_DEPTH 16

/* The instance field of class `ord` named by `names` (the nearest
 * declaration of the first '|'-separated alternative it has, in ord and
 * up to 64 classes above it); 0 when it has none. */
int coll_find_field(const hp_heap *h, uint32_t ord, const char *names, coll_field *out);
/* The layout of object `index`, or NULL when it is no collection instance. */
const coll_layout *coll_layout_of(const hp_coll *c, uint32_t index);
/* The bytes of field f in instance o, or NULL when o's data lacks them. */
const uint8_t *coll_field_at(const hp_heap *h, const hp_object *o, const coll_field *f);
/* A reference field's id (0: null or absent). */
uint64_t coll_ref_at(const hp_heap *h, const hp_object *o, const coll_field *f);
/* An int or long field; `missing` when o has none. */
int64_t coll_int_at(const hp_heap *h, const hp_object *o, const coll_field *f, int64_t missing);
/* Object `id` described into *o: 1, or 0 for null or an id absent from the dump. */
int coll_object_of(const hp_heap *h, uint64_t id, uint32_t *index, hp_object *o);
int coll_is_array(const hp_object *o);
/* An array the collection refers to by field f, described into *arr; 0
 * when the field is null, dangling or not an array. */
int coll_array_at(const hp_heap *h, const hp_object *o, const coll_field *f, hp_object *arr);
/* A reference as a value (the marker object stands for null). */
void coll_value_ref(const hp_heap *h, uint64_t id, uint64_t marker, hp_coll_value *v);
/* Element i of an array as a value. */
void coll_value_element(const hp_heap *h, const hp_object *arr, uint64_t i, uint64_t marker, hp_coll_value *v);
int coll_is_null(const hp_coll_value *v);
/* Elements of a circular buffer from `head`: up to the tail index (or
 * `count` of them, COUNTED); -1 when the indexes lie outside the array.
 * The hprof agent trims an object array's trailing nulls, so a tail may
 * equal the length written. */
int64_t coll_circular_count(const coll_layout *L, int64_t head, int64_t end, int64_t length);

#endif
