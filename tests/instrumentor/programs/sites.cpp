// The C++ program of tests/instrumentor: templates, methods, lambdas, exceptions (calls that are invokes),
// temporaries in conditions and condition variables, each run a known number of times (sites_cpp.expected).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace shapes {
template <typename T>
T larger(T a, T b) {
  return a < b ? b : a;
}
struct Box {
  int width = 0;
  int area(int height) const {
    if (width <= 0 || height <= 0) throw std::invalid_argument("empty box");
    return width * height;
  }
};
}  // namespace shapes

static int* lookup(std::vector<int>& v, size_t i) { return i < v.size() ? &v[i] : nullptr; }

int main() {
  std::vector<int> values{4, -1, 7};
  int sum = 0;
  for (int v : values) sum += shapes::larger(v, 0);
  shapes::Box box;
  for (int w = 0; w < 3; ++w) {
    box.width = w;
    try {
      sum += box.area(2);
    } catch (const std::invalid_argument&) {
      sum -= 1;
    }
  }
  auto is_odd = [](int x) { return x % 2 != 0; };
  if (std::string("abc") + "d" == "abcd" && is_odd(sum)) sum += 100;
  if (int* p = lookup(values, 1)) sum += *p;
  while (int* q = lookup(values, 5)) sum += *q;
  std::printf("%d\n", sum);
  return 0;
}
