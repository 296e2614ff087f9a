// The compaction and reordering groups of the benchmark, on 32 M particles of six float columns:
// removing 10% and 50% of them (coalesce::erase_if against thrust::remove_if on the zip of the
// columns and CUB's DeviceSelect::Flagged per column with the flags computed once), sorting them
// by a 32-bit cell key, random and nearly sorted (coalesce::sort_by_key against CUB's SortPairs of
// (key, index) then a gather per column, or then a gather of records staged by hand, and
// thrust::sort_by_key on the zip), and gathering every column by a random permutation
// (coalesce::gather against hand-written gathers of the columns and of staged records, and
// thrust::gather per column, with a copy of the same bytes written as the target's reference, and
// the gather of records staged before the timing as the floor that the scattered reads set).
// Every candidate's result is checked against a host reference before it is timed.
//
// Removing and sorting change their input, and the timer brackets each launch whole (bench.hpp),
// so every row of those groups first restores its input from a pristine copy with one
// cudaMemcpyAsync per column, the same copy in every row, and counts its bytes: a context row
// times the restore alone, so that the work's own time is the difference. The bytes a row counts
// are the restore's (48 per particle) plus what the work must read and write: every column read
// once and the kept (or all) elements written once; flags, keys, indices and a sort's passes are
// overhead each implementation chooses, and are not counted.
#include <coalesce/compact.hpp>
#include <coalesce/reorder.hpp>
#include <coalesce/soa.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/span>
#include <cuda/std/tuple>
#include <thrust/execution_policy.h>
#include <thrust/gather.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/remove.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include "bench.hpp"
#include "particles.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace bench {
namespace {

using coalesce_test::x_below;

constexpr std::size_t columns = 6;

// The six columns of a soa_vector<Particle>, as raw pointers.
struct particle_columns {
  float* c[columns];
};
particle_columns columns_of(coalesce::soa_view<Particle> v) {
  particle_columns p{};
  for (std::size_t k = 0; k < columns; ++k) p.c[k] = static_cast<float*>(v.columns()[k]);
  return p;
}

// What the rows of a destructive group work on: `pristine`, never written, which every row restores
// its input from; `work`, the competitors' input; `out`, their output; `library`, coalesce's
// vector (which the operation replaces with new storage).
struct destructive_rows {
  coalesce::soa_vector<Particle> pristine, work, out, library;
  particle_columns from, in, to;
  explicit destructive_rows(const std::vector<Particle>& particles)
      : pristine(particles), work(particles.size()), out(particles.size()), library(particles.size()),
        from(columns_of(pristine.view())), in(columns_of(work.view())), to(columns_of(out.view())) {}
};

// Copies every column of `from` into `to` (n elements each), on s.
void restore(const particle_columns& to, const particle_columns& from, std::size_t n, cudaStream_t s) {
  for (std::size_t k = 0; k < columns; ++k)
    coalesce::throw_on_error(cudaMemcpyAsync(to.c[k], from.c[k], n * sizeof(float), cudaMemcpyDeviceToDevice, s),
                             "cudaMemcpyAsync (restoring the input)");
}

auto zip_of(const particle_columns& p) {
  return thrust::make_zip_iterator(p.c[0], p.c[1], p.c[2], p.c[3], p.c[4], p.c[5]);
}

struct x_below_in_tuple {
  float threshold;
  template <class Tuple>
  __host__ __device__ bool operator()(const Tuple& t) const {
    return cuda::std::get<0>(t) < threshold;
  }
};

// A flag per particle, computed once for every column's selection: 1 where it stays.
__global__ void keep_flags(const float* x, float threshold, std::size_t n, unsigned char* flags) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) flags[i] = x[i] < threshold ? 0 : 1;
}

// A cell of a 1024^3 grid over [-1, 1)^3: 30 bits, x fastest.
struct cell_key {
  __host__ __device__ static std::uint32_t cell(float v) {
    const int c = int((v + 1.0f) * 512.0f);
    return std::uint32_t(c < 0 ? 0 : c > 1023 ? 1023 : c);
  }
  template <class P>
  __host__ __device__ std::uint32_t operator()(const P& p) const {
    const float x = p.x, y = p.y, z = p.z;
    return cell(x) | cell(y) << 10 | cell(z) << 20;
  }
};
struct cell_key_of_tuple {
  template <class Tuple>
  __host__ __device__ std::uint32_t operator()(const Tuple& t) const {
    return cell_key::cell(cuda::std::get<0>(t)) | cell_key::cell(cuda::std::get<1>(t)) << 10 |
           cell_key::cell(cuda::std::get<2>(t)) << 20;
  }
};

__global__ void keys_and_indices(const float* x, const float* y, const float* z, std::size_t n, std::uint32_t* keys,
                                 std::uint32_t* indices) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  keys[i] = cell_key::cell(x[i]) | cell_key::cell(y[i]) << 10 | cell_key::cell(z[i]) << 20;
  indices[i] = std::uint32_t(i);
}

