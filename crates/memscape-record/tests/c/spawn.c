/* vfork + exec, posix_spawn, and an exec that fails: all recorded in one trace. */
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc > 1) {
        for (int i = 0; i < 200; i++) free(malloc(strlen(argv[1]) + (size_t)i));
        return 0;
    }
    void *parent = malloc(100);
    pid_t a = vfork();
    if (a == 0) {
        char *args[] = {argv[0], "vforked", NULL};
        execv(argv[0], args);
        _exit(127);
    }
    pid_t b;
    char *args[] = {argv[0], "spawned", NULL};
    posix_spawn(&b, argv[0], NULL, NULL, args, environ);
    pid_t c = vfork();
    if (c == 0) {
        char *bad[] = {"/nonexistent/program", NULL};
        execv(bad[0], bad);
        _exit(127); /* exec failed */
    }
    int status;
    waitpid(a, &status, 0);
    waitpid(b, &status, 0);
    waitpid(c, &status, 0);
    free(parent);
    return WEXITSTATUS(status) == 127 ? 0 : 1;
}
