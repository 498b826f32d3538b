/* memscape demo: a small sorting program whose valgrind lackey trace shows the cyclical
 * behaviour the cycles view is about. Insertion sort of a shuffled array, then a bubble sort
 * pass over a second array: two loop nests with different rhythms. Compiled -O0 so the loop
 * variables live in memory, as in Choudhury et al.'s examples. */
#include <stdio.h>

#define N 48

static int first[N], second[N];

__attribute__((noinline)) void insertion_sort(int *a, int n) {
    for (int i = 1; i < n; i++) {
        int key = a[i];
        int j = i - 1;
        while (j >= 0 && a[j] > key) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = key;
    }
}

__attribute__((noinline)) void bubble_sort(int *a, int n) {
    for (int i = 0; i < n - 1; i++)
        for (int j = 0; j < n - 1 - i; j++)
            if (a[j] > a[j + 1]) {
                int t = a[j];
                a[j] = a[j + 1];
                a[j + 1] = t;
            }
}

int main(void) {
    /* A fixed pseudo-random permutation (linear congruential), so the trace is reproducible. */
    unsigned state = 12345;
    for (int i = 0; i < N; i++) {
        state = state * 1103515245u + 12345u;
        first[i] = (int)((state >> 16) % 1000);
        second[i] = first[i] ^ 0x155;
    }
    insertion_sort(first, N);
    bubble_sort(second, N);
    long checksum = 0;
    for (int i = 0; i < N; i++) checksum = checksum * 31 + first[i] + second[i];
    printf("%ld\n", checksum);
    return 0;
}
