// An experiment, built on demand (target coalesce_experiment_bin_passes, outside ALL): where
// coalesce::bin's time goes, for 32 M keys sorted into 2048 x 2048 bins. It times the whole call,
// each of its two kernels launched alone with scratch allocated once, the pair, and a copy of the
// keys; every result is checked against the whole call's offsets.
#include <coalesce/particles.hpp>
#include <coalesce/soa.hpp>

#include "median_time.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

struct keyed {
  std::uint32_t cell;
  float mass;
};
COALESCE_FIELDS(keyed, cell, mass);

using experiments::median_ms;

namespace {

struct cell_key {
  template <class P>
  __host__ __device__ std::uint32_t operator()(const P& p) const {
    return p.cell;
  }
};

}  // namespace

int main() {
  namespace d = coalesce::detail;
  const std::size_t n = std::size_t(32) << 20;
  const std::uint32_t cells = 2048u * 2048u;
  std::mt19937 gen(5);
  std::uniform_int_distribution<std::uint32_t> key(0, cells - 1);
  std::vector<keyed> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = {key(gen), float(i)};
  std::sort(host.begin(), host.end(), [](const keyed& a, const keyed& b) { return a.cell < b.cell; });
  const coalesce::soa_vector<keyed> particles(host);
  const auto view = particles.const_view();
  std::uint32_t *offsets = nullptr, *check = nullptr, *copy = nullptr, *flags = nullptr, *partials = nullptr;
  cudaMalloc(&offsets, (cells + 1) * 4);
  cudaMalloc(&check, (cells + 1) * 4);
  cudaMalloc(&copy, n * 4);
  using K = std::uint32_t;
  const d::bin_grids grids = d::bin_grids_for<K, keyed, cell_key, std::uint32_t>(n);
  cudaMalloc(&flags, grids.sorted * 4);
  cudaMalloc(&partials, grids.unsorted * 4);
  std::printf("grids: sorted %u blocks, unsorted %u blocks (%d SMs)\n", grids.sorted, grids.unsorted,
              d::multiprocessor_count(d::current_device()));

  const auto whole = [&] {
    coalesce::bin(view, cell_key{}, cells, cuda::std::span<std::uint32_t>(offsets, cells + 1));
  };
  const auto sorted_only = [&] {
    d::sorted_bins_kernel<K, keyed, cell_key, std::uint32_t>
        <<<grids.sorted, d::bin_threads>>>(view, cell_key{}, cells, check, flags);
  };
  const auto pair = [&] { d::launch_bins<K>(view, cell_key{}, cells, check, grids, flags, partials, nullptr); };
  const auto unsorted_only = [&] {
    coalesce::soa_view<const keyed> v = view;
    cell_key k{};
    std::size_t b = cells;
    std::uint32_t* o = check;
    const std::uint32_t* f = flags;
    unsigned flag_count = grids.sorted;
    std::uint32_t* p = partials;
    void* arguments[] = {&v, &k, &b, &o, &f, &flag_count, &p};
    cudaLaunchCooperativeKernel(d::unsorted_bins_kernel<K, keyed, cell_key, std::uint32_t>, dim3(grids.unsorted),
                                dim3(d::bin_threads), arguments, 0, nullptr);
  };
  const auto copy_keys = [&] { cudaMemcpyAsync(copy, view.column<&keyed::cell>(), n * 4, cudaMemcpyDeviceToDevice); };

  whole();
  std::vector<std::uint32_t> a(cells + 1), b(cells + 1);
  cudaMemcpy(a.data(), offsets, a.size() * 4, cudaMemcpyDeviceToHost);
  const double whole_ms = median_ms(whole);
  cudaMemset(check, 0, (cells + 1) * 4);
  const double sorted_ms = median_ms(sorted_only);
  cudaMemcpy(b.data(), check, b.size() * 4, cudaMemcpyDeviceToHost);
  const bool sorted_same = a == b;
  const double unsorted_ms = median_ms(unsorted_only);
  cudaMemset(check, 0, (cells + 1) * 4);
  const double pair_ms = median_ms(pair);
  cudaMemcpy(b.data(), check, b.size() * 4, cudaMemcpyDeviceToHost);
  const bool pair_same = a == b;
  const double copy_ms = median_ms(copy_keys);
  std::printf("coalesce::bin             %.4f ms  (%.3f x the copy)\n", whole_ms, copy_ms / whole_ms);
  std::printf("sorted kernel alone       %.4f ms  (%.3f x the copy) offsets %s\n", sorted_ms, copy_ms / sorted_ms,
              sorted_same ? "same" : "DIFFER");
  std::printf("unsorted kernel alone     %.4f ms\n", unsorted_ms);
  std::printf("both kernels, no pool     %.4f ms  (%.3f x the copy) offsets %s\n", pair_ms, copy_ms / pair_ms,
              pair_same ? "same" : "DIFFER");
  std::printf("cudaMemcpy of the keys    %.4f ms\n", copy_ms);
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("status: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess && sorted_same && pair_same ? 0 : 1;
}
