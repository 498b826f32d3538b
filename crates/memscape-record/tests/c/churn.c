/* N malloc/free pairs over a ring of 4,096 live blocks: a recording of 2N events whose live
   set stays the same however long it runs. A second argument caps the rate (pairs per
   second): what a streaming merge holds waiting for its frontier is the last 250 ms of
   events, so a fixed rate makes that part the same on a quiet and on a loaded machine. */
#include <stdlib.h>
#include <time.h>
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    double rate = argc > 2 ? atof(argv[2]) : 0;
    static void *ring[4096];
    double start = now();
    for (long i = 0; i < n; i++) {
        long k = (i * 2654435761u) & 4095;
        free(ring[k]);
        ring[k] = malloc(16 + (size_t)(i % 200));
        if (rate > 0 && (i & 16383) == 16383) {
            double ahead = (i + 1) / rate - (now() - start);
            if (ahead > 0) {
                struct timespec d = {(time_t)ahead, (long)((ahead - (time_t)ahead) * 1e9)};
                nanosleep(&d, NULL);
            }
        }
    }
    for (int k = 0; k < 4096; k++) free(ring[k]);
    return 0;
}
