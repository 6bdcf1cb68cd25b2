/* libFuzzer harness for the path search on long chains (up to 3,000
 * objects, each holding the next few, so paths run the length of the heap)
 * and wide arrays (up to 300 slots: the namer tables them), with weak
 * referents and rules: the input's bytes draw the heap (routekit.h), whose
 * routes must agree with the model (tiers, shortest strong paths, edges
 * named by their slots, the rules behind the tiers, leaves).
 *
 * Built with -DHP_FUZZ_SEEDGEN it writes the seeds instead (`seedgen
 * OUTDIR DATADIR MAXLEN`): inputs of random bytes. */
#ifdef HP_FUZZ_SEEDGEN
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routekit.h"

#ifndef HP_FUZZ_SEEDGEN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt_fuzz(data, size, 6, 3000, 300);
    return 0;
}
#else
int main(int argc, char **argv) { return rt_seedgen(argc, argv, "paths_chain"); }
#endif
