/* fork while 4 other threads allocate: the child allocates and exits 3; the parent joins.
   Every thread makes a fixed number of allocations, so that the parent's counts are the same
   in every run (and under valgrind), whenever the fork lands. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 50000; i++) free(malloc(48));
    return NULL;
}

int main(void) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, NULL);
    usleep(2000);
    pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < 500; i++) free(malloc((size_t)i + 1));
        exit(3);
    }
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    int status;
    waitpid(child, &status, 0);
    return 0;
}
