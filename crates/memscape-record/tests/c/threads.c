/* 8 threads x N allocations; every block is freed by another thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 8
static int per_thread;
static void **blocks[THREADS];

static void *alloc_phase(void *arg) {
    long t = (long)arg;
    for (int i = 0; i < per_thread; i++) blocks[t][i] = malloc((size_t)(i % 1024) + 8);
    return NULL;
}

static void *free_phase(void *arg) {
    long t = (long)arg;
    void **mine = blocks[(t + 1) % THREADS];
    for (int i = 0; i < per_thread; i++) free(mine[i]);
    return NULL;
}

int main(int argc, char **argv) {
    per_thread = argc > 1 ? atoi(argv[1]) : 100000;
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++) blocks[t] = malloc(sizeof(void *) * (size_t)per_thread);
    for (long t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, alloc_phase, (void *)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (long t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, free_phase, (void *)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++) free(blocks[t]);
    printf("done\n");
    return 0;
}
