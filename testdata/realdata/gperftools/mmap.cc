// A program profiled by gperftools' heap profiler with HEAP_PROFILE_MMAP:
// its allocations, of sizes it knows, and one mmap of its own. tcmalloc's
// own sbrk and mmap calls, which get the memory its allocations are served
// from, are recorded too (e2e/gperftools_mmap_test.go).
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <vector>

__attribute__((noinline)) void* big(size_t n) {
  void* p = malloc(n);
  memset(p, 1, 64);
  return p;
}
__attribute__((noinline)) void* small(size_t n) { return new char[n]; }

int main() {
  static std::vector<void*> keep;
  keep.reserve(202000);
  for (int i = 0; i < 200000; i++) free(malloc(64));  // warm-up
  for (int i = 0; i < 2000; i++) keep.push_back(big(100000));       // 200,000,000 B
  for (int i = 0; i < 200000; i++) keep.push_back(small(100));      // 20,000,000 B
  void* m = mmap(nullptr, 64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);  // 67,108,864 B
  memset(m, 1, 4096);
  return 0;
}
