/*
 * inlined.c: a program whose allocations are made in functions the
 * compiler inlines (always_inline, built with -O2), for heapest's e2e
 * test of inlined calls against jeprof (e2e/jemalloc_inline_test.go).
 *
 * fill_outer (not inlined) calls fill_inner, inlined into it, which calls
 * grow, inlined into fill_inner: 256 blocks of 64 KiB (16 MiB) are kept
 * live from grow. keep_direct (not inlined) keeps 64 blocks of 64 KiB
 * (4 MiB) with no inlined call. The dump is written with
 * mallctl("prof.dump") to argv[1].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jemalloc/jemalloc.h>

static void *keep[512];
static int nkeep;

static inline __attribute__((always_inline)) void *grow(size_t n) {
	void *p = malloc(n);
	memset(p, 1, n);
	return p;
}

static inline __attribute__((always_inline)) void fill_inner(int k) {
	for (int i = 0; i < k; i++)
		keep[nkeep++] = grow(64 << 10);
}

__attribute__((noinline)) void fill_outer(int k) {
	fill_inner(k);
}

__attribute__((noinline)) void keep_direct(int k) {
	for (int i = 0; i < k; i++) {
		keep[nkeep] = malloc(64 << 10);
		memset(keep[nkeep++], 2, 64 << 10);
	}
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: inlined DUMP\n");
		return 2;
	}
	fill_outer(256);
	keep_direct(64);
	const char *path = argv[1];
	if (mallctl("prof.dump", NULL, NULL, (void *)&path, sizeof(path)) != 0) {
		fprintf(stderr, "mallctl prof.dump %s failed\n", path);
		return 1;
	}
	return 0;
}
