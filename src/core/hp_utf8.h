/* Valid UTF-8 out of what a dump holds, for consumers that accept nothing
 * else (Apache Arrow's string columns): names in Java's modified UTF-8, and
 * the characters of java.lang.String objects (Latin-1 or UTF-16).  What is
 * not valid becomes U+FFFD, exactly as Python's decoders with "replace"
 * make it, so a table's text equals the text the Python API gives. */
#ifndef HP_UTF8_H
#define HP_UTF8_H

#include "hp_common.h"
#include "hp_heap.h"

/* Bytes of `in` that form valid UTF-8 from the start (== len when all do). */
size_t hp_utf8_valid_prefix(const uint8_t *in, size_t len);

/* Copies `in`, each maximal ill-formed subsequence replaced by U+FFFD (the
 * Unicode recommendation, which CPython's "replace" follows).  `out` holds
 * at least HP_UTF8_REPAIR_MAX(len) bytes; returns the bytes written. */
#define HP_UTF8_REPAIR_MAX(len) (3 * (size_t)(len))
size_t hp_utf8_repair(const uint8_t *in, size_t len, uint8_t *out);

/* A name as the Python API decodes it (hprof_decode_mutf8): UTF-8 as it
 * is when valid, else modified UTF-8 (hp_mutf8_to_utf8) repaired.  `out`
 * holds HP_UTF8_REPAIR_MAX(len) bytes; returns the bytes written. */
size_t hp_name_utf8(const uint8_t *in, size_t len, uint8_t *out);

/* The first `max_units` characters (UTF-16 code units) of a String's text
 * as UTF-8; an unpaired surrogate (also one a cut leaves alone) becomes
 * U+FFFD.  `out` holds HP_TEXT_UTF8_MAX(units) bytes for units = the
 * smaller of max_units and t->units. */
#define HP_TEXT_UTF8_MAX(units) (3 * (size_t)(units))
size_t hp_text_utf8(const hp_text *t, size_t max_units, uint8_t *out);

#endif
