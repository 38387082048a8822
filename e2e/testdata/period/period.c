/*
 * period.c: a jemalloc-linked program for heapest's small-period test
 * (e2e/jemalloc_period_test.go). It keeps two sites' allocations live and
 * writes one heap dump:
 *
 *   site_small  65,536 objects of 32 bytes: one size class, so a
 *               prof_unbias line jemalloc writes is inverted exactly;
 *   site_mixed  65,536 objects of 8 and 16 bytes in turn, every 256th
 *               one of 4096 bytes instead: a line of mixed sizes, read
 *               from jemalloc's own (rounded) sums.
 *
 * Usage: period DUMP SEED. SEED picks a number of short-lived allocations
 * first, freed at once, so that runs start the sampler at different
 * points. Run with MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:N.
 * The truth (live bytes and objects per site, in jemalloc's usable sizes)
 * is printed as one JSON line after the dump.
 * Build: gcc -O1 -g -fno-omit-frame-pointer -fno-inline period.c -ljemalloc
 */
#include <jemalloc/jemalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXKEPT (1 << 18)
static void *kept[MAXKEPT];
static size_t nkept;
static double bytes[2], objects[2];

/*
 * keep allocates z bytes for site s and keeps them live. It is a macro,
 * expanded in each site, so that the site is the leaf of its stacks (an
 * inlined function is a frame of its own where DWARF names it).
 */
#define keep(s, z) do { \
	size_t z_ = (z); \
	void *p_ = malloc(z_); \
	if (p_ == NULL || nkept == MAXKEPT) { \
		fprintf(stderr, "malloc failed or too many objects\n"); \
		exit(1); \
	} \
	memset(p_, 1, 8); \
	kept[nkept++] = p_; \
	bytes[s] += (double)nallocx(z_, 0); \
	objects[s]++; \
} while (0)

/* Each site is its own function, never inlined: its own stack leaf. */
__attribute__((noinline)) void site_small(void)
{
	for (int i = 0; i < 65536; i++)
		keep(0, 32);
}

__attribute__((noinline)) void site_mixed(void)
{
	for (int i = 0; i < 65536; i++)
		keep(1, i % 256 == 255 ? 4096 : (i & 1) ? 16 : 8);
}

/* churn allocates and frees SEED-chosen sizes: it moves the sampler. */
__attribute__((noinline)) void churn(uint64_t seed)
{
	static void *t[1000];
	uint64_t x = seed * 2654435761u + 1;
	size_t n = 1 + x % 1000;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if ((t[i] = malloc(16 + x % 4000)) == NULL)
			exit(1);
	}
	for (size_t i = 0; i < n; i++)
		free(t[i]);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s DUMP SEED\n", argv[0]);
		return 2;
	}
	const char *path = argv[1];
	churn(strtoull(argv[2], NULL, 10));
	site_small();
	site_mixed();
	if (mallctl("prof.dump", NULL, NULL, &path, sizeof(path)) != 0) {
		fprintf(stderr, "prof.dump failed (run with MALLOC_CONF=prof:true)\n");
		return 1;
	}
	printf("{\"sites\":{\"site_small\":{\"live_bytes\":%.0f,\"live_objects\":%.0f},"
	       "\"site_mixed\":{\"live_bytes\":%.0f,\"live_objects\":%.0f}}}\n",
	       bytes[0], objects[0], bytes[1], objects[1]);
	for (size_t i = 0; i < nkept; i++)
		free(kept[i]);
	return 0;
}
