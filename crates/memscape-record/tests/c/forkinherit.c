/* A forked child frees blocks it inherited (a subshell cleaning up, a worker dropping the
   master's configuration): the parent allocates 1000 blocks, forks, and frees them all at
   once; the child waits, frees the 600 first it inherited and makes 100 of its own, then forks
   a grandchild that frees 300 more of the grandparent's and 50 of the child's, and ends. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *blocks[1000];

int main(void) {
    for (int i = 0; i < 1000; i++) blocks[i] = malloc(16 + (size_t)i);
    pid_t child = fork();
    if (child == 0) {
        usleep(50000); /* after the parent's frees: the copy is what the parent had at the fork */
        for (int i = 0; i < 600; i++) free(blocks[i]);
        void *own[100];
        for (int i = 0; i < 100; i++) own[i] = malloc(40);
        pid_t grandchild = fork();
        if (grandchild == 0) {
            for (int i = 600; i < 900; i++) free(blocks[i]);
            for (int i = 0; i < 50; i++) free(own[i]);
            _exit(0);
        }
        waitpid(grandchild, NULL, 0);
        for (int i = 0; i < 100; i++) free(own[i]);
        _exit(0);
    }
    for (int i = 0; i < 1000; i++) free(blocks[i]);
    waitpid(child, NULL, 0);
    return 0;
}
