/* Benchmark of the graph layer (hp_graph, hp_dominators, hp_paths) on a
 * synthetic heap-like graph: `make -C tests/c bench` (optimised, no
 * sanitizers).  Prints, per phase, seconds, vertices/s, the exact peak of
 * bytes the phase allocated (through a counting hp_alloc) and the growth of
 * the process's peak RSS (VmHWM, reset before each phase), per vertex.
 *
 * The graph: 8 M vertices numbered in "address order", about 17 M edges:
 * class objects whose statics lead anywhere in the heap, a pool of shared
 * objects (interned strings, constants) referenced from everywhere, and
 * blocks of objects forming lists (some doubly linked), arrays and trees,
 * chained to each other, with a few references anywhere (see edges_of).
 * Edges come from a hash of the vertex, so the source gives the same edges
 * twice.
 *
 *   bench_graph [vertices] [repeats] [phases] [threads] [scrambled]
 * phases: any of b (CSR build, always run), t (transpose), p (BFS),
 * d (dominators), l (dominators, lean); all by default.  threads: 1 or 2
 * for the passes that split (the edge source here is thread-safe).
 * scrambled: 1 renumbers the vertices at random, the worst case for every
 * cache (a dump's object order usually follows allocation order). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "hp_dominators.h"
#include "hp_graph.h"
#include "hp_paths.h"

#include "countalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CLASSES 6000u
#define THREAD_ROOTS 3000u
#define BLOCK 64u
#define MAX_EDGES 72u

static uint32_t n_vertices;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- /proc/self/status ---- */

static long status_kb(const char *key)
{
    char line[256];
    long kb = -1;
    size_t len = strlen(key);
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, len) == 0 && line[len] == ':')
            kb = strtol(line + len + 1, NULL, 10);
    fclose(f);
    return kb;
}

