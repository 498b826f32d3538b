/* Anonymous mappings for the recorder's mmap/munmap event kind: five mappings of distinct page
 * counts (3, 5, 7, 11, 13 pages); the 3- and 5-page ones are adjacent and unmapped by one
 * munmap covering both, the 7-page one by its own munmap, 11 and 13 stay mapped. A file mapping
 * and a heap block are made too (the file mapping is not an anonymous one). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static void *map(size_t pages, void *at) {
    long page = sysconf(_SC_PAGESIZE);
    void *p = mmap(at, pages * (size_t)page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
    if (p == MAP_FAILED) exit(1);
    ((char *)p)[0] = 1;
    return p;
}

int main(void) {
    long page = sysconf(_SC_PAGESIZE);
    /* Reserve 8 pages, then map 3 + 5 pages over it at fixed addresses: adjacent. */
    char *area = map(8, NULL);
    munmap(area, 8 * (size_t)page);
    char *a = map(3, area);
    char *b = map(5, area + 3 * page);
    char *c = map(7, NULL);
    char *d = map(11, NULL);
    char *e = map(13, NULL);
    FILE *f = tmpfile();
    if (!f) return 1;
    fputc('x', f);
    fflush(f);
    void *file_map = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE, fileno(f), 0);
    if (file_map == MAP_FAILED) return 1;
    char *heap = malloc(100);
    munmap(a, 8 * (size_t)page); /* a and b */
    munmap(c, 7 * (size_t)page);
    free(heap);
    printf("%p %p %p\n", (void *)b, (void *)d, (void *)e);
    return 0;
}
