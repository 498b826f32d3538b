/* Allocates N blocks (never frees), prints "ready", then sleeps until killed. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    for (int i = 0; i < n; i++) malloc((size_t)(i % 50) + 1);
    printf("ready\n");
    fflush(stdout);
    for (;;) pause();
}
