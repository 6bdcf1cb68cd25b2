/* What the heap glue asks of MappingIndex (_hprof_mapping.c). */
#ifndef HPROF_MAPPING_GLUE_H
#define HPROF_MAPPING_GLUE_H

#include "_hprof.h"
#include "core/hp_mapping.h"

/* The parsed mapping of a MappingIndex (a hprofkit.Mapping), or NULL with
 * TypeError set for any other object.  It lives as long as the object. */
const hp_mapping *hprof_mapping_core(hprof_state *st, PyObject *obj);

#endif
