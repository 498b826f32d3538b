/* Allocation and free sites a forked child uses again: the parent allocates and frees from a
   few call paths at several depths, forks, and the child does the same (the same stacks, which
   the child's own file must define again: stack ids restart there), then forks a grandchild
   that does it once more. The recorder's per-thread memory of recent stacks' ids must not
   carry the parent's ids into a child. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void *leaf(size_t n, int how) {
    void *p;
    switch (how % 3) {
    case 0: p = malloc(n); break;
    case 1: p = calloc(1, n); break;
    default: p = realloc(malloc(n), 2 * n); break;
    }
    if (p) memset(p, 1, n);
    return p;
}

__attribute__((noinline)) static void *down(int depth, size_t n, int how) {
    void *p = depth == 0 ? leaf(n, how) : down(depth - 1, n + 1, how);
    __asm__ volatile("" ::: "memory"); /* not a tail call: one frame per level */
    return p;
}

__attribute__((noinline)) static void work(int rounds) {
    void *kept[64];
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 64; i++) kept[i] = down((i * 7 + r) % 23, 16 + (size_t)i, i + r);
        for (int i = 0; i < 64; i++) free(kept[i]);
    }
}

int main(void) {
    /* One call site of `work` for all three: the same stacks in each process. */
    for (int generation = 0; generation < 3; generation++) {
        work(generation == 2 ? 100 : 200);
        if (generation == 2) break;
        pid_t child = fork();
        if (child != 0) {
            waitpid(child, NULL, 0);
            break;
        }
    }
    return 0;
}
