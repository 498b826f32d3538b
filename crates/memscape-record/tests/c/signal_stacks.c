/* Allocations in signal handlers for the unwinder comparison: a SIGALRM handler on the
   thread's stack interrupting a computing loop (the walk crosses the signal frame), and 50
   raised SIGUSR1s whose handler runs on an alternate signal stack (the walk starts off the
   thread's stack). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile int fired;
static void *volatile keep;

static void on_alarm(int sig) {
    (void)sig;
    free(malloc(48));
    fired++;
}

static void on_usr1(int sig) {
    (void)sig;
    free(keep);
    keep = malloc(96);
}

static double spin(long n) {
    double x = 0;
    for (long i = 0; i < n; i++) x += (double)(i % 7) * 0.5;
    return x;
}

int main(void) {
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    for (int i = 0; i < 50; i++) raise(SIGUSR1);

    signal(SIGALRM, on_alarm);
    struct itimerval tv = {{0, 100}, {0, 100}};
    setitimer(ITIMER_REAL, &tv, NULL);
    double sum = 0;
    while (fired < 100) {
        sum += spin(20000);
        free(malloc(16));
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("%d %.0f\n", fired, sum > 0 ? 1.0 : 0.0);
    return 0;
}
