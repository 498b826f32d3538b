/* A small pool allocator, the kind the allocation-map paper's users instrument: five size
 * classes (16, 32, 64, 128 and 256-byte blocks), each a pool of fixed-size blocks carved from
 * one arena with a free list, and a fallback heap (malloc) for larger requests. It tells
 * memscape about its pools through memscape.h (no library to link; without the recorder the
 * calls do nothing).
 *
 * The workload has phases that the map's bins show: a burst that fills the small classes, a
 * plateau, frees of every other block (fragmentation grows: the free space is many holes),
 * a second burst that reuses the holes, short spikes of 256-byte blocks that reach the
 * class's maximum for a moment, and a drain.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memscape.h"

#define CLASSES 5
#define BLOCKS_PER_POOL 2048

struct pool {
    const char *name;
    size_t block;
    unsigned char *arena;
    void *free_list;
    int id;
    size_t live;
};

static struct pool pools[CLASSES] = {
    {"small-16", 16, NULL, NULL, 0, 0},  {"small-32", 32, NULL, NULL, 0, 0},
    {"small-64", 64, NULL, NULL, 0, 0},  {"medium-128", 128, NULL, NULL, 0, 0},
    {"medium-256", 256, NULL, NULL, 0, 0},
};

static void pools_init(void) {
    for (int c = 0; c < CLASSES; c++) {
        struct pool *p = &pools[c];
        p->arena = malloc(p->block * BLOCKS_PER_POOL);
        /* The free list runs from the end, so blocks are handed out from low addresses. */
        for (int i = BLOCKS_PER_POOL - 1; i >= 0; i--) {
            void *b = p->arena + (size_t)i * p->block;
            *(void **)b = p->free_list;
            p->free_list = b;
        }
        p->id = memscape_declare_pool(p->name, p->arena, p->block * BLOCKS_PER_POOL, p->block);
    }
}

static struct pool *class_of(size_t size) {
    for (int c = 0; c < CLASSES; c++)
        if (size <= pools[c].block) return &pools[c];
    return NULL;
}

static void *pool_alloc(size_t size) {
    struct pool *p = class_of(size);
    if (p == NULL || p->free_list == NULL) return malloc(size); /* the fallback heap */
    void *b = p->free_list;
    p->free_list = *(void **)b;
    p->live++;
    memscape_pool_allocated(p->id, b, size);
    return b;
}

static void pool_free(void *b) {
    for (int c = 0; c < CLASSES; c++) {
        struct pool *p = &pools[c];
        if ((unsigned char *)b >= p->arena &&
            (unsigned char *)b < p->arena + p->block * BLOCKS_PER_POOL) {
            memscape_pool_freed(p->id, b);
            *(void **)b = p->free_list;
            p->free_list = b;
            p->live--;
            return;
        }
    }
    free(b);
}

/* Requests spread over the classes with sizes that waste different shares of a block. */
static size_t request(unsigned *seed) {
    *seed = *seed * 1103515245u + 12345u;
    unsigned r = (*seed >> 16) % 100;
    if (r < 35) return 9 + r % 8;          /* 9-16 B: small-16 */
    if (r < 60) return 17 + r % 12;        /* 17-28 B: small-32, ~25 % waste */
    if (r < 78) return 40 + r % 20;        /* 40-59 B: small-64 */
    if (r < 90) return 65 + r % 20;        /* 65-84 B: medium-128, ~40 % waste */
    if (r < 97) return 200 + r % 50;       /* medium-256 */
    return 1000 + r * 40;                  /* fallback heap */
}

int main(void) {
    pools_init();
    unsigned seed = 7;
    enum { N = 6000 };
    static void *live[N];
    /* Burst. */
    for (int i = 0; i < N; i++) live[i] = pool_alloc(request(&seed));
    /* Plateau: churn a few blocks at a time. */
    for (int round = 0; round < 4000; round++) {
        int i = (int)((seed = seed * 1103515245u + 12345u) >> 8) % N;
        pool_free(live[i]);
        live[i] = pool_alloc(request(&seed));
    }
    /* Every other block freed: the pools fragment. */
    for (int i = 0; i < N; i += 2) {
        pool_free(live[i]);
        live[i] = NULL;
    }
    /* Short spikes of 256-byte blocks reaching the class's maximum for a moment. */
    for (int spike = 0; spike < 5; spike++) {
        void *burst[BLOCKS_PER_POOL];
        int n = 0;
        while (n < BLOCKS_PER_POOL && pools[4].free_list != NULL) burst[n++] = pool_alloc(250);
        for (int i = 0; i < n; i++) pool_free(burst[i]);
        for (int i = 0; i < 300; i++) free(malloc(64)); /* time passes on the heap */
    }
    /* Second burst: reuses the holes. */
    for (int i = 0; i < N; i += 2) live[i] = pool_alloc(request(&seed));
    /* Drain, from the end. */
    for (int i = N - 1; i >= 0; i--) pool_free(live[i]);
    size_t still = 0;
    for (int c = 0; c < CLASSES; c++) still += pools[c].live;
    printf("pools: %zu blocks live at the end\n", still);
    for (int c = 0; c < CLASSES; c++) free(pools[c].arena);
    return still == 0 ? 0 : 1;
}
