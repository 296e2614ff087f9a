// expect: coalesce::pitched_volume<T, device_space> has no operator\(\): capture v.view\(\) in the device lambda
#include <coalesce/algorithm.hpp>
#include <coalesce/pitched_volume.hpp>

#include <cstddef>

// The lambda captures the volume (a copy of the owner), not its view: the rows are not in it.
void misuse(const coalesce::pitched_volume<float>& in, coalesce::pitched_volume<float>& out) {
  const auto doubled = out.view();
  coalesce::for_each_index(doubled, [=] __device__(std::size_t z, std::size_t y, std::size_t x) {
    doubled(z, y, x) = 2 * in(z, y, x);
  });
}
