/* dlopen a library that allocates in its constructor and its functions and frees in its
   destructor, call it, dlclose it, and do it again. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    for (int round = 0; round < 2; round++) {
        void *lib = dlopen(argv[1], RTLD_NOW);
        if (lib == NULL) {
            fprintf(stderr, "%s\n", dlerror());
            return 2;
        }
        int (*work)(int) = (int (*)(int))dlsym(lib, "work");
        if (work == NULL || work(300) < 0) return 3;
        dlclose(lib);
    }
    return 0;
}
