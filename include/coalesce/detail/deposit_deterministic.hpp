// coalesce::detail: deposit's deterministic mode. Atomics add a grid point's contributions in the
// order the hardware happens to take them, so float sums change in their last bits from run to
// run. Here every add is first recorded as (point, value), in particle order and, within a
// particle, in the order f adds; the records are sorted by point with CUB's stable radix sort,
// which keeps that order among equal points; and one thread per point adds its run into the grid
// in that order: grid(point) = ((grid(point) + v1) + v2) + ..., the sums of a serial loop over the
// particles, on every run and every GPU. Users never include this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/grid_atomics.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/detail/pitched_view.hpp>
#include <coalesce/detail/pitched_volume_view.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>
#include <coalesce/scan.hpp>
#include <coalesce/soa.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/span>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace coalesce {

/// The tag of deposit's deterministic mode: deposit(particles, grid, f, coalesce::deterministic).
struct deterministic_t {
  explicit constexpr deterministic_t() = default;
};
/// deposit's deterministic mode: the same sums, bit for bit, on every run (see deposit).
inline constexpr deterministic_t deterministic{};

namespace detail {

// One add, recorded: the linear index of its point in the grid, and its value.
template <class G>
struct add_record {
  std::uint64_t key;
  G value;
};

// The grids' points as linear indices: row-major for a matrix, (z, y, x) for a volume, i for a
// span. record() checks the coordinates under COALESCE_DEBUG, as the atomic accumulators do.
template <class G>
struct matrix_points {
  using value_type = G;
  pitched_view<G, device_space> grid;
  __device__ add_record<G> record(std::size_t r, std::size_t c, G value) const {
    COALESCE_ASSERT(r < grid.rows() && c < grid.cols(), "coalesce::deposit: add(r, c) outside the grid");
    return {std::uint64_t(r) * grid.cols() + c, value};
  }
  __device__ G* element(std::uint64_t key) const {
    return &grid(std::size_t(key / grid.cols()), std::size_t(key % grid.cols()));
  }
};
template <class G>
struct volume_points {
  using value_type = G;
  pitched_volume_view<G, device_space> grid;
  __device__ add_record<G> record(std::size_t z, std::size_t y, std::size_t x, G value) const {
    COALESCE_ASSERT(z < grid.depth() && y < grid.height() && x < grid.width(),
                    "coalesce::deposit: add(z, y, x) outside the grid");
    return {(std::uint64_t(z) * grid.height() + y) * grid.width() + x, value};
  }
  __device__ G* element(std::uint64_t key) const {
    const std::uint64_t plane = std::uint64_t(grid.height()) * grid.width();
    return &grid(std::size_t(key / plane), std::size_t(key % plane / grid.width()), std::size_t(key % grid.width()));
  }
};
template <class G>
struct span_points {
  using value_type = G;
  cuda::std::span<G> grid;
  __device__ add_record<G> record(std::size_t i, G value) const {
    COALESCE_ASSERT(i < grid.size(), "coalesce::deposit: add(i) outside the grid");
    return {std::uint64_t(i), value};
  }
  __device__ G* element(std::uint64_t key) const { return grid.data() + key; }
};

// f's first call: counts the adds.
struct add_counter {
  std::uint32_t* count;
  template <class... Args>
  __device__ void add(Args...) const {
    ++*count;
  }
};

// f's second call: records each add as (the point's linear index, value), from `at` on. `Points`
// maps the add's coordinates to the linear index.
template <class G, class Points>
struct add_recorder {
  Points points;
  std::uint64_t* keys;
  G* values;
  std::size_t* at;
  template <class... Args>
  __device__ void add(Args... args) const {
    const auto added = points.record(args...);
    keys[*at] = added.key;
    values[*at] = added.value;
    ++*at;
  }
};

template <class T, class F>
__global__ void count_adds_kernel(soa_view<const T, device_space> particles, F f, std::uint32_t* counts) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < particles.size();
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint32_t count = 0;
    f(particles[i], add_counter{&count});
    counts[i] = count;
  }
}

template <class T, class G, class Points, class F>
__global__ void record_adds_kernel(soa_view<const T, device_space> particles, F f, Points points,
                                   const std::uint64_t* first, std::uint64_t* keys, G* values) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < particles.size();
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::size_t at = std::size_t(first[i]);
    f(particles[i], add_recorder<G, Points>{points, keys, values, &at});
  }
}

