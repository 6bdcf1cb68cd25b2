/* What each glue file adds to the module: one function per file, called by
 * _hprof.c's module exec in this order.  Each registers its own functions
 * (with their docstrings) and types; -1 with an exception set on failure. */
#ifndef HPROF_PARTS_H
#define HPROF_PARTS_H

#include "_hprof.h"

int hprof_header_init(PyObject *module, hprof_state *st); /* parse_header, tag_name, java_name... */
int hprof_iter_init(PyObject *module, hprof_state *st);   /* records, subrecords; Record, SubRecord */
int hprof_stats_init(PyObject *module, hprof_state *st);  /* stats, walk */
int hprof_parser_init(PyObject *module, hprof_state *st); /* Parser */
int hprof_filter_init(PyObject *module, hprof_state *st); /* TailorEncoder, TailorDecoder, Converter, Bmd*, Renamer */
int hprof_pack_init(PyObject *module, hprof_state *st);   /* PackEncoder, PackDecoder, PACK_* */
int hprof_heap_iter_init(PyObject *module, hprof_state *st);   /* the iterators over heap objects */
int hprof_routes_init(PyObject *module, hprof_state *st);      /* Routes, Route: the paths of a search */
int hprof_heap_object_init(PyObject *module, hprof_state *st); /* HeapObject, HeapClass */
int hprof_heap_init(PyObject *module, hprof_state *st);   /* Heap, Reference, Referrer, Field, GcRoot... */
int hprof_mapping_init(PyObject *module, hprof_state *st);     /* MappingIndex */
int hprof_register_init(PyObject *module, hprof_state *st); /* _register: the package's classes */

#endif
