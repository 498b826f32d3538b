/* Allocates from a signal handler (not async-signal-safe in general, but programs do it and
   the recorder must not deadlock or lose events): 200 SIGALRMs from an interval timer while
   the main thread allocates. */
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>

static volatile int fired;

static void on_alarm(int sig) {
    (void)sig;
    free(malloc(33));
    fired++;
}

int main(void) {
    signal(SIGALRM, on_alarm);
    struct itimerval tv = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &tv, NULL);
    while (fired < 200) free(malloc(64));
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    return 0;
}
