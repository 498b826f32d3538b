/* Daemonizes like a server started with `daemonize yes`: fork, setsid, fork again, close
   stdio, then allocates N blocks (frees every other one) and exits. The launched process
   exits at once. */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 101000;
    if (fork() != 0) return 0;
    setsid();
    if (fork() != 0) _exit(0);
    close(0);
    close(1);
    close(2);
    usleep(100000); /* the launcher has long seen its child exit */
    void **keep = malloc(sizeof(void *) * (size_t)n);
    for (int i = 0; i < n; i++) {
        keep[i] = malloc((size_t)(i % 64) + 1);
        if (i % 2) {
            free(keep[i]);
            keep[i] = NULL;
        }
    }
    for (int i = 0; i < n; i++) free(keep[i]);
    free(keep);
    return 0;
}
