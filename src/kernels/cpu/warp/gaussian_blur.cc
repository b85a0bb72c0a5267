#include "kernels/cpu/warp/gaussian_blur.h"

#include <cmath>

namespace stoker {
namespace kernels {

int gaussian_window_size(double sigma) { return 2 * static_cast<int>(std::ceil(sigma * 3)) + 1; }

double gaussian_sigma_for_window(int size) {
  int radius = (size - 1) / 2;
  return (radius - 1) * 0.3 + 0.8;
}

std::vector<float> gaussian_window(int size, double sigma) {
  const int r = (size - 1) / 2;
  std::vector<double> w(size);
  double sum = 0;
  for (int x = -r; x <= r; ++x) sum += w[x + r] = std::exp(-(x * x) / (2 * sigma * sigma));
  std::vector<float> out(size);
  for (int k = 0; k < size; ++k) out[k] = static_cast<float>(w[k] / sum);
  return out;
}

}  // namespace kernels
}  // namespace stoker
