/* Allocates for about a second (the recorder merges and symbolizes these stacks while the
   program runs), then dlopens the library argv[1], calls it and exits without dlclose: the
   library's stacks are first seen at the very end. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *early(long i) { return malloc((size_t)(i % 64) + 1); }

static long elapsed_ns(const struct timespec *from) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - from->tv_sec) * 1000000000L + (now.tv_nsec - from->tv_nsec);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    void *keep[64] = {0};
    long i = 0;
    while (elapsed_ns(&start) < 1000000000L) {
        free(keep[i % 64]);
        keep[i % 64] = early(i);
        i++;
        if (i % 1000 == 0) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    for (int k = 0; k < 64; k++) free(keep[k]);
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (lib == NULL) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    int (*work)(int) = (int (*)(int))dlsym(lib, "work");
    if (work == NULL || work(300) < 0) return 3;
    return 0;
}
