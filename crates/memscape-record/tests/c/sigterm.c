/* Allocates, then kills itself with SIGTERM (or SIGINT with a second argument "int") mid-run:
   nothing recorded before the signal may be lost. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 5000;
    int sig = argc > 2 ? SIGINT : SIGTERM;
    /* A shell starts background jobs with SIGINT ignored, and children inherit that: restore the
       default action so that the signal ends the program wherever the tests were started. */
    signal(sig, SIG_DFL);
    for (int i = 0;; i++) {
        void *p = malloc((size_t)(i % 256) + 1);
        if (i % 3 == 0) free(p);
        if (i == n) kill(getpid(), sig);
    }
}
