/* Allocates for a few seconds: ROUNDS (argv[1], default 30) rounds 50 ms apart, each 1000
 * allocations of which half are freed at once and half kept to the end. The live view's test
 * program: a follower must see the counts grow while it runs. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *kept[1 << 20];

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 30;
    int n = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 1000; i++) {
            void *p = malloc(64 + (size_t)(i % 512));
            memset(p, r, 64);
            if (i % 2 && n < (1 << 20))
                kept[n++] = p;
            else
                free(p);
        }
        struct timespec pause = {0, 50 * 1000 * 1000};
        while (nanosleep(&pause, &pause) != 0) {
        }
    }
    for (int i = 0; i < n; i++)
        free(kept[i]);
    return 0;
}
