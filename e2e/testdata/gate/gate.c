/*
 * gate.c: a jemalloc-linked program that writes one heap dump with a known
 * truth, for heapest's gate and diff tests (e2e/gate_test.go).
 *
 * Usage: gate DUMP FACTOR SEED
 *
 * Four sites keep their allocations live until the dump:
 *   site_grow   FACTOR x 10 MiB of 4000-byte objects (the site a change grows)
 *   site_small  2 MiB of 32-byte objects
 *   site_mid    4 MiB of 4 KiB objects
 *   site_large  8 objects of 1 MiB
 * Before them, SEED picks a number of short-lived allocations of random
 * sizes, all freed at once: they move the sampler's countdown without
 * changing what is live, so the truth depends on FACTOR alone. (jemalloc
 * draws its sampling thresholds from a per-thread state seeded in each
 * process anyway; the seed only adds to that.)
 *
 * Run with MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:N. The
 * truth (live bytes and objects per site function) is printed as one JSON
 * line on stdout, after the dump. Sizes go through nallocx(), so that the
 * truth is in jemalloc's usable sizes, which is what the dump counts.
 * Build: gcc -O1 -g -fno-omit-frame-pointer -fno-inline gate.c -ljemalloc
 */
#include <jemalloc/jemalloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SITE_GROW, SITE_SMALL, SITE_MID, SITE_LARGE, NSITES };

static const char *names[NSITES] = {"site_grow", "site_small", "site_mid", "site_large"};
static uint64_t live_bytes[NSITES], live_objects[NSITES];

/* The live pointers are kept in static storage, not on the heap: a heap
 * array would be live memory at a site of its own, and one whose size
 * changed with FACTOR. */
#define MAXKEPT (1 << 20)
static void *kept[MAXKEPT];
static size_t nkept;

/*
 * alloc_n allocates n objects of size z for site s and keeps them live. It
 * is a macro, expanded in each site function, so that the site is the leaf
 * of its stacks: an inlined function would be a frame of its own (DWARF
 * names inlined calls, and heapest shows them, as jeprof does).
 */
#define alloc_n(s, n, z) do { \
	size_t usize_ = nallocx((z), 0); \
	for (size_t i_ = 0; i_ < (n); i_++) { \
		void *p_ = malloc(z); \
		if (p_ == NULL) { \
			perror("malloc"); \
			exit(1); \
		} \
		if (nkept == MAXKEPT) { \
			fprintf(stderr, "too many objects\n"); \
			exit(1); \
		} \
		memset(p_, 1, (z) < 64 ? (z) : 64); \
		kept[nkept++] = p_; \
		live_bytes[s] += usize_; \
		live_objects[s]++; \
	} \
} while (0)

/* One function per site, never inlined: each is its own stack leaf. */
__attribute__((noinline)) void site_grow(size_t n, size_t z) { alloc_n(SITE_GROW, n, z); }
__attribute__((noinline)) void site_small(size_t n, size_t z) { alloc_n(SITE_SMALL, n, z); }
__attribute__((noinline)) void site_mid(size_t n, size_t z) { alloc_n(SITE_MID, n, z); }
__attribute__((noinline)) void site_large(size_t n, size_t z) { alloc_n(SITE_LARGE, n, z); }

static uint64_t rng;

static uint64_t next(uint64_t lo, uint64_t hi)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return lo + rng % (hi - lo + 1);
}

/* churn allocates up to 4,000 objects of 16 B to 16 KiB (16 MiB on
 * average) and frees them all: nothing of it is live at the dump. */
__attribute__((noinline)) void churn(void)
{
	static void *tmp[4000];
	size_t n = next(0, 4000);
	for (size_t i = 0; i < n; i++) {
		tmp[i] = malloc(next(16, 16384));
		if (tmp[i] == NULL) {
			perror("malloc");
			exit(1);
		}
		memset(tmp[i], 2, 16);
	}
	for (size_t i = 0; i < n; i++)
		free(tmp[i]);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: gate DUMP FACTOR SEED\n");
		return 2;
	}
	const char *path = argv[1];
	double factor = strtod(argv[2], NULL);
	if (!(factor > 0 && factor <= 50)) {
		fprintf(stderr, "gate: FACTOR must be in (0, 50]\n");
		return 2;
	}
	rng = strtoull(argv[3], NULL, 10) * 2654435761u + 1;
	churn();
	site_grow((size_t)llround(factor * (10 << 20) / 4000.0), 4000);
	site_small((2 << 20) / 32, 32);
	site_mid((4 << 20) / 4096, 4096);
	site_large(8, 1 << 20);
	if (mallctl("prof.dump", NULL, NULL, &path, sizeof(path)) != 0) {
		fprintf(stderr, "prof.dump %s failed\n", path);
		return 1;
	}
	size_t lg = 0, sz = sizeof(lg);
	mallctl("prof.lg_sample", &lg, &sz, NULL, 0);
	printf("{\"dump\":\"%s\",\"lg\":%zu,\"factor\":%g,\"sites\":{", path, lg, factor);
	for (int s = 0; s < NSITES; s++) {
		printf("%s\"%s\":{\"live_bytes\":%llu,\"live_objects\":%llu}", s ? "," : "", names[s],
		       (unsigned long long)live_bytes[s], (unsigned long long)live_objects[s]);
	}
	printf("}}\n");
	return 0;
}
