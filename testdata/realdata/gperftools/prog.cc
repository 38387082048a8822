// prog.cc: a C++ program with a known heap, for heapest's real-data tests
// of gperftools heap samples. Linked with -ltcmalloc and run with
// TCMALLOC_SAMPLE_PARAMETER=<period>, it allocates from several call sites
// with sizes that are exact tcmalloc size classes (tcmalloc samples on the
// class size but records the requested size; the two then agree), keeps a
// known part live, writes MallocExtension::GetHeapSample() to a file and
// prints the true live totals per call site as JSON on stdout.
//
// Usage: prog OUT [warmup_mb [seed [thread]]]
//   warmup_mb  bytes (in MiB) allocated and freed first; 64 by default.
//              gperftools < 2.16 does not sample the main thread's first
//              16 MiB (docs/gperftools.md); 0 shows that.
//   thread     1 runs the workload in a new thread instead of main's.
#include <gperftools/malloc_extension.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern "C" {
// Each call site is its own non-inlined function so that it appears by
// name in the symbolized stacks.
__attribute__((noinline)) void* alloc_small(size_t n) { return malloc(n); }
__attribute__((noinline)) void* alloc_medium(size_t n) { return malloc(n); }
__attribute__((noinline)) void* alloc_large(size_t n) { return malloc(n); }
__attribute__((noinline)) void* alloc_huge(size_t n) { return malloc(n); }
__attribute__((noinline)) void* alloc_mixed(size_t n) { return malloc(n); }
__attribute__((noinline)) void* alloc_freed(size_t n) { return malloc(n); }
__attribute__((noinline)) void* warm_up(size_t n) { return malloc(n); }
}

namespace {

struct Site {
  const char* name;
  void* (*fn)(size_t);
  std::vector<size_t> sizes;
  size_t bytes;      // bytes allocated per size
  int keep_every;    // keep one in keep_every live (0: free all)
  long live_objects = 0, live_bytes = 0, alloc_objects = 0, alloc_bytes = 0;
  long counter = 0;
};

std::vector<Site> sites = {
    {"alloc_small", alloc_small, {64}, 24u << 20, 3},
    {"alloc_medium", alloc_medium, {1024}, 24u << 20, 2},
    {"alloc_large", alloc_large, {32768}, 32u << 20, 4},
    {"alloc_huge", alloc_huge, {1u << 20}, 64u << 20, 2},
    {"alloc_mixed", alloc_mixed, {128, 4096}, 16u << 20, 2},
    {"alloc_freed", alloc_freed, {512}, 8u << 20, 0},
};

std::vector<void*> live;

// A small deterministic generator: the interleaving order must not depend
// on the C library's rand state.
unsigned long long rng_state;
unsigned next_rand(unsigned n) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)((rng_state >> 33) % n);
}

void warm(long mb) {
  // Allocate and free mb MiB in 64 KiB blocks.
  for (long i = 0; i < mb * 16; i++) {
    void* p = warm_up(64 << 10);
    memset(p, 1, 16);
    free(p);
  }
}

void workload(long warmup_mb) {
  warm(warmup_mb);
  struct Job { size_t site, size; long left; };
  std::vector<Job> jobs;
  for (size_t i = 0; i < sites.size(); i++)
    for (size_t z : sites[i].sizes) jobs.push_back({i, z, (long)(sites[i].bytes / z)});
  while (!jobs.empty()) {
    size_t k = next_rand(jobs.size());
    Job& j = jobs[k];
    Site& s = sites[j.site];
    for (int b = 0; b < 64 && j.left > 0; b++, j.left--) {
      void* p = s.fn(j.size);
      memset(p, 1, 16);
      s.alloc_objects++;
      s.alloc_bytes += j.size;
      if (s.keep_every > 0 && ++s.counter % s.keep_every == 0) {
        live.push_back(p);
        s.live_objects++;
        s.live_bytes += j.size;
      } else {
        free(p);
      }
    }
    if (j.left == 0) jobs.erase(jobs.begin() + k);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OUT [warmup_mb [seed [thread]]]\n", argv[0]);
    return 2;
  }
  long warmup_mb = argc > 2 ? atol(argv[2]) : 64;
  rng_state = argc > 3 ? strtoull(argv[3], nullptr, 10) : 1;
  bool thread = argc > 4 && atoi(argv[4]) == 1;
  if (thread) {
    std::thread t(workload, warmup_mb);
    t.join();
  } else {
    workload(warmup_mb);
  }
  std::string sample;
  MallocExtension::instance()->GetHeapSample(&sample);
  FILE* f = fopen(argv[1], "w");
  if (!f || fwrite(sample.data(), 1, sample.size(), f) != sample.size() || fclose(f) != 0) {
    perror(argv[1]);
    return 1;
  }
  printf("{\"sites\":[");
  for (size_t i = 0; i < sites.size(); i++) {
    const Site& s = sites[i];
    printf("%s{\"func\":\"%s\",\"live_objects\":%ld,\"live_bytes\":%ld,\"alloc_objects\":%ld,\"alloc_bytes\":%ld}",
           i ? "," : "", s.name, s.live_objects, s.live_bytes, s.alloc_objects, s.alloc_bytes);
  }
  printf("]}\n");
  for (void* p : live) free(p);
  return 0;
}
