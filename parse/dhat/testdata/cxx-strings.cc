#include <vector>
#include <string>
#include <memory>
std::vector<std::unique_ptr<std::string>> keep;
__attribute__((noinline)) void make_strings(int n) { for (int i = 0; i < n; i++) keep.push_back(std::make_unique<std::string>(100, 'x')); }
int main() { make_strings(300); return 0; }
