/* Two allocations of recognizable sizes 200 ms apart, each between two CLOCK_MONOTONIC reads;
 * prints the four reads (ns) for the clock conversion test to compare with the recorded times. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(void) {
    unsigned long long before_a = now_ns();
    void *a = malloc(4242);
    unsigned long long after_a = now_ns();
    struct timespec pause = {0, 200 * 1000 * 1000};
    while (nanosleep(&pause, &pause) != 0) {
    }
    unsigned long long before_b = now_ns();
    void *b = malloc(4343);
    unsigned long long after_b = now_ns();
    free(a);
    free(b);
    printf("%llu %llu %llu %llu\n", before_a, after_a, before_b, after_b);
    return 0;
}
