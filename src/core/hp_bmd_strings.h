/* Strings as Badoo's BMD tools see them: Java Strings.
 *
 * Badoo's cruncher decodes each HPROF string with `new String(bytes)` (the
 * JVM's UTF-8 decoder, which replaces malformed bytes with U+FFFD) and
 * writes either the String's UTF-8 bytes or, for a hashed one, their count
 * and `String.hashCode()`.  So the hash and the length of a string are those
 * of the re-encoded Java String, not of the HPROF bytes (for modified UTF-8's
 * C0 80, two U+FFFD: six bytes for two).
 *
 * The names table holds the strings a decoder may give back in place of a
 * hash (class and field names read from the app's jars, apks and lists). */
#ifndef HP_BMD_STRINGS_H
#define HP_BMD_STRINGS_H

#include "hp_common.h"
#include "hp_sink.h"

/* What Java makes of bytes p[0..n) as a String. */
typedef struct hp_jstring {
    int32_t hash;      /* String.hashCode() */
    uint64_t utf8_len; /* getBytes(UTF_8).length */
    int changed;       /* the re-encoded bytes differ from p (malformed UTF-8 was replaced) */
} hp_jstring;

/* Measures p[0..n) (JDK 17's decoder: each malformed sequence is one U+FFFD,
 * by the rules of java.lang.String). */
void hp_jstring_measure(const uint8_t *p, size_t n, hp_jstring *out);

/* Writes the re-encoded bytes of p[0..n) into dst, which has room for
 * hp_jstring_measure's utf8_len; returns the count written. */
size_t hp_jstring_reencode(const uint8_t *p, size_t n, uint8_t *dst);

/* The js->utf8_len bytes Java writes for p[0..n), measured as *js: p itself
 * when nothing was replaced, else its re-encoding, made in *fixed (which the
 * caller frees).  NULL when memory runs out. */
const uint8_t *hp_jstring_bytes(const uint8_t *p, size_t n, const hp_jstring *js, hp_buf *fixed);

/* ---- the names a decoder restores hashed strings from ---- */

typedef struct hp_bmd_names hp_bmd_names;

/* NULL when memory runs out.  `alloc` may be NULL (libc). */
hp_bmd_names *hp_bmd_names_new(const hp_alloc *alloc);
void hp_bmd_names_free(hp_bmd_names *t);

/* Adds a string (UTF-8).  One whose Java hash and length are those of a
 * string added before replaces it, as the last of several strings sharing a
 * hash wins in Badoo's decruncher: so add each string once, in the order the
 * sources list them.  0, or -1 when memory runs out. */
int hp_bmd_names_add(hp_bmd_names *t, const uint8_t *s, size_t len);

/* The string whose hash and UTF-8 length are these, or NULL. */
const uint8_t *hp_bmd_names_find(const hp_bmd_names *t, int32_t hash, uint64_t len);

/* Strings held, and how many replaced another with the same hash and length. */
size_t hp_bmd_names_count(const hp_bmd_names *t);
size_t hp_bmd_names_collisions(const hp_bmd_names *t);

#endif
