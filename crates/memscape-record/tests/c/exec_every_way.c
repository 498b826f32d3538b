/* Starts PROGRAM (argv[1], a path; argv[2], its name found through PATH) in every way the
 * recorder looks at: posix_spawn, posix_spawnp, vfork + execv/execvp/execle, fork +
 * execl/execlp/execve/fexecve. Each child runs `PROGRAM 3`. Allocates itself between. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void wait_for(pid_t pid) {
    int status;
    if (pid > 0) waitpid(pid, &status, 0);
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    const char *path = argv[1], *name = argv[2];
    char *args[] = {(char *)name, "3", NULL};
    void *mine = malloc(64);
    pid_t pid;
    posix_spawn(&pid, path, NULL, NULL, args, environ);
    wait_for(pid);
    posix_spawnp(&pid, name, NULL, NULL, args, environ);
    wait_for(pid);
    if ((pid = vfork()) == 0) {
        execv(path, args);
        _exit(127);
    }
    wait_for(pid);
    if ((pid = vfork()) == 0) {
        execvp(name, args);
        _exit(127);
    }
    wait_for(pid);
    if ((pid = vfork()) == 0) {
        execle(path, name, "3", (char *)NULL, environ);
        _exit(127);
    }
    wait_for(pid);
    if ((pid = fork()) == 0) {
        execl(path, name, "3", (char *)NULL);
        _exit(127);
    }
    wait_for(pid);
    if ((pid = fork()) == 0) {
        execlp(name, name, "3", (char *)NULL);
        _exit(127);
    }
    wait_for(pid);
    if ((pid = fork()) == 0) {
        execve(path, args, environ);
        _exit(127);
    }
    wait_for(pid);
    if ((pid = fork()) == 0) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        fexecve(fd, args, environ);
        _exit(127);
    }
    wait_for(pid);
    free(mine);
    return 0;
}
