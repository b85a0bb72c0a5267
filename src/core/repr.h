// How numbers appear in error messages: num() is the short "%g" form of a value the user gave;
// float_repr() the shortest decimal that reads back as the same float32 (what a float argument
// holds); numbers_repr() / floats_repr() whole lists, as "[a, b, c]".
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace stoker {

inline std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%g", v);
  return b;
}

inline std::string float_repr(float v) {
  char b[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(b, sizeof(b), "%.*g", digits, static_cast<double>(v));
    if (std::strtof(b, nullptr) == v) break;
  }
  return b;
}

// Every value exactly (17 significant digits).
inline std::string numbers_repr(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.17g", v[k]);
    s += (k ? ", " : "") + std::string(b);
  }
  return s + "]";
}

inline std::string floats_repr(const std::vector<float>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + float_repr(v[k]);
  return s + "]";
}

}  // namespace stoker
