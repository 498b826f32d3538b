/* A library that allocates when loaded, when called and frees when unloaded. */
#include <stdlib.h>

static void *held[100];

__attribute__((constructor)) static void load(void) {
    for (int i = 0; i < 100; i++) held[i] = malloc((size_t)i + 8);
}

int work(int n) {
    int sum = 0;
    for (int i = 0; i < n; i++) {
        char *p = malloc(24);
        p[0] = (char)i;
        sum += p[0];
        free(p);
    }
    return sum;
}

__attribute__((destructor)) static void unload(void) {
    for (int i = 0; i < 100; i++) free(held[i]);
}
