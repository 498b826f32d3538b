/* A recording long enough to be merged while it runs: 3 named threads allocate and free for
   about 1.5 s, each keeping a ring of live blocks (some of them live across many segments, a
   few never freed), with reallocs; a forked child does the same for a while and exits 5. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void churn(int id, int rounds) {
    void *ring[512] = {0};
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 512; i++) {
            int k = (i * 7 + r * 13) & 511;
            if (ring[k] && (i + r) % 3 == 0) {
                ring[k] = realloc(ring[k], 32 + (size_t)((i + id) % 700));
                continue;
            }
            free(ring[k]);
            ring[k] = malloc(16 + (size_t)((i * 31 + r + id) % 400));
        }
        usleep(3000);
    }
    for (int k = 0; k < 512; k++) {
        if (k % 64 != 0) free(ring[k]); /* a few stay: never freed */
    }
}

static void *worker(void *arg) {
    char name[16];
    snprintf(name, sizeof name, "churn-%d", (int)(long)arg);
    pthread_setname_np(pthread_self(), name);
    churn((int)(long)arg, 400);
    return NULL;
}

int main(void) {
    pthread_t t[3];
    for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    usleep(200000);
    pid_t child = fork();
    if (child == 0) {
        churn(9, 150);
        exit(5);
    }
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    int status;
    waitpid(child, &status, 0);
    return 0;
}