/* Resets VmHWM to the current RSS (Linux >= 4.0). */
static void reset_peak_rss(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

/* ---- the synthetic heap ---- */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A block that starts a region: the structure a class's static holds. */
static int region_head(uint32_t b) { return b == 0 || mix((uint64_t)b << 20) % 1024 == 0; }

/* The out-edges of v into out[] (at most MAX_EDGES); their count.
 * Past the classes and the shared pool, the heap is blocks of 64 objects,
 * each one data structure rooted at its first object: a linked list (half
 * of them doubly linked), an array and its elements, or a binary tree
 * (half with parent pointers).  Most objects hold a shared object too.
 * Blocks form regions of about a thousand: the last object of a block
 * leads to the next block of its region, and sometimes to one a little
 * further (a structure holding the next ones).  Class statics hold region
 * heads and shared objects; one object in 20,000 holds something anywhere
 * (sharing between structures, cycles). */
static uint32_t edges_of(uint32_t v, uint32_t *out)
{
    uint64_t h = mix(v), r = h;
    uint32_t k = 0, pool = n_vertices / 20, first = CLASSES + pool;
    uint32_t i, b, base, kind, doubly, blocks = (n_vertices - first) / BLOCK;
#define NEXT() (r = mix(r))
    if (v < CLASSES) {
        /* A class: its statics. */
        uint32_t fields = 2 + (uint32_t)(h >> 40) % 6;
        for (i = 0; i < fields; i++) {
            b = (uint32_t)(NEXT() % blocks);
            while (!region_head(b))
                b--;
            out[k++] = NEXT() % 2 ? first + b * BLOCK : CLASSES + (uint32_t)(NEXT() % pool);
        }
        return k;
    }
    if (v < first || v >= first + blocks * BLOCK) {
        /* Shared objects (interned strings, constants): half own an array. */
        if (h % 2 && v + 1 < n_vertices)
            out[k++] = v + 1;
        return k;
    }
    b = (v - first) / BLOCK;
    i = (v - first) % BLOCK;
    base = first + b * BLOCK;
    kind = (uint32_t)(mix(~(uint64_t)b) % 3);
    doubly = (uint32_t)(mix(~(uint64_t)b) >> 40) & 1;
    switch (kind) {
    case 0: /* a linked list */
        if (i + 1 < BLOCK)
            out[k++] = v + 1;
        if (doubly && i > 0)
            out[k++] = v - 1;
        break;
    case 1: /* an array and its elements */
        if (i == 0)
            for (k = 0; k + 1 < BLOCK; k++)
                out[k] = v + 1 + k;
        break;
    default: /* a binary tree */
        if (2 * i + 1 < BLOCK)
            out[k++] = base + 2 * i + 1;
        if (2 * i + 2 < BLOCK)
            out[k++] = base + 2 * i + 2;
        if (doubly && i > 0)
            out[k++] = base + (i - 1) / 2;
        break;
    }
    if (NEXT() % 100 < 85)
        out[k++] = CLASSES + (uint32_t)(NEXT() % pool);
    if (i == BLOCK - 1) {
        uint32_t skip = b + 2 + (uint32_t)(NEXT() % 16);
        if (b + 1 < blocks && !region_head(b + 1))
            out[k++] = base + BLOCK;
        if (NEXT() % 10 < 3 && skip < blocks && !region_head(skip)) {
            for (i = b + 2; i <= skip && !region_head(i); i++)
                ;
            if (i > skip)
                out[k++] = first + skip * BLOCK;
        }
    }
    if (NEXT() % 20000 == 0)
        out[k++] = (uint32_t)(NEXT() % n_vertices);
#undef NEXT
    return k;
}

/* ---- scrambled numbering: no locality at all ----
 * A bijection of 0..n-1 (an invertible mix of 0..2^k-1, walked until it
 * lands below n), to renumber the heap as a dump without any order would. */

static int scrambled;
static uint32_t scramble_bits;

static uint32_t mix_bits(uint32_t x, int inverse)
{
    uint32_t mask = (1u << scramble_bits) - 1, half = scramble_bits / 2, i, y;
    if (!inverse) {
        x = (x * 0x9E3779B1u) & mask;
        return x ^ (x >> half);
    }
    y = x;
    for (i = 0; i < 2; i++) /* x ^ (x >> half) undone: two rounds cover scramble_bits */
        y = x ^ (y >> half);
    return (y * 0x0E8B2F51u) & mask; /* 0x0E8B2F51 * 0x9E3779B1 = 1 mod 2^32 */
}

/* The new number of old vertex v, or (inverse) the old vertex of number v. */
static uint32_t renumber(uint32_t v, int inverse)
{
    if (!scrambled)
        return v;
    do
        v = mix_bits(v, inverse);
    while (v >= n_vertices);
    return v;
}

static int heap_source(void *ctx, uint32_t first, uint32_t count, hp_edge_sink *sink)
{
    uint32_t v, out[MAX_EDGES], k, i;
    (void)ctx;
    for (v = first; v < first + count; v++) {
        k = edges_of(renumber(v, 1), out);
        for (i = 0; i < k; i++)
            hp_edge_put(sink, renumber(out[i], 0));
        hp_edge_end_vertex(sink);
    }
    return 0;
}

static int heap_sizes(void *ctx, uint32_t first, uint32_t count, uint64_t *sizes)
{
    uint32_t i;
    (void)ctx;
    for (i = 0; i < count; i++)
        sizes[i] = 16 + (mix(renumber(first + i, 1)) >> 58) * 8;
    return 0;
}

/* The library-leak matcher stand-in: edge 0 of a "special" vertex is LOW,
 * edge 1 IGNORE. */
static int classify(void *ctx, uint32_t v, uint32_t index, uint32_t target)
{
    (void)ctx;
    (void)v;
    (void)target;
    return index == 0 ? HP_EDGE_LOW : index == 1 ? HP_EDGE_IGNORE : HP_EDGE_NORMAL;
}

/* ---- reporting ---- */

typedef struct phase {
    const char *name;
    double t0, cpu0;
    long rss0;
    size_t live0;
} phase;

static void begin(phase *p)
{
    reset_peak_rss();
    p->rss0 = status_kb("VmRSS");
    p->live0 = countalloc_live;
    countalloc_peak = countalloc_live;
    p->t0 = now();
    p->cpu0 = (double)clock() / CLOCKS_PER_SEC;
}

/* The phase's wall seconds. */
static double end(phase *p, uint64_t items, const char *unit)
{
    double s = now() - p->t0, cpu = (double)clock() / CLOCKS_PER_SEC - p->cpu0;
    long hwm = status_kb("VmHWM");
    printf("%-34s %6.3f s (cpu %6.3f s) %6.1f M%s/s   allocated peak %5.1f B/vertex   RSS peak +%5.1f B/vertex\n",
           p->name, s, cpu, items / s / 1e6, unit, (double)(countalloc_peak - p->live0) / n_vertices,
           (double)(hwm - p->rss0) * 1024.0 / n_vertices);
    fflush(stdout);
    return s;
}

int main(int argc, char **argv)
{
    uint32_t roots[CLASSES + THREAD_ROOTS], nroots = 0, v, i, out[MAX_EDGES], top[3];
    int repeats = argc > 2 ? atoi(argv[2]) : 1, rep, lean;
    const char *phases = argc > 3 ? argv[3] : "btpdl";
    int threads = argc > 4 ? atoi(argv[4]) : 1;
    hp_graph_source source = { heap_source, NULL, 1 };
    uint64_t gen_edges = 0, *special;
    hp_graph g, t;
    hp_dominators d;
    hp_dominators_spec dspec;
    hp_bfs b;
    hp_bfs_spec spec;
    hp_error err;
    phase p;
    double t0, source_seconds = 0, build_seconds = 0, dominators_seconds;
    long rss_start;

    n_vertices = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 8000000;
    source.threads = threads;
    scrambled = argc > 5 && atoi(argv[5]) != 0;
    for (scramble_bits = 2; (1u << scramble_bits) < n_vertices; scramble_bits++)
        ;
    if (n_vertices < 2 * CLASSES) {
        fprintf(stderr, "at least %u vertices\n", 2 * CLASSES);
        return 2;
    }
    for (v = 0; v < CLASSES; v++)
        roots[nroots++] = renumber(v, 0);
    for (i = 0; i < THREAD_ROOTS; i++)
        roots[nroots++] = renumber((uint32_t)(mix(~(uint64_t)i) % n_vertices), 0);
    rss_start = status_kb("VmRSS");

    t0 = now();
    for (v = 0; v < n_vertices; v++)
        gen_edges += edges_of(v, out);
    printf("synthetic heap%s: %u vertices, %llu edges (%.2f per vertex), %u roots; generating its edges once: "
           "%.3f s; %d thread%s\n", scrambled ? ", scrambled" : "", n_vertices, (unsigned long long)gen_edges,
           (double)gen_edges / n_vertices, nroots, now() - t0, threads, threads > 1 ? "s" : "");

    for (rep = 0; rep < repeats; rep++) {
        printf("-- run %d\n", rep + 1);
        /* The synthetic source's own time, to tell the build's apart. */
        t0 = now();
        for (i = 0; i < 2; i++)
            for (v = 0; v < n_vertices; v++)
                gen_edges += edges_of(v, out);
        source_seconds = (now() - t0) / threads;
        p.name = "CSR build (edges generated twice)";
        begin(&p);
        if (hp_graph_build(&g, n_vertices, &source, &countalloc, NULL, &err) != HP_OK)
            return 1;
        build_seconds = end(&p, n_vertices, "vertices");
        printf("%-34s %.3f s of it generating the edges (twice%s), %.3f s the rest\n", "", source_seconds,
               threads > 1 ? ", over the threads" : "", build_seconds - source_seconds);
        printf("%-34s %.2f B/vertex (shift %u)\n", "graph held", (double)hp_graph_bytes(&g) / n_vertices,
               g.rows.shift);

        if (!strchr(phases, 't'))
            goto paths;
        p.name = "transpose";
        begin(&p);
        if (hp_graph_transpose(&t, &g, NULL, NULL, 0, threads, NULL, &err) != HP_OK)
            return 1;
        end(&p, n_vertices, "vertices");
        hp_graph_free(&t);

    paths:
        if (!strchr(phases, 'p'))
            goto dominators;
        memset(&spec, 0, sizeof spec);
        spec.roots = roots;
        spec.nroots = nroots;
        p.name = "BFS, all edges NORMAL";
        begin(&p);
        if (hp_bfs_run(&b, &g, &spec, NULL, &err) != HP_OK)
            return 1;
        end(&p, n_vertices, "vertices");
        printf("%-34s %u vertices reached\n", "", b.visited_count);
        hp_bfs_free(&b);

        special = calloc((n_vertices + 63) / 64, 8);
        for (v = 0; v < n_vertices; v++)
            if (mix(v * 7ULL) % 100 < 5)
                special[v >> 6] |= (uint64_t)1 << (v & 63);
        spec.classify = classify;
        spec.special = special;
        p.name = "BFS, 5% of vertices classified";
        begin(&p);
        if (hp_bfs_run(&b, &g, &spec, NULL, &err) != HP_OK)
            return 1;
        end(&p, n_vertices, "vertices");
        hp_bfs_free(&b);
        free(special);

    dominators:
        for (lean = 0; lean < 2; lean++) {
            if (!strchr(phases, lean ? 'l' : 'd'))
                continue;
            p.name = lean ? "dominators + retained, lean" : "dominators + retained sizes";
            begin(&p);
            dspec.roots = roots;
            dspec.nroots = nroots;
            dspec.sizes = heap_sizes;
            dspec.sizes_ctx = NULL;
            dspec.lean = lean;
            dspec.threads = threads;
            dspec.extra.pairs = NULL;
            dspec.extra.count = 0;
            if (hp_dominators_build(&d, &g, &dspec, NULL, &err) != HP_OK)
                return 1;
            dominators_seconds = end(&p, n_vertices, "vertices");
            printf("%-34s CSR build without the source + dominators + retained sizes: %.3f s\n", "",
                   build_seconds - source_seconds + dominators_seconds);
            printf("%-34s %u reachable, total %.1f MB; process peak %.1f B/vertex over start (graph included)\n", "",
                   d.reachable, d.total / 1e6, (double)(status_kb("VmHWM") - rss_start) * 1024.0 / n_vertices);
            hp_top_values(d.retained, d.idom, n_vertices, 3, top);
            printf("%-34s top retainers:", "");
            for (i = 0; i < 3; i++)
                printf(" %u (%.1f MB, %u objects)", top[i], d.retained[top[i]] / 1e6, d.count[top[i]]);
            printf("\n");
            hp_dominators_free(&d);
        }
        hp_graph_free(&g);
    }
    return 0;
}
