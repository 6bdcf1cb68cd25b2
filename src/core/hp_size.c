/* The size model's parameters (the formulas are inline in hp_size.h). */
#include "hp_size.h"

/* VisualVM's arrays: the elements right after a 4-byte length after the
 * header, whatever they are; objects aligned to 8 (8-byte elements are
 * said to start at the next 8: the same sizes under that alignment); a
 * class object an instance of java.lang.Class. */
static void visualvm_layout(hp_size_model *m)
{
    m->array_base = m->min_instance + 4;
    m->array_base_wide = (m->array_base + 7) & ~7;
    m->align = 8;
    m->mirror_base = 0;
}

void hp_size_model_init(hp_size_model *m, int id_size, uint32_t object_raw_size)
{
    m->id_size = id_size;
    m->raw = object_raw_size > 0;
    if (!m->raw) {
        hp_size_model_set_oop(m, id_size);
        return;
    }
    /* Android writes whole object sizes: java.lang.Object's is the header,
     * and on 64-bit ids whatever it holds beyond the id is a reference. */
    m->min_instance = (int)(object_raw_size < 64 ? object_raw_size : 64);
    m->oop_size = id_size;
    if (id_size == 8 && m->min_instance > 8 && m->min_instance <= 16)
        m->oop_size = m->min_instance - 8;
    visualvm_layout(m);
}

void hp_size_model_set_oop(hp_size_model *m, int oop_size)
{
    m->oop_size = oop_size;
    if (!m->raw)
        m->min_instance = m->id_size + oop_size;
    visualvm_layout(m);
}
