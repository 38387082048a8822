/*
 * hidden.c: rows that hide sizes from the sampler, on real jemalloc, with a
 * known truth (issue 10; e2e/hidden_test.go).
 *
 * Usage: hidden SCENARIO ROWS DUMP_PATH
 *
 * Every row is one call stack: site() reached through nest() recursing
 * 3 + i times for row i, so that `heapest report --by stack` gives one row
 * per i (the number of nest frames) and the dump's stacks tell the rows
 * apart by how often nest's own return address repeats. R is
 * 2^opt.lg_prof_sample, read back with mallctl("prof.lg_sample").
 *
 * Scenarios (what each row allocates and keeps live):
 *   hidden-0.1R, hidden-0.5R, hidden-1R, hidden-2R
 *       3 allocations of 8 R (4 MiB at R = 512 KiB), sampled almost surely,
 *       plus 64 B allocations worth f R bytes that sampling often misses
 *       whole: the row looks like one size while it holds two.
 *   size-class
 *       rows in turn of 6 x 2R + 2 x 8R (average 3.5 R: a size class at
 *       R = 512 KiB, 1.75 MiB), 2R + 4R (average 1.5 MiB, a size class),
 *       and 32 B + 64 B allocations expecting 2 samples each (average 48 B,
 *       a size class).
 *
 * Sizes are usable sizes (nallocx), which is what jemalloc samples and
 * counts. On stdout, one JSON line:
 *   {"rate":R,"rows":[{"depth":d,"sizes":[{"usize":z,"count":n},...]},...]}
 * Build: gcc -O1 -g -fno-omit-frame-pointer -fno-inline hidden.c -ljemalloc -lm
 */
#include <jemalloc/jemalloc.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXSIZES 2

struct part {
	size_t size;
	uint64_t count;
};

struct row {
	int depth;
	int nparts;
	struct part parts[MAXSIZES];
};

static uint64_t rate;

/* Live pointers, so that nothing is freed before the dump. main sizes the
 * array before any row allocates: growing it from site() would add a stack
 * of its own at a row's depth. */
static void **keep;
static size_t nkeep;

static void keep_push(void *p)
{
	if (p == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	keep[nkeep++] = p;
}

/* site is every row's leaf: it makes the row's allocations, interleaving
 * its sizes so that no size always meets the sampler first. */
__attribute__((noinline)) void site(const struct row *r)
{
	uint64_t left[MAXSIZES];
	for (int k = 0; k < r->nparts; k++) {
		left[k] = r->parts[k].count;
	}
	for (int more = 1; more;) {
		more = 0;
		for (int k = 0; k < r->nparts; k++) {
			for (int b = 0; b < 64 && left[k] > 0; b++, left[k]--) {
				keep_push(malloc(r->parts[k].size));
			}
			more |= left[k] > 0;
		}
	}
}

/* nest recurses depth times before the allocations; the work after the
 * call keeps the compiler from turning it into a jump. */
__attribute__((noinline)) int nest(int depth, const struct row *r)
{
	if (depth <= 1) {
		site(r);
		return 1;
	}
	return nest(depth - 1, r) + 1;
}

/* expecting returns the number of allocations of usize z that expect s
 * samples: s / (1 - exp(-z/R)). */
static uint64_t expecting(double s, size_t z)
{
	double pi = -expm1(-(double)z / (double)rate);
	return (uint64_t)llround(s / pi);
}

static void set(struct row *r, int k, size_t size, uint64_t count)
{
	r->parts[k].size = size;
	r->parts[k].count = count;
	if (k + 1 > r->nparts) {
		r->nparts = k + 1;
	}
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s SCENARIO ROWS DUMP_PATH\n", argv[0]);
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

	int nrows = atoi(argv[2]);
	if (nrows < 1 || nrows > 100) {
		fprintf(stderr, "ROWS %s: want 1 to 100\n", argv[2]);
		return 2;
	}
	struct row *rows = calloc((size_t)nrows, sizeof(struct row));
	const char *sc = argv[1];
	double f = 0;
	if (strcmp(sc, "hidden-0.1R") == 0) {
		f = 0.1;
	} else if (strcmp(sc, "hidden-0.5R") == 0) {
		f = 0.5;
	} else if (strcmp(sc, "hidden-1R") == 0) {
		f = 1;
	} else if (strcmp(sc, "hidden-2R") == 0) {
		f = 2;
	} else if (strcmp(sc, "size-class") != 0) {
		fprintf(stderr, "unknown scenario %s\n", sc);
		return 2;
	}
	for (int i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		r->depth = 3 + i;
		if (f > 0) {
			set(r, 0, nallocx(64, 0), (uint64_t)llround(f * (double)rate / 64));
			set(r, 1, nallocx(8 * rate, 0), 3);
			continue;
		}
		switch (i % 3) {
		case 0:
			set(r, 0, nallocx(2 * rate, 0), 6);
			set(r, 1, nallocx(8 * rate, 0), 2);
			break;
		case 1:
			set(r, 0, nallocx(2 * rate, 0), 1);
			set(r, 1, nallocx(4 * rate, 0), 1);
			break;
		default:
			set(r, 0, nallocx(32, 0), expecting(2, nallocx(32, 0)));
			set(r, 1, nallocx(64, 0), expecting(2, nallocx(64, 0)));
		}
	}
	size_t total = 0;
	for (int i = 0; i < nrows; i++) {
		for (int k = 0; k < rows[i].nparts; k++) {
			total += rows[i].parts[k].count;
		}
	}
	keep = malloc(total * sizeof(void *));
	if (keep == NULL) {
		perror("malloc");
		return 1;
	}
	for (int i = 0; i < nrows; i++) {
		nest(rows[i].depth, &rows[i]);
	}

	const char *path = argv[3];
	if (mallctl("prof.dump", NULL, NULL, (void *)&path, sizeof(path)) != 0) {
		fprintf(stderr, "mallctl prof.dump %s failed\n", path);
		return 1;
	}
	printf("{\"rate\":%llu,\"rows\":[", (unsigned long long)rate);
	for (int i = 0; i < nrows; i++) {
		printf("%s{\"depth\":%d,\"sizes\":[", i ? "," : "", rows[i].depth);
		for (int k = 0; k < rows[i].nparts; k++) {
			printf("%s{\"usize\":%zu,\"count\":%llu}", k ? "," : "", rows[i].parts[k].size,
			       (unsigned long long)rows[i].parts[k].count);
		}
		printf("]}");
	}
	printf("]}\n");
	return 0;
}