// One thread per record that starts a run of equal points: the run added into its point in order.
template <class G, class Points>
__global__ void add_runs_kernel(Points points, const std::uint64_t* keys, const G* values, std::size_t records) {
  using element = grid_element<G>;
  for (std::size_t e = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; e < records;
       e += std::size_t(gridDim.x) * blockDim.x) {
    if (e > 0 && keys[e - 1] == keys[e]) continue;
    G* const point = points.element(keys[e]);
    typename element::component sum[element::count];
    for (unsigned k = 0; k < element::count; ++k) sum[k] = element::get(*point, k);
    for (std::size_t j = e; j < records && keys[j] == keys[e]; ++j)
      for (unsigned k = 0; k < element::count; ++k) sum[k] += element::get(values[j], k);
    *point = element::make(sum);
  }
}

// The deterministic deposit of `particles` into the grid that `points` maps, on `stream`. Waits
// once, for the number of adds (to size the records).
template <class T, class Points, class F>
void deterministic_deposit(soa_view<T, device_space> particles, const Points& points, std::size_t grid_points,
                           const F& f, cudaStream_t stream) {
  constexpr const char* what = "coalesce::deposit (deterministic)";
  using G = typename Points::value_type;
  using element_type = std::remove_const_t<T>;
  const soa_view<const element_type, device_space> in(particles);
  const std::size_t n = in.size();
  const pool_resource pool(stream);
  constexpr unsigned threads = 256;
  const unsigned blocks = grid_for_all((n + threads - 1) / threads);

  // The adds of every particle, and where its records start: an exclusive sum of n + 1 counts.
  const owned_bytes<pool_resource> counts(pool, (n + 1) * sizeof(std::uint32_t), allocation_alignment);
  const owned_bytes<pool_resource> first(pool, (n + 1) * sizeof(std::uint64_t), allocation_alignment);
  auto* const count = static_cast<std::uint32_t*>(counts.get());
  auto* const start = static_cast<std::uint64_t*>(first.get());
  throw_on_error(::cudaMemsetAsync(count + n, 0, sizeof(std::uint32_t), stream), what);
  count_adds_kernel<element_type><<<blocks, threads, 0, stream>>>(in, f, count);
  throw_if_launch_failed(what);
  with_scan_scratch(
      [&](void* temp, std::size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(temp, bytes, count, start, n + 1, stream);
      },
      stream, "coalesce::deposit (deterministic): cub::DeviceScan::ExclusiveSum");
  std::uint64_t records = 0;
  throw_on_error(::cudaMemcpyAsync(&records, start + n, sizeof records, cudaMemcpyDeviceToHost, stream), what);
  throw_on_error(::cudaStreamSynchronize(stream), what);
  if (records == 0) return;

  // The records, twice over for the sort.
  const owned_bytes<pool_resource> keys(pool, 2 * records * sizeof(std::uint64_t), allocation_alignment);
  const owned_bytes<pool_resource> values(pool, 2 * records * sizeof(G), allocation_alignment);
  auto* const key = static_cast<std::uint64_t*>(keys.get());
  auto* const value = static_cast<G*>(values.get());
  record_adds_kernel<element_type, G><<<blocks, threads, 0, stream>>>(in, f, points, start, key, value);
  throw_if_launch_failed(what);

  cub::DoubleBuffer<std::uint64_t> sorted_keys(key, key + records);
  cub::DoubleBuffer<G> sorted_values(value, value + records);
  int end_bit = 1;
  while (end_bit < 64 && (std::uint64_t(1) << end_bit) < grid_points) ++end_bit;
  std::size_t temp_bytes = 0;
  throw_on_error(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, sorted_keys, sorted_values, std::int64_t(records),
                                                 0, end_bit, stream),
                 "coalesce::deposit (deterministic): cub::DeviceRadixSort::SortPairs (sizing)");
  const owned_bytes<pool_resource> temp(pool, temp_bytes > 0 ? temp_bytes : 1, allocation_alignment);
  throw_on_error(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, sorted_keys, sorted_values,
                                                 std::int64_t(records), 0, end_bit, stream),
                 "coalesce::deposit (deterministic): cub::DeviceRadixSort::SortPairs");
  add_runs_kernel<<<grid_for_all((records + threads - 1) / threads), threads, 0, stream>>>(
      points, sorted_keys.Current(), static_cast<const G*>(sorted_values.Current()), std::size_t(records));
  throw_if_launch_failed(what);
}

}  // namespace detail
}  // namespace coalesce
