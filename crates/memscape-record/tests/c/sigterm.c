/* Allocates, then kills itself with SIGTERM (or SIGINT with a second argument "int") mid-run:
   nothing recorded before the signal may be lost. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 5000;
    int sig = argc > 2 ? SIGINT : SIGTERM;
    for (int i = 0;; i++) {
        void *p = malloc((size_t)(i % 256) + 1);
        if (i % 3 == 0) free(p);
        if (i == n) kill(getpid(), sig);
    }
}
