/* Single-threaded: every interposed allocation function, some leaks, some reallocs. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 1000;
    void *keep[64] = {0};
    for (int i = 0; i < rounds; i++) {
        char *a = malloc((size_t)(i % 500) + 1);
        int *b = calloc((size_t)(i % 7) + 1, sizeof(int));
        a = realloc(a, (size_t)(i % 3000) + 16);
        void *c = NULL;
        if (posix_memalign(&c, 64, 100) != 0) return 1;
        void *d = aligned_alloc(32, 256);
        void *e = memalign(128, 77);
        char *f = strdup("memscape");
        b = reallocarray(b, 10, sizeof(int));
        free(a);
        free(b);
        free(c);
        free(d);
        free(f);
        free(keep[i % 64]);
        keep[i % 64] = e;
    }
    void *v = valloc(1000);
    free(v);
    free(NULL);
    char *grow = NULL;
    for (int i = 1; i < 100; i++) grow = realloc(grow, (size_t)i * 1000);
    free(grow);
    if (malloc(12345) == NULL) return 1; /* leaked */
    printf("done %d\n", rounds);
    return 0;
}
