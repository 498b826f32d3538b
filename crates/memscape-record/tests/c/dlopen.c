/* dlopen after start: the module maps must be captured again so the new library is known. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    void *before = malloc(10);
    void *lib = dlopen("libz.so.1", RTLD_NOW);
    if (lib == NULL) return 2;
    void *after = malloc(20);
    free(before);
    free(after);
    dlclose(lib);
    return 0;
}
