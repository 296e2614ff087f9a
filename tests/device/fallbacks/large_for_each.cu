// device.fallbacks (see exact.cu): structs too large for the fast paths take a path that works in
// for_each (large_convert.cu: their conversion).
#include "fallbacks_common.hpp"

namespace large {
// for_each on contiguous runs of them: 600 bytes stage in 150 KiB (more than the 48 KiB a block
// gets without opting in); 1204 bytes would need 301 KiB, more than any device gives a block, so
// they are walked unstaged.
template <std::size_t Floats>
struct Record {
  cuda::std::array<float, Floats> values;
  int id;
};
struct bump {
  template <class R>
  __host__ __device__ void operator()(R& r) const {
    for (auto& v : r.values) v += float(r.id % 7);
    r.id += 1;
  }
};

template <class T>
bool for_each_exact(std::size_t n) {
  std::vector<T> records(n);  // finite values: a NaN's payload need not survive the device's arithmetic
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < records[i].values.size(); ++k)
      records[i].values[k] = float((i * 31 + k) % 1000) * 0.25f;
    records[i].id = int(i);
  }
  ct::device_buffer<T> buffer(records);
  coalesce::for_each(cuda::std::span<T>(buffer.data(), n), bump{});
  const auto got = buffer.download();
  for (std::size_t i = 0; i < n; ++i) {
    T expected = records[i];
    bump{}(expected);
    if (std::memcmp(&got[i], &expected, sizeof(T)) != 0) return false;
  }
  return true;
}
}  // namespace large

TEST_CASE("structs too large for the fast paths take a path that works: for_each on 600- and 1204-byte ones") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  CHECK(large::for_each_exact<large::Record<149>>(3001));  // 600 bytes: staged, opted in
  CHECK(large::for_each_exact<large::Record<300>>(1001));  // 1204 bytes: unstaged
  ct::check_sync("large structs, for_each");
}
