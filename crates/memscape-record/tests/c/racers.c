/* 64 threads allocate and free, then race to exit while the main thread exits too. */
#include <pthread.h>
#include <stdlib.h>

static void *worker(void *arg) {
    size_t n = (size_t)arg;
    for (size_t i = 0; i < 2000; i++) {
        void *p = malloc(16 + (i + n) % 200);
        if (i % 7) free(p);
    }
    return NULL;
}

int main(void) {
    pthread_t t[64];
    for (size_t i = 0; i < 64; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 64; i++) pthread_join(t[i], NULL);
    return 0;
}