// The gather as we would write it by hand: one particle per thread, its index read once, the six
// columns read at it and written at i.
__global__ void gather_by_hand(particle_columns in, const std::uint32_t* __restrict__ indices, std::size_t n,
                               particle_columns out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t from = indices[i];
#pragma unroll
  for (std::size_t k = 0; k < columns; ++k) out.c[k][i] = in.c[k][from];
}

// The staged gather by hand: every particle written once, coalesced, as a 32-byte record (six
// floats and two of padding), so that the scattered reads that follow take one sector a particle
// instead of one per column.
struct alignas(32) particle_record {
  float v[8];
};
__global__ void stage_by_hand(particle_columns in, std::size_t n, particle_record* __restrict__ records) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  particle_record r{};
#pragma unroll
  for (std::size_t k = 0; k < columns; ++k) r.v[k] = in.c[k][i];
  records[i] = r;
}
__global__ void gather_records_by_hand(const particle_record* __restrict__ records,
                                       const std::uint32_t* __restrict__ indices, std::size_t n, particle_columns out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const particle_record r = records[indices[i]];
#pragma unroll
  for (std::size_t k = 0; k < columns; ++k) out.c[k][i] = r.v[k];
}

unsigned blocks_of(std::size_t n) { return unsigned((n + 255) / 256); }

bool same_prefix(const coalesce::soa_vector<Particle>& got_vector, std::size_t got_size,
                 const std::vector<Particle>& expected) {
  if (got_size != expected.size()) return false;
  const auto got = got_vector.to_vector();
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (!coalesce_test::same(got[i], expected[i])) return false;
  return true;
}

void removal_group(runner& r, const std::vector<Particle>& particles, float threshold, const std::string& group) {
  const std::size_t n = particles.size();
  std::vector<Particle> expected;
  for (const auto& p : particles)
    if (!(p.x < threshold)) expected.push_back(p);
  const std::size_t kept = expected.size();

  destructive_rows rows(particles);
  const auto from = rows.from, in = rows.in, to = rows.to;
  coalesce::soa_vector<Particle>& work = rows.work;
  coalesce::soa_vector<Particle>* lib = &rows.library;

  ct::device_buffer<unsigned char> flags(n);
  ct::device_buffer<std::size_t> selected(1);
  unsigned char* flag = flags.data();
  std::size_t* count = selected.data();
  std::size_t temp_bytes = 0;
  coalesce::throw_on_error(cub::DeviceSelect::Flagged(nullptr, temp_bytes, in.c[0], flag, to.c[0], count, n),
                           "cub::DeviceSelect::Flagged (sizing)");
  ct::device_buffer<unsigned char> temp(temp_bytes > 0 ? temp_bytes : 1);
  unsigned char* temp_storage = temp.data();
  std::size_t thrust_kept = 0;

  std::printf("%s\n", group.c_str());
  const std::vector<candidate> candidates{
      {"restoring the input alone (6 x cudaMemcpyAsync)", row_role::context,
       [=](cudaStream_t s) { restore(in, from, n, s); }},
      {"thrust::remove_if, zip of 6, par_nosync", row_role::competitor,
       [=, &thrust_kept](cudaStream_t s) {
         restore(in, from, n, s);
         const auto first = zip_of(in);
         thrust_kept = std::size_t(
             thrust::remove_if(thrust::cuda::par_nosync.on(s), first, first + n, x_below_in_tuple{threshold}) - first);
       }},
      {"CUB: flags once, cub::DeviceSelect::Flagged per column", row_role::competitor,
       [=](cudaStream_t s) {
         restore(in, from, n, s);
         keep_flags<<<blocks_of(n), 256, 0, s>>>(in.c[0], threshold, n, flag);
         for (std::size_t k = 0; k < columns; ++k) {
           std::size_t bytes = temp_bytes;
           coalesce::throw_on_error(cub::DeviceSelect::Flagged(temp_storage, bytes, in.c[k], flag, to.c[k], count, n,
                                                               s),
                                    "cub::DeviceSelect::Flagged");
         }
       }},
      {"coalesce::erase_if(soa_vector, pred)", row_role::library,
       [=](cudaStream_t s) {
         lib->clear();
         lib->resize_for_overwrite(n);  // new storage from the pool: erase_if left a shorter one
         restore(columns_of(lib->view()), from, n, s);
         coalesce::erase_if(*lib, x_below{threshold});
       },
       row_target{targets::erase_if_versus_best_competitor, 0.0, "thrust::remove_if",
                  targets::erase_if_versus_thrust_remove_if},
       "every row first restores its input (the context row); the count waits for the host, as it must to resize"},
  };
  for (const auto& c : candidates) {
    if (c.role == row_role::context) continue;
    thrust_kept = 0;
    c.launch(0);
    ct::check_sync(c.name.c_str());
    bool right = false;
    if (c.role == row_role::library) right = same_prefix(rows.library, rows.library.size(), expected);
    else if (c.name.rfind("thrust", 0) == 0) right = same_prefix(work, thrust_kept, expected);
    else right = same_prefix(rows.out, selected.download()[0], expected);
    if (!right) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 48.0 * double(n) + 24.0 * double(n) + 24.0 * double(kept));
}

