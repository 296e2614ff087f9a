// device.fallbacks (see exact.cu): structs too large for the fast paths convert by a path that
// works (large_for_each.cu: for_each on them). Two files, which nvcc compiles in parallel.
#include "fallbacks_common.hpp"

namespace large {
// 4096 bytes: a conversion chunk of 6 (24 KiB of shared memory); 2001 bytes of odd size: no chunk
// fits, so it converts element by element.
struct Page {
  cuda::std::array<float, 1023> values;
  float sum;
};
COALESCE_FIELDS(Page, values, sum);
struct Odd {
  cuda::std::array<unsigned char, 2000> bytes;
  unsigned char tag;
};
COALESCE_FIELDS(Odd, bytes, tag);
template <class T>
std::vector<T> numbered(std::size_t n) {
  std::vector<T> out(n);
  unsigned char* bytes = reinterpret_cast<unsigned char*>(out.data());
  for (std::size_t b = 0; b < n * sizeof(T); ++b) bytes[b] = static_cast<unsigned char>((b * 2654435761u) >> 13);
  return out;
}

template <class T>
bool round_trip_exact(std::size_t n) {
  const auto structs = numbered<T>(n);
  ct::device_buffer<T> aos(structs);
  coalesce::soa_vector<T> soa(n);
  coalesce::copy_aos_to_soa(static_cast<const T*>(aos.data()), soa.view());
  const auto same_bytes = [&](const std::vector<T>& got) {
    return got.size() == n && std::memcmp(got.data(), structs.data(), n * sizeof(T)) == 0;
  };
  if (!same_bytes(soa.to_vector())) return false;
  aos.poison();
  coalesce::copy_soa_to_aos(soa.const_view(), aos.data());
  return same_bytes(aos.download());
}

}  // namespace large

TEST_CASE("structs too large for the fast paths convert by a path that works: 4096- and 2001-byte structs") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  static_assert(sizeof(large::Page) == 4096 && coalesce::detail::convert_chunk<large::Page> == 6);
  static_assert(sizeof(large::Odd) == 2001 && coalesce::detail::convert_chunk<large::Odd> == 0);
  CHECK(large::round_trip_exact<large::Page>(1000));
  CHECK(large::round_trip_exact<large::Odd>(777));
  ct::check_sync("large structs, conversion");
}
