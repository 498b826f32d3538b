/* memscape.h: tell memscape's recorder about a custom allocator's pools.
 *
 * No library to link. Under `memscape record` the recorder's shim (LD_PRELOAD) defines the
 * three memscape_shim_* functions; without it they are weak and null, and the inline
 * functions below do nothing. A pool is a range of memory the allocator carves blocks from
 * (a fixed block size, or 0 for variable sizes); its blocks are reported as the allocator
 * hands them out and takes them back. `memscape info --json` then reports per pool the
 * occupancy, the waste (block size - requested) and the external fragmentation over time
 * (1 - largest free gap / free bytes inside the pool's span).
 *
 *   int small = memscape_declare_pool("small-64", arena, 64 * 1024, 64);
 *   void *p = carve(arena);            memscape_pool_allocated(small, p, 40);
 *   give_back(arena, p);               memscape_pool_freed(small, p);
 *
 * Pool names keep their first 31 bytes. Pool ids are > 0; 0 means "not recording".
 */
#ifndef MEMSCAPE_H
#define MEMSCAPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

int memscape_shim_pool_declare(const char *name, const void *start, size_t length,
                               size_t block_size) __attribute__((weak));
void memscape_shim_pool_alloc(int pool, const void *ptr, size_t size) __attribute__((weak));
void memscape_shim_pool_free(int pool, const void *ptr) __attribute__((weak));

/* Declares a pool; returns its id (0 when not recording). */
static inline int memscape_declare_pool(const char *name, const void *start, size_t length,
                                        size_t block_size) {
    return memscape_shim_pool_declare ? memscape_shim_pool_declare(name, start, length, block_size)
                                      : 0;
}

/* The allocator handed out `size` requested bytes at `ptr` from pool `pool`. */
static inline void memscape_pool_allocated(int pool, const void *ptr, size_t size) {
    if (memscape_shim_pool_alloc && pool > 0) memscape_shim_pool_alloc(pool, ptr, size);
}

/* The allocator took the block at `ptr` back into pool `pool`. */
static inline void memscape_pool_freed(int pool, const void *ptr) {
    if (memscape_shim_pool_free && pool > 0) memscape_shim_pool_free(pool, ptr);
}

#ifdef __cplusplus
}
#endif

#endif /* MEMSCAPE_H */
