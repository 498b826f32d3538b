/* N malloc/free pairs over a ring of 4,096 live blocks: a recording of 2N events whose live
   set stays the same however long it runs. */
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    static void *ring[4096];
    for (long i = 0; i < n; i++) {
        long k = (i * 2654435761u) & 4095;
        free(ring[k]);
        ring[k] = malloc(16 + (size_t)(i % 200));
    }
    for (int k = 0; k < 4096; k++) free(ring[k]);
    return 0;
}
