/* The parent forks before allocating (so a child's heap starts empty, as valgrind counts it);
   child 1 allocates and exits; child 2 execs this program again in "child" mode. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void churn(int n, int leak_every) {
    for (int i = 0; i < n; i++) {
        void *p = malloc((size_t)(i % 100) + 1);
        if (i % leak_every != 0) free(p);
    }
}

int main(int argc, char **argv) {
    if (argc > 1) {
        churn(300, 50);
        return 0;
    }
    pid_t first = fork();
    if (first == 0) {
        churn(500, 100);
        exit(0);
    }
    pid_t second = fork();
    if (second == 0) {
        char *args[] = {argv[0], "child", NULL};
        execv(argv[0], args);
        _exit(127);
    }
    churn(1000, 10);
    int status;
    waitpid(first, &status, 0);
    waitpid(second, &status, 0);
    return 0;
}
