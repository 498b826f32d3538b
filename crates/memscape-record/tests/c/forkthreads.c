/* fork while 4 other threads allocate: the child allocates and exits; the parent joins. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;

static void *worker(void *arg) {
    (void)arg;
    while (!stop) free(malloc(48));
    return NULL;
}

int main(void) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, NULL);
    usleep(20000);
    pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < 500; i++) free(malloc((size_t)i + 1));
        exit(3);
    }
    stop = 1;
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    int status;
    waitpid(child, &status, 0);
    return 0;
}
