/*
 * fleet.c: a jemalloc-linked program that writes heap dumps with a known
 * truth, for heapest's merge tests (e2e/merge_test.go).
 *
 * Usage:
 *   fleet example DUMP
 *       The jemalloc notes' example: 1,000,000 live 8-byte objects at
 *       site_a, one live 8 MiB buffer at site_b, one dump. Run it as many
 *       processes to make a fleet.
 *   fleet phases DIR N SEED LG...
 *       N independent dumps from one process: before each, everything is
 *       freed and mallctl("prof.reset") sets a new lg_prof_sample (taken
 *       in turn from LG...); then four sites allocate amounts drawn from
 *       SEED, and the dump goes to DIR/phase-<i>.heap.
 *
 * Either way the truth (live bytes and objects per site function, per dump)
 * is printed as JSON lines on stdout. Sizes go through nallocx(), so that
 * the truth is in jemalloc's usable sizes, which is what the dump counts.
 * Build: gcc -O1 -g -fno-omit-frame-pointer -fno-inline fleet.c -ljemalloc
 */
#include <jemalloc/jemalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SITE_A, SITE_B, SITE_SMALL, SITE_MID, SITE_LARGE, SITE_MIXED, NSITES };

static const char *names[NSITES] = {"site_a", "site_b", "site_small", "site_mid", "site_large", "site_mixed"};
static uint64_t live_bytes[NSITES], live_objects[NSITES];

static void **kept;
static size_t nkept, capkept;

static void keep(void *p)
{
	if (nkept == capkept) {
		capkept = capkept ? 2 * capkept : 1 << 16;
		kept = realloc(kept, capkept * sizeof(void *));
		if (kept == NULL) {
			perror("realloc");
			exit(1);
		}
	}
	kept[nkept++] = p;
}

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
		memset(p_, 1, (z) < 64 ? (z) : 64); \
		keep(p_); \
		live_bytes[s] += usize_; \
		live_objects[s]++; \
	} \
} while (0)

/* One function per site, never inlined: each is its own stack leaf. */
__attribute__((noinline)) void site_a(size_t n, size_t z) { alloc_n(SITE_A, n, z); }
__attribute__((noinline)) void site_b(size_t n, size_t z) { alloc_n(SITE_B, n, z); }
__attribute__((noinline)) void site_small(size_t n, size_t z) { alloc_n(SITE_SMALL, n, z); }
__attribute__((noinline)) void site_mid(size_t n, size_t z) { alloc_n(SITE_MID, n, z); }
__attribute__((noinline)) void site_large(size_t n, size_t z) { alloc_n(SITE_LARGE, n, z); }
__attribute__((noinline)) void site_mixed(size_t n, size_t z) { alloc_n(SITE_MIXED, n, z); }

static void dump(const char *path)
{
	if (mallctl("prof.dump", NULL, NULL, &path, sizeof(path)) != 0) {
		fprintf(stderr, "prof.dump %s failed\n", path);
		exit(1);
	}
}

static void print_truth(const char *path, size_t lg)
{
	printf("{\"dump\":\"%s\",\"lg\":%zu,\"sites\":{", path, lg);
	for (int s = 0; s < NSITES; s++) {
		printf("%s\"%s\":{\"live_bytes\":%llu,\"live_objects\":%llu}", s ? "," : "", names[s],
		       (unsigned long long)live_bytes[s], (unsigned long long)live_objects[s]);
	}
	printf("}}\n");
	fflush(stdout);
}

static void free_all(void)
{
	for (size_t i = 0; i < nkept; i++)
		free(kept[i]);
	nkept = 0;
	memset(live_bytes, 0, sizeof(live_bytes));
	memset(live_objects, 0, sizeof(live_objects));
}

static uint64_t rng;

static uint64_t next(uint64_t lo, uint64_t hi)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return lo + rng % (hi - lo + 1);
}

int main(int argc, char **argv)
{
	/* The list of live pointers is allocated up front: it is live memory
	 * of its own, at a site of its own, that the truth does not count. */
	capkept = 1 << 21;
	kept = malloc(capkept * sizeof(void *));
	if (argc == 3 && strcmp(argv[1], "example") == 0) {
		site_a(1000000, 8);
		site_b(1, 8 << 20);
		dump(argv[2]);
		size_t lg = 0, sz = sizeof(lg);
		mallctl("prof.lg_sample", &lg, &sz, NULL, 0);
		print_truth(argv[2], lg);
		return 0;
	}
	if (argc >= 6 && strcmp(argv[1], "phases") == 0) {
		int n = atoi(argv[3]);
		rng = strtoull(argv[4], NULL, 10) * 2654435761u + 1;
		char path[4096];
		for (int i = 0; i < n; i++) {
			free_all();
			size_t lg = strtoul(argv[5 + i % (argc - 5)], NULL, 10);
			if (mallctl("prof.reset", NULL, NULL, &lg, sizeof(lg)) != 0) {
				fprintf(stderr, "prof.reset failed\n");
				return 1;
			}
			site_small(next(20000, 120000), 32);
			site_mid(next(200, 1500), 4096);
			site_large(next(1, 5), 1 << 20);
			for (uint64_t k = next(2000, 8000); k > 0; k--)
				site_mixed(1, k % 3 ? 64 : 2048);
			snprintf(path, sizeof(path), "%s/phase-%d.heap", argv[2], i);
			dump(path);
			print_truth(path, lg);
		}
		return 0;
	}
	fprintf(stderr, "usage: fleet example DUMP | fleet phases DIR N SEED LG...\n");
	return 2;
}
