/* Allocates from a signal handler (not async-signal-safe in general, but programs do it and
   the recorder must not deadlock or lose events): 200 SIGALRMs from an interval timer while
   the main thread allocates. With a file argument, writes "LOOPS FIRED" there (write(2), no
   allocation), so that a test can compare the counts with valgrind's, whose run differs in
   how many loops the 200 signals take. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

static volatile int fired;

static void on_alarm(int sig) {
    (void)sig;
    free(malloc(33));
    fired++;
}

int main(int argc, char **argv) {
    signal(SIGALRM, on_alarm);
    struct itimerval tv = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &tv, NULL);
    long loops = 0;
    while (fired < 200) {
        free(malloc(64));
        loops++;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    /* A signal still pending stays pending: `fired` is final. */
    sigset_t alarm;
    sigemptyset(&alarm);
    sigaddset(&alarm, SIGALRM);
    sigprocmask(SIG_BLOCK, &alarm, NULL);
    if (argc > 1) {
        char line[64];
        int n = snprintf(line, sizeof line, "%ld %d\n", loops, fired);
        int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            if (write(fd, line, (size_t)n) != n) return 1;
            close(fd);
        }
    }
    return 0;
}
