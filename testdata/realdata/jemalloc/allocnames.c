/*
 * allocnames.c: a program whose own allocating functions are named like an
 * allocator's internals (prof_, arena_, malloc_, tc_, je_), for heapest's
 * e2e test of where the allocator's frames end (e2e/allocnames_test.go).
 * Built against jemalloc as a shared library and linked statically (whose
 * internals, prof_backtrace_impl and je_malloc_default, are then the
 * program's own symbols), and run with every allocation sampled
 * (lg_prof_sample:0), each function keeps a known number of 4 KiB blocks:
 * each is its own row, and no allocator frame is one.
 *
 * The dump is written with mallctl("prof.dump") to argv[1].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jemalloc/jemalloc.h>

#define BLOCK 4096
static void *keep[4096];
static int nkeep;

static void hold(void *p) {
	memset(p, 1, BLOCK);
	keep[nkeep++] = p;
}

/* Each calls the allocator directly: its frame is the dump's first past
 * jemalloc's. noinline and no sibling calls keep every frame. */
__attribute__((noinline)) void prof_record_event(int k) {
	for (int i = 0; i < k; i++)
		hold(malloc(BLOCK));
}

__attribute__((noinline)) void arena_grow(int k) {
	for (int i = 0; i < k; i++)
		hold(calloc(1, BLOCK));
}

__attribute__((noinline)) void malloc_buffer(int k) {
	for (int i = 0; i < k; i++)
		hold(realloc(NULL, BLOCK));
}

__attribute__((noinline)) void tc_like_user(int k) {
	for (int i = 0; i < k; i++) {
		void *p;
		if (posix_memalign(&p, 64, BLOCK) != 0)
			abort();
		hold(p);
	}
}

__attribute__((noinline)) void plain_site(int k) {
	for (int i = 0; i < k; i++)
		hold(malloc(BLOCK));
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: allocnames DUMP\n");
		return 2;
	}
	prof_record_event(400);
	arena_grow(300);
	malloc_buffer(200);
	tc_like_user(100);
	plain_site(50);
	const char *path = argv[1];
	if (mallctl("prof.dump", NULL, NULL, (void *)&path, sizeof(path)) != 0) {
		fprintf(stderr, "prof.dump failed (is MALLOC_CONF=prof:true set?)\n");
		return 1;
	}
	return 0;
}
