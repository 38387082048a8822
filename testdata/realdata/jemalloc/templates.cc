// templates.cc: C++ whose allocating code is all inlined from the standard
// library's headers, built with -O2 -DNINST=4, for heapest's e2e test of
// source lines through inlined calls (e2e/jemalloc_inline_test.go). Each
// work<N> (not inlined) fills standard containers: every allocation is
// made in code inlined from the headers, called from a line of work<N> in
// this file. GCC leaves some inlined calls the optimizer emptied with
// empty address ranges that start where other inlined code does: a frame
// of work<N> by line must still be at its own line here, not in a header.
// The dump is written at exit (MALLOC_CONF=...,prof_final:true).
#include <vector>
#include <map>
#include <unordered_map>
#include <string>
#include <set>
#include <deque>
#include <list>
#include <memory>
#include <sstream>
#include <regex>
#include <functional>
#include <cstdio>
template <int N> struct Tag { long v[N % 7 + 1]; bool operator<(const Tag &o) const { return v[0] < o.v[0]; } };
namespace std { template <int N> struct hash<Tag<N>> { size_t operator()(const Tag<N> &t) const { return t.v[0]; } }; }
template <int N> bool operator==(const Tag<N> &a, const Tag<N> &b) { return a.v[0] == b.v[0]; }
std::vector<void*> sink;
template <int N> __attribute__((noinline)) void work(int n) {
  auto *m = new std::map<std::string, std::vector<Tag<N>>>;
  auto *u = new std::unordered_map<Tag<N>, std::string>;
  auto *s = new std::set<Tag<N>>;
  auto *d = new std::deque<Tag<N>>;
  auto *l = new std::list<std::shared_ptr<Tag<N>>>;
  for (int i = 0; i < n; i++) {
    Tag<N> t{}; t.v[0] = i;
    (*m)[std::to_string(i % 13)].push_back(t);
    (*u)[t] = std::string(20 + N, 'a');
    s->insert(t); d->push_back(t); l->push_back(std::make_shared<Tag<N>>(t));
  }
  std::ostringstream os; os << n << N; 
  std::regex re("a+" + std::to_string(N)); std::smatch mm; std::string str = os.str(); std::regex_search(str, mm, re);
  sink.push_back(m); sink.push_back(u); sink.push_back(s); sink.push_back(d); sink.push_back(l);
}
template <int N> struct Unroll { static void run() { work<N>(50 + N); Unroll<N - 1>::run(); } };
template <> struct Unroll<0> { static void run() {} };
int main() { Unroll<NINST>::run(); printf("%zu\n", sink.size()); }
