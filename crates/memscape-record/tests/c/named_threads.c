/* Thread names in a recording: one thread named before its first allocation, one renamed
 * after allocating, one renamed from outside (by main) while it waits, and one never named
 * (it keeps the program's name). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

static pthread_barrier_t renamed;

static void churn(int n) {
    for (int i = 0; i < n; i++) free(malloc(32 + i));
}

static void *early(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "early-worker");
    churn(100);
    return NULL;
}

static void *late(void *arg) {
    (void)arg;
    churn(100);
    pthread_setname_np(pthread_self(), "late-worker");
    churn(100);
    return NULL;
}

static void *outside(void *arg) {
    (void)arg;
    churn(10);
    pthread_barrier_wait(&renamed); /* main names this thread between the two waits */
    pthread_barrier_wait(&renamed);
    churn(100);
    return NULL;
}

static void *plain(void *arg) {
    (void)arg;
    churn(100);
    return NULL;
}

int main(void) {
    pthread_t t[4];
    pthread_barrier_init(&renamed, NULL, 2);
    pthread_create(&t[0], NULL, early, NULL);
    pthread_create(&t[1], NULL, late, NULL);
    pthread_create(&t[2], NULL, outside, NULL);
    pthread_create(&t[3], NULL, plain, NULL);
    pthread_barrier_wait(&renamed);
    pthread_setname_np(t[2], "outside-named");
    pthread_barrier_wait(&renamed);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    churn(10);
    return 0;
}