void sort_group(runner& r, const std::vector<Particle>& particles, const std::string& group) {
  const std::size_t n = particles.size();
  std::vector<Particle> expected = particles;
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Particle& a, const Particle& b) { return cell_key{}(a) < cell_key{}(b); });

  destructive_rows rows(particles);
  const auto from = rows.from, in = rows.in, to = rows.to;
  coalesce::soa_vector<Particle>& work = rows.work;
  coalesce::soa_vector<Particle>* lib = &rows.library;

  ct::device_buffer<std::uint32_t> key_buffer(2 * n), index_buffer(2 * n);
  std::uint32_t* keys = key_buffer.data();
  std::uint32_t* indices = index_buffer.data();
  cub::DoubleBuffer<std::uint32_t> probe_keys(keys, keys + n), probe_indices(indices, indices + n);
  std::size_t temp_bytes = 0;
  coalesce::throw_on_error(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, probe_keys, probe_indices,
                                                           std::uint32_t(n)),
                           "cub::DeviceRadixSort::SortPairs (sizing)");
  ct::device_buffer<unsigned char> temp(temp_bytes > 0 ? temp_bytes : 1);
  unsigned char* temp_storage = temp.data();
  ct::device_buffer<particle_record> record_buffer(n);
  particle_record* records = record_buffer.data();
  // The CUB rows' sort: the input restored, the (key, index) pairs written and sorted; returns
  // the sorted indices.
  const auto restore_and_sort = [=](cudaStream_t s) {
    restore(in, from, n, s);
    keys_and_indices<<<blocks_of(n), 256, 0, s>>>(in.c[0], in.c[1], in.c[2], n, keys, indices);
    cub::DoubleBuffer<std::uint32_t> k(keys, keys + n), v(indices, indices + n);
    std::size_t bytes = temp_bytes;
    coalesce::throw_on_error(cub::DeviceRadixSort::SortPairs(temp_storage, bytes, k, v, std::uint32_t(n), 0, 32, s),
                             "cub::DeviceRadixSort::SortPairs");
    return static_cast<const std::uint32_t*>(v.Current());
  };

  std::printf("%s\n", group.c_str());
  const std::vector<candidate> candidates{
      {"restoring the input alone (6 x cudaMemcpyAsync)", row_role::context,
       [=](cudaStream_t s) { restore(in, from, n, s); }},
      {"CUB: SortPairs of (key, index), then records staged and gathered by hand", row_role::competitor,
       [=](cudaStream_t s) {
         const std::uint32_t* sorted = restore_and_sort(s);
         stage_by_hand<<<blocks_of(n), 256, 0, s>>>(in, n, records);
         gather_records_by_hand<<<blocks_of(n), 256, 0, s>>>(records, sorted, n, to);
       }},
      {"CUB: SortPairs of (key, index), then a gather per column", row_role::competitor,
       [=](cudaStream_t s) {
         const std::uint32_t* sorted = restore_and_sort(s);
         for (std::size_t c = 0; c < columns; ++c)
           thrust::gather(thrust::cuda::par_nosync.on(s), sorted, sorted + n, in.c[c], to.c[c]);
       }},
      {"thrust::stable_sort_by_key, zip of 6 as values, par_nosync", row_role::competitor,
       [=](cudaStream_t s) {
         restore(in, from, n, s);
         const auto first = zip_of(in);
         thrust::transform(thrust::cuda::par_nosync.on(s), first, first + n, keys, cell_key_of_tuple{});
         thrust::stable_sort_by_key(thrust::cuda::par_nosync.on(s), keys, keys + n, first);
       }},
      {"coalesce::sort_by_key(soa_vector, key)", row_role::library,
       [=](cudaStream_t s) {
         lib->clear();
         lib->resize_for_overwrite(n);
         restore(columns_of(lib->view()), from, n, s);
         coalesce::sort_by_key(*lib, cell_key{});
       },
       row_target{targets::sort_by_key_versus_best_competitor, 0.0, "thrust::stable_sort_by_key",
                  targets::sort_by_key_versus_thrust_sort_by_key},
       "every row first restores its input (the context row)"},
  };
  for (const auto& c : candidates) {
    if (c.role == row_role::context) continue;
    c.launch(0);
    ct::check_sync(c.name.c_str());
    bool right = false;
    if (c.role == row_role::library) right = same_prefix(rows.library, rows.library.size(), expected);
    else if (c.name.rfind("thrust", 0) == 0) right = same_prefix(work, n, expected);
    else right = same_prefix(rows.out, n, expected);
    if (!right) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 48.0 * double(n) + 48.0 * double(n));
}

