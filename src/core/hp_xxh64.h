/* XXH64 (xxHash's 64-bit hash, seed 0): the content hash of primitive
 * arrays in the tables, and the string dictionary's hash.  Written from the
 * published algorithm; the tests compare it with the xxhash package. */
#ifndef HP_XXH64_H
#define HP_XXH64_H

#include <stddef.h>
#include <stdint.h>

uint64_t hp_xxh64(const uint8_t *data, size_t len, uint64_t seed);

#endif
