/*
 * prog.c: a jemalloc-linked test program with a known allocation truth.
 *
 * Usage: prog SCENARIO DUMP_PATH
 *
 * Two threads, named through mallctl("thread.prof.name"), each allocate from
 * four distinct, non-inlined call sites; then the main thread writes a heap
 * profile with mallctl("prof.dump") and prints, as JSON on stdout, what was
 * really allocated and what is still live per call-site function. Volumes
 * scale with the sampling period R = 2^opt.lg_prof_sample so that every
 * lg_prof_sample gives a similar number of samples per site.
 *
 * Scenarios:
 *   sites  about 12 samples' worth of bytes per site and thread
 *   tiny   about 3 samples' worth per site and thread (intervals at small n)
 *
 * Sizes are chosen through nallocx() so that the truth is in jemalloc's own
 * usable sizes (usize), which is what the profile samples and counts.
 * Build: gcc -O1 -g -fno-omit-frame-pointer -fno-inline prog.c -ljemalloc -lpthread
 */
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One call site's truth, summed over both threads. */
struct truth {
	const char *name;
	int single_size; /* 1 when every allocation of the site has one usize */
	uint64_t live_bytes, live_objects;
	uint64_t alloc_bytes, alloc_objects;
};

enum { SITE_A, SITE_B, SITE_C, SITE_D, NSITES };

static struct truth sites[NSITES] = {
	{"alloc_small_a", 1, 0, 0, 0, 0},
	{"alloc_large_b", 1, 0, 0, 0, 0},
	{"alloc_mixed_c", 0, 0, 0, 0, 0},
	{"alloc_freed_d", 1, 0, 0, 0, 0},
};

static pthread_mutex_t truth_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rate;   /* R in bytes */
static double per_site; /* bytes per site and thread, in units of R */

/* Live pointers are kept here so that nothing is freed by accident. */
struct keep {
	void **p;
	size_t n, cap;
};

static void keep_push(struct keep *k, void *p)
{
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 1024;
		k->p = realloc(k->p, k->cap * sizeof(void *));
		if (k->p == NULL) {
			perror("realloc");
			exit(1);
		}
	}
	k->p[k->n++] = p;
}

static void record(int site, uint64_t usize, int live)
{
	struct truth *t = &sites[site];
	pthread_mutex_lock(&truth_mu);
	t->alloc_bytes += usize;
	t->alloc_objects++;
	if (live) {
		t->live_bytes += usize;
		t->live_objects++;
	}
	pthread_mutex_unlock(&truth_mu);
}

static void *must(void *p)
{
	if (p == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return p;
}

/* Site A: many small objects of one size, all live. */
__attribute__((noinline)) void alloc_small_a(struct keep *k, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		keep_push(k, must(malloc(48)));
	}
	for (uint64_t i = 0; i < n; i++) {
		record(SITE_A, nallocx(48, 0), 1);
	}
}

/* Site B: a few objects of one size near R, all live. */
__attribute__((noinline)) void alloc_large_b(struct keep *k, uint64_t n, size_t size)
{
	for (uint64_t i = 0; i < n; i++) {
		void *p = must(malloc(size));
		memset(p, 1, 64);
		keep_push(k, p);
	}
	for (uint64_t i = 0; i < n; i++) {
		record(SITE_B, nallocx(size, 0), 1);
	}
}

/* Site C: one call site, mixed sizes from 16 B to 4 R, all live. */
__attribute__((noinline)) void alloc_mixed_c(struct keep *k, uint64_t budget)
{
	static const size_t small[] = {16, 80, 320, 1280};
	uint64_t spent = 0;
	for (uint64_t i = 0; spent < budget; i++) {
		/* every 64th allocation is large: 4 R, p close to 1 */
		size_t size = (i % 64 == 63) ? (size_t)(4 * rate) : small[i % 4];
		keep_push(k, must(malloc(size)));
		record(SITE_C, nallocx(size, 0), 1);
		spent += nallocx(size, 0);
	}
}

/* Site D: one small size; every other allocation is freed at once. */
__attribute__((noinline)) void alloc_freed_d(struct keep *k, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		void *p = must(malloc(64));
		if (i % 2 == 0) {
			keep_push(k, p);
			record(SITE_D, nallocx(64, 0), 1);
		} else {
			free(p);
			record(SITE_D, nallocx(64, 0), 0);
		}
	}
}

static void name_thread(const char *name)
{
	const char *v = name;
	if (mallctl("thread.prof.name", NULL, NULL, (void *)&v, sizeof(v)) != 0) {
		fprintf(stderr, "mallctl thread.prof.name failed: is jemalloc built with profiling?\n");
		exit(1);
	}
}

static void *worker(void *arg)
{
	struct keep *k = malloc(sizeof(*k));
	memset(k, 0, sizeof(*k));
	name_thread((const char *)arg);
	uint64_t budget = (uint64_t)(per_site * (double)rate);
	alloc_small_a(k, budget / 48);
	size_t big = (size_t)rate; /* a power of two, so a size class */
	uint64_t nb = budget / big;
	alloc_large_b(k, nb ? nb : 1, big);
	alloc_mixed_c(k, budget);
	alloc_freed_d(k, 2 * budget / 64);
	return k; /* the pointers stay live until exit */
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s sites|tiny DUMP_PATH\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "sites") == 0) {
		per_site = 12;
	} else if (strcmp(argv[1], "tiny") == 0) {
		per_site = 3;
	} else {
		fprintf(stderr, "unknown scenario %s\n", argv[1]);
		return 2;
	}
	bool prof = false;
	size_t sz = sizeof(prof);
	if (mallctl("opt.prof", &prof, &sz, NULL, 0) != 0 || !prof) {
		fprintf(stderr, "profiling is off: run with MALLOC_CONF=prof:true\n");
		return 1;
	}
	size_t lg = 0;
	sz = sizeof(lg);
	if (mallctl("prof.lg_sample", &lg, &sz, NULL, 0) != 0) {
		fprintf(stderr, "mallctl prof.lg_sample failed\n");
		return 1;
	}
	rate = (uint64_t)1 << lg;

	static char name1[] = "worker 1";
	static char name2[] = "io-pool";
	pthread_t t1, t2;
	void *k1, *k2;
	/* Concurrent threads: jemalloc seeds each thread's sampling PRNG from
	 * its thread-state address, and a thread started after another ended
	 * may reuse that address and draw the very same samples. */
	if (pthread_create(&t1, NULL, worker, name1) != 0 ||
	    pthread_create(&t2, NULL, worker, name2) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	pthread_join(t1, &k1);
	pthread_join(t2, &k2);

	const char *path = argv[2];
	if (mallctl("prof.dump", NULL, NULL, (void *)&path, sizeof(path)) != 0) {
		fprintf(stderr, "mallctl prof.dump %s failed\n", path);
		return 1;
	}
	printf("{\"rate\":%llu,\"sites\":[", (unsigned long long)rate);
	for (int i = 0; i < NSITES; i++) {
		struct truth *t = &sites[i];
		printf("%s{\"func\":\"%s\",\"single_size\":%s,\"live_bytes\":%llu,"
		       "\"live_objects\":%llu,\"alloc_bytes\":%llu,\"alloc_objects\":%llu}",
		       i ? "," : "", t->name, t->single_size ? "true" : "false",
		       (unsigned long long)t->live_bytes, (unsigned long long)t->live_objects,
		       (unsigned long long)t->alloc_bytes, (unsigned long long)t->alloc_objects);
	}
	printf("]}\n");
	(void)k1;
	(void)k2;
	return 0;
}