void gather_group(runner& r, const std::vector<Particle>& particles, const std::string& group) {
  const std::size_t n = particles.size();
  std::vector<std::uint32_t> permutation(n);
  std::iota(permutation.begin(), permutation.end(), 0u);
  std::shuffle(permutation.begin(), permutation.end(), std::mt19937_64(ct::test_seed()));
  std::vector<Particle> expected(n);
  for (std::size_t i = 0; i < n; ++i) expected[i] = particles[permutation[i]];

  coalesce::soa_vector<Particle> source(particles);  // never written
  coalesce::soa_vector<Particle> out(n);
  const auto from = columns_of(source.view());
  const auto to = columns_of(out.view());
  const ct::device_buffer<std::uint32_t> indices_on_device(permutation);
  const std::uint32_t* indices = indices_on_device.data();
  const auto in_view = source.view();
  const auto out_view = out.view();
  ct::device_buffer<particle_record> record_buffer(n);
  particle_record* records = record_buffer.data();

  std::printf("%s\n", group.c_str());
  const std::vector<candidate> candidates{
      {"cudaMemcpyAsync of the 6 columns (the same bytes written)", row_role::competitor,
       [=](cudaStream_t s) { restore(to, from, n, s); }},
      {"hand-written, one particle per thread", row_role::competitor,
       [=](cudaStream_t s) { gather_by_hand<<<blocks_of(n), 256, 0, s>>>(from, indices, n, to); }},
      {"hand-written: records staged, then one record per particle", row_role::competitor,
       [=](cudaStream_t s) {
         stage_by_hand<<<blocks_of(n), 256, 0, s>>>(from, n, records);
         gather_records_by_hand<<<blocks_of(n), 256, 0, s>>>(records, indices, n, to);
       }},
      {"thrust::gather per column, par_nosync", row_role::competitor,
       [=](cudaStream_t s) {
         for (std::size_t c = 0; c < columns; ++c)
           thrust::gather(thrust::cuda::par_nosync.on(s), indices, indices + n, from.c[c], to.c[c]);
       }},
      // Not a way to gather (its records were staged before the timing): what reading one
      // scattered sector a particle costs by itself, the floor under every gather above.
      {"floor: records staged beforehand, one record read a particle", row_role::context,
       [=](cudaStream_t s) { gather_records_by_hand<<<blocks_of(n), 256, 0, s>>>(records, indices, n, to); }},
      {"coalesce::gather(soa_view, indices, soa_view)", row_role::library,
       [=](cudaStream_t s) {
         coalesce::gather(in_view, cuda::std::span<const std::uint32_t>(indices, n), out_view, s);
       },
       row_target{targets::gather_versus_copy_of_its_writes, 0.0},
       "reads as scattered as the permutation: see its load sectors per request"},
  };
  stage_by_hand<<<blocks_of(n), 256>>>(from, n, records);  // the floor's records, once
  for (const auto& c : candidates) {
    if (c.name.rfind("cudaMemcpy", 0) == 0) continue;
    c.launch(0);
    ct::check_sync(c.name.c_str());
    if (!same_prefix(out, n, expected)) r.mismatch(group + ": " + c.name);
  }
  r.measure(group, candidates, 24.0 * double(n) + 4.0 * double(n) + 24.0 * double(n));
}

}  // namespace

void compaction_and_reordering(runner& r) {
  const std::size_t n = std::size_t(1) << 25;
  const auto particles = coalesce_test::random_particles(n);  // x uniform in [-1, 1)
  removal_group(r, particles, -0.8f, "removing 10% of 32 M particles (6 float columns, x < -0.8)");
  removal_group(r, particles, 0.0f, "removing 50% of 32 M particles (6 float columns, x < 0)");
  sort_group(r, particles, "sorting 32 M particles by a 32-bit cell key, random");
  {
    // Nearly sorted: in key order, then 1% of the particles swapped with a random other.
    auto nearly = particles;
    std::stable_sort(nearly.begin(), nearly.end(),
                     [](const Particle& a, const Particle& b) { return cell_key{}(a) < cell_key{}(b); });
    std::mt19937_64 engine(ct::test_seed());
    for (std::size_t k = 0; k < n / 100; ++k) std::swap(nearly[engine() % n], nearly[engine() % n]);
    sort_group(r, nearly, "sorting 32 M particles by a 32-bit cell key, nearly sorted");
  }
  gather_group(r, particles, "gathering all columns of 32 M particles by a random permutation");
}

}  // namespace bench
