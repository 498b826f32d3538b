/* The allocation demo of memscape: a small multi-threaded key-value service whose heap does
   what real servers' heaps do, so that every view has something to show.

   - main loads a dictionary of keys (long-lived small strings) and builds an index that grows
     by doubling with realloc (the old arrays die at each growth; large ones move to mmap);
   - four workers serve requests: each request allocates a buffer and a few tokens that die at
     once, and inserts values into a shared LRU cache of bounded size, whose evictions leave
     holes of every size (fragmentation); each worker thread allocates in its own glibc arena,
     i.e. in its own address region;
   - an audit log keeps one record per request and never frees them: a slow, steady leak;
   - a batch import in the middle allocates a burst of large blocks and frees them together;
   - between phases the service idles for a moment (gaps in the activity).

   Build and record: assets/demo/record-kvstore-demo.sh (gcc -O0 -g, memscape record). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 4
#define CACHE_CAPACITY 1500
#define REQUESTS_PER_WORKER 5000

static unsigned long long next_random(unsigned long long *state) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 33;
}

/* ---- dictionary and index (main thread) ---- */

struct index {
    char **keys;
    size_t len, cap;
};

static char *intern_key(unsigned long long *rng, int i) {
    size_t len = 8 + next_random(rng) % 40;
    char *key = malloc(len + 1);
    for (size_t j = 0; j < len; j++) key[j] = (char)('a' + (i + j * 7) % 26);
    key[len] = 0;
    return key;
}

static void index_push(struct index *ix, char *key) {
    if (ix->len == ix->cap) {
        ix->cap = ix->cap ? ix->cap * 2 : 16;
        ix->keys = realloc(ix->keys, ix->cap * sizeof *ix->keys);
    }
    ix->keys[ix->len++] = key;
}

static void load_dictionary(struct index *ix, int n, unsigned long long *rng) {
    for (int i = 0; i < n; i++) index_push(ix, intern_key(rng, i));
}

/* ---- the shared LRU cache ---- */

struct entry {
    struct entry *prev, *next;
    size_t size;
    char *value;
};

static struct {
    pthread_mutex_t lock;
    struct entry *head, *tail;
    int count;
} cache = {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0};

static void cache_evict_locked(void) {
    struct entry *victim = cache.tail;
    cache.tail = victim->prev;
    if (cache.tail) cache.tail->next = NULL; else cache.head = NULL;
    cache.count--;
    free(victim->value);
    free(victim);
}

static void cache_insert(size_t size, unsigned long long *rng) {
    struct entry *e = malloc(sizeof *e);
    e->size = size;
    e->value = malloc(size);
    memset(e->value, (int)(next_random(rng) & 0xff), size);
    pthread_mutex_lock(&cache.lock);
    e->prev = NULL;
    e->next = cache.head;
    if (cache.head) cache.head->prev = e; else cache.tail = e;
    cache.head = e;
    if (++cache.count > CACHE_CAPACITY) cache_evict_locked();
    pthread_mutex_unlock(&cache.lock);
}

static void cache_clear(void) {
    pthread_mutex_lock(&cache.lock);
    while (cache.tail) cache_evict_locked();
    pthread_mutex_unlock(&cache.lock);
}

/* ---- the audit log: never freed ---- */

static struct {
    pthread_mutex_t lock;
    char **records;
    size_t len, cap;
} audit = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static void audit_log(int worker, int request) {
    char *record = malloc(48);
    snprintf(record, 48, "worker %d served request %d", worker, request);
    pthread_mutex_lock(&audit.lock);
    if (audit.len == audit.cap) {
        audit.cap = audit.cap ? audit.cap * 2 : 64;
        audit.records = realloc(audit.records, audit.cap * sizeof *audit.records);
    }
    audit.records[audit.len++] = record;
    pthread_mutex_unlock(&audit.lock);
}

/* ---- requests ---- */

static char **tokenize(const char *text, int *count) {
    char **tokens = malloc(8 * sizeof *tokens);
    int n = 0;
    const char *start = text;
    for (const char *p = text;; p++) {
        if (*p == ' ' || *p == 0) {
            size_t len = (size_t)(p - start);
            if (len && n < 8) {
                tokens[n] = malloc(len + 1);
                memcpy(tokens[n], start, len);
                tokens[n][len] = 0;
                n++;
            }
            if (*p == 0) break;
            start = p + 1;
        }
    }
    *count = n;
    return tokens;
}

static void serve_request(int worker, int request, unsigned long long *rng) {
    size_t body = 64 + next_random(rng) % 512;
    char *buffer = malloc(body + 32);
    snprintf(buffer, body + 32, "GET key%llu value%llu flags%d", next_random(rng) % 997,
             next_random(rng) % 89, request & 7);
    int count = 0;
    char **tokens = tokenize(buffer, &count);
    if (next_random(rng) % 3 == 0) {
        /* Values: mostly small, some medium, a few large. */
        unsigned long long r = next_random(rng) % 100;
        size_t size = r < 70 ? 16 + r * 3 : r < 95 ? 256 + r * 40 : 8192 + r * 200;
        cache_insert(size, rng);
    }
    for (int i = 0; i < count; i++) free(tokens[i]);
    free(tokens);
    free(buffer);
    if (request % 4 == 0) audit_log(worker, request);
}

struct worker_args {
    int id;
    int first, last;
};

static void *worker_main(void *p) {
    struct worker_args *args = p;
    char name[16];
    snprintf(name, sizeof name, "worker-%d", args->id);
    pthread_setname_np(pthread_self(), name);
    unsigned long long rng = 0x9e3779b97f4a7c15ULL * (unsigned long long)(args->id + 1);
    for (int r = args->first; r < args->last; r++) {
        serve_request(args->id, r, &rng);
        if (r % 500 == 499) usleep(2000);
    }
    return NULL;
}

static void serve_phase(int first, int last) {
    pthread_t threads[WORKERS];
    struct worker_args args[WORKERS];
    for (int w = 0; w < WORKERS; w++) {
        args[w] = (struct worker_args){w, first, last};
        pthread_create(&threads[w], NULL, worker_main, &args[w]);
    }
    for (int w = 0; w < WORKERS; w++) pthread_join(threads[w], NULL);
}

/* ---- a batch import: a burst of large blocks, freed together ---- */

static void batch_import(unsigned long long *rng) {
    enum { PAGES = 24 };
    char *pages[PAGES];
    for (int i = 0; i < PAGES; i++) {
        size_t size = 16384 + next_random(rng) % 49152;
        pages[i] = malloc(size);
        memset(pages[i], i, size);
    }
    for (int i = 0; i < PAGES; i++) free(pages[i]);
}

static void idle(int ms) {
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

int main(void) {
    unsigned long long rng = 42;
    struct index ix = {0};
    load_dictionary(&ix, 6000, &rng);
    idle(30);
    serve_phase(0, REQUESTS_PER_WORKER / 2);
    idle(30);
    batch_import(&rng);
    idle(20);
    serve_phase(REQUESTS_PER_WORKER / 2, REQUESTS_PER_WORKER);
    idle(30);
    cache_clear();
    /* Shut down: the dictionary goes, the audit log (the leak) stays. */
    for (size_t i = 0; i < ix.len; i++) free(ix.keys[i]);
    free(ix.keys);
    printf("served %d requests, %zu audit records\n", WORKERS * REQUESTS_PER_WORKER, audit.len);
    return 0;
}
