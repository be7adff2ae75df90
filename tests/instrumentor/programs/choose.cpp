// Choosing C++ functions: by qualified name, by wildcard over scopes, by symbol; a lambda goes with the function
// that holds it; a pragma names a method.
#include <cstdio>

namespace ns {
class Codec {
 public:
  explicit Codec(int key) : key_(key > 0 ? key : 1) {}
  ~Codec() {
    if (key_ < 0) std::puts("negative");
  }
  int encode(int v) const { return v > 0 ? v ^ key_ : v; }
  int decode(int v) const;

 private:
  int key_;
};
int Codec::decode(int v) const { return v > 0 ? v ^ key_ : v; }
}  // namespace ns

namespace {
int helper(int x) { return x > 2 ? x : 2; }
}  // namespace

template <class T>
T twice(T x) {
  return x > 0 ? x + x : x;
}

int apply(int n) {
  auto square = [](int v) { return v > 1 ? v * v : v; };
  int s = 0;
  for (int i = 0; i < n; i++) s += square(i);
  return s;
}

#ifdef PRAGMA
#pragma sampler_exclude_function(ns::Codec::encode)
#endif

int main() {
  ns::Codec c(5);
  std::printf("%d %d %d %d %d\n", c.decode(c.encode(9)), helper(1), twice(3), apply(4), twice(2.5) > 0);
}
