#include <stdlib.h>
#include <string.h>
static void *keep[100000];
static int nk;
__attribute__((noinline)) void site_a(int n) { for (int i = 0; i < n; i++) keep[nk++] = malloc(48); }
__attribute__((noinline)) void site_b(int n) { for (int i = 0; i < n; i++) { void *p = malloc(4000); memset(p, 1, 8); free(p); } }
__attribute__((noinline)) void site_c(int n) { for (int i = 0; i < n; i++) keep[nk++] = calloc(1, 1000 + i); }
int main(void) { site_a(1000); site_b(500); site_c(200); return 0; }
