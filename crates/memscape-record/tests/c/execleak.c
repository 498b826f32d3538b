/* Allocates 100 blocks of 4321 bytes it never frees, then execs argv[1] with the rest of its
 * arguments; without arguments (the exec'd run), allocates 50 blocks of 1234 bytes it frees
 * and 3 of 999 it leaks. The first run's blocks die with its address space at the exec. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc > 1) {
        static void *keep[100];
        for (int i = 0; i < 100; i++) {
            keep[i] = malloc(4321);
            memset(keep[i], i, 4321);
        }
        usleep(20000);
        execv(argv[1], argv + 1);
        return 127;
    }
    void *kept[50];
    for (int i = 0; i < 50; i++) kept[i] = malloc(1234);
    for (int i = 0; i < 50; i++) free(kept[i]);
    for (int i = 0; i < 3; i++) memset(malloc(999), 0, 999);
    return 0;
}
