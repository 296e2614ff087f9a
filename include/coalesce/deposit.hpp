// coalesce: deposit, the scatter-accumulate of particle codes. Each particle computes its
// contributions to a grid - nearest grid point, cloud-in-cell, a higher spline: the weights are
// the caller's - and deposit adds them into the grid, atomically, one thread per particle.
//
//   coalesce::deposit(particles, rho.view(), [=] __device__(auto p, auto acc) {
//     const float fx = p.x * inv_h, fy = p.y * inv_h;                // cloud-in-cell
//     const auto c = std::size_t(fx), r = std::size_t(fy);
//     const float wx = fx - float(c), wy = fy - float(r), q = p.q;
//     acc.add(r, c, q * (1 - wx) * (1 - wy));
//     acc.add(r, c + 1, q * wx * (1 - wy));
//     acc.add(r + 1, c, q * (1 - wx) * wy);
//     acc.add(r + 1, c + 1, q * wx * wy);
//   });
//
// Into a matrix, a block takes chunks of 4096 or 8192 consecutive particles (8192 where the
// grid's mean density lets a chunk's box fit in the stage) and sums each chunk's adds in
// a box of the grid in shared memory first, guessed from the points the chunk's first and last
// particle add to (f is called once more for those two). Where the grid's rows are narrow enough
// for a chunk of sorted particles to span a few of them (rows of at most 4096 floats, 2048
// doubles or float2s, 1024 float4s or double2s, padding included; detail/deposit_runs.hpp), a
// thread takes four consecutive particles at a time, reading them as one 16-byte load of each
// column f reads, and keeps each of a particle's first 9 adds in a register while the particles
// after it add into the same points: only where a point changes does a sum go into the box.
// Wider rows: one particle per lane, a warp's adds into one point summed with shuffles
// (detail/deposit_stage.hpp). Each point of the box that received anything then goes out with one
// atomicAdd. An add outside the box goes straight into the grid, and a block whose particles are
// in no useful order adds straight into the grid from then on, one particle per lane. Into a
// volume or a span, each add is one atomicAdd.
//
// Measured on an NVIDIA H100, CUDA 13.0 (tests/device/deposit.cu, full scope): a cloud-in-cell
// deposit of 16 M particles into 2048 x 2048 floats, sorted by cell, takes 0.108 ms against 0.398
// ms for a hand-written kernel of one atomicAdd per contribution (3.67x), and 0.97x the speed of
// the best hand-written kernel (the same scheme, knowing the stencil: one compare a particle);
// the global atomics fall from 1.49 L2 requests a particle to 0.046. Shuffled, 1.29x the plain
// kernel (0.604 ms against 0.777 ms). On an H200, before the chunks of 8192: 3.2x and 0.95x.
//
// The sums are those of every contribution, added in an order that changes from run to run:
// floating-point sums may differ in their last bits between runs (integer sums do not).
// Needs a CUDA compiler (it launches a kernel).
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/deposit.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/config.hpp>
#  include <coalesce/detail/deposit_deterministic.hpp>
#  include <coalesce/detail/deposit_runs.hpp>
#  include <coalesce/detail/deposit_stage.hpp>
#  include <coalesce/detail/device_memory.hpp>
#  include <coalesce/detail/grid_atomics.hpp>
#  include <coalesce/detail/launch.hpp>
#  include <coalesce/detail/leaves.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/pitched_matrix.hpp>
#  include <coalesce/pitched_volume.hpp>
#  include <coalesce/soa.hpp>

#  include <cuda/std/span>
#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <stdexcept>
#  include <type_traits>
#  include <utility>

namespace coalesce {

namespace detail {

// The accumulators' check of their grid's element type: one message for the three.
template <class G>
constexpr bool check_grid_element() {
  static_assert(has_atomic_add_v<G>,
                "coalesce::deposit: the grid's elements must be float, double, int, unsigned, unsigned long long, "
                "float2, float4 or double2 (what atomicAdd adds); deposit into a grid of each field of a struct");
  return true;
}

}  // namespace detail

/// What deposit hands `f` to add into a matrix: add(r, c, value) adds `value` into element
/// (r, c). Precondition: r < rows, c < cols (checked under COALESCE_DEBUG).
template <class G>
class matrix_accumulator {
  static_assert(detail::check_grid_element<G>());

 public:
  /// The accumulator of `grid`.
  explicit matrix_accumulator(pitched_view<G, device_space> grid) noexcept : grid_(grid) {}
  /// Adds `value` into element (r, c), atomically.
  COALESCE_DEVICE void add(std::size_t r, std::size_t c, G value) const {
    COALESCE_ASSERT(r < grid_.rows() && c < grid_.cols(), "coalesce::deposit: add(r, c) outside the grid");
    detail::atomic_add_value(&grid_(r, c), value);
  }

 private:
  pitched_view<G, device_space> grid_;
};

/// What deposit hands `f` to add into a volume: add(z, y, x, value) adds `value` into element
/// (z, y, x). Precondition: inside the volume (checked under COALESCE_DEBUG).
template <class G>
class volume_accumulator {
  static_assert(detail::check_grid_element<G>());

 public:
  /// The accumulator of `grid`.
  explicit volume_accumulator(pitched_volume_view<G, device_space> grid) noexcept : grid_(grid) {}
  /// Adds `value` into element (z, y, x), atomically.
  COALESCE_DEVICE void add(std::size_t z, std::size_t y, std::size_t x, G value) const {
    COALESCE_ASSERT(z < grid_.depth() && y < grid_.height() && x < grid_.width(),
                    "coalesce::deposit: add(z, y, x) outside the grid");
    detail::atomic_add_value(&grid_(z, y, x), value);
  }

 private:
  pitched_volume_view<G, device_space> grid_;
};

/// What deposit hands `f` to add into a span: add(i, value) adds `value` into element i (a
/// histogram, a 1D grid). Precondition: i < size (checked under COALESCE_DEBUG).
template <class G>
class span_accumulator {
  static_assert(detail::check_grid_element<G>());

 public:
  /// The accumulator of `grid`.
  explicit span_accumulator(cuda::std::span<G> grid) noexcept : grid_(grid) {}
  /// Adds `value` into element i, atomically.
  COALESCE_DEVICE void add(std::size_t i, G value) const {
    COALESCE_ASSERT(i < grid_.size(), "coalesce::deposit: add(i) outside the grid");
    detail::atomic_add_value(grid_.data() + i, value);
  }

 private:
  cuda::std::span<G> grid_;
};

namespace detail {

// Whether every leaf of the struct G is an element type atomicAdd adds.
template <class G, std::size_t... L>
constexpr bool leaves_add_atomically(std::index_sequence<L...>) {
  return (has_atomic_add_v<leaf_type_t<G, L>> && ...);
}
template <class G>
constexpr bool check_field_grid() {
  constexpr bool ok = leaves_add_atomically<G>(std::make_index_sequence<leaf_count_v<G>>{});
  static_assert(ok, "coalesce::deposit: every field of a soa_view grid's struct must be float, double, int, unsigned, "
                    "unsigned long long, float2, float4 or double2 (what atomicAdd adds)");
  return ok;
}

}  // namespace detail

/// What deposit hands `f` to add into a soa_view of a struct G (several fields per grid point, one
/// column each): add(i, value) adds each field of `value` into that field of element i.
/// Precondition: i < size (checked under COALESCE_DEBUG).
template <class G>
class fields_accumulator {
  static_assert(detail::check_field_grid<G>());

 public:
  /// The accumulator of `grid`.
  explicit fields_accumulator(soa_view<G, device_space> grid) noexcept : grid_(grid) {}
  /// Adds each field of `value` into element i's, atomically field by field.
  COALESCE_DEVICE void add(std::size_t i, const G& value) const {
    COALESCE_ASSERT(i < grid_.size(), "coalesce::deposit: add(i) outside the grid");
    add_leaves(i, value, std::make_index_sequence<detail::leaf_count_v<G>>{});
  }

 private:
  template <std::size_t... L>
  COALESCE_DEVICE void add_leaves(std::size_t i, const G& value, std::index_sequence<L...>) const {
    (detail::atomic_add_value(grid_.template leaf_column<L>() + i, detail::struct_leaf<L>(value)), ...);
  }
  soa_view<G, device_space> grid_;
};

namespace detail {

template <class T, class Acc, class F>
__global__ void deposit_kernel(soa_view<T, device_space> particles, Acc acc, F f) {
  const std::size_t n = particles.size();
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    f(particles[i], acc);
}

// What every deposit checks before its launch. False where there is nothing to do.
template <class T>
bool ready_to_deposit(soa_view<T, device_space> particles, const void* grid_data) {
  constexpr const char* what = "coalesce::deposit";
  if (particles.empty()) return false;
  require_device_memory(particles.columns()[0], what);
  require_device_memory(grid_data, what);
  throw_if_earlier_error(what);
  return true;
}

// The container forms' refusal of a grid on another stream than the particles'.
inline void require_same_deposit_streams(cudaStream_t particles, cudaStream_t grid) {
  if (particles != grid)
    throw std::invalid_argument(
        "coalesce::deposit: the particles and the grid are on different streams; pass their views and the stream "
        "to run on, once the grid's stream is ordered before it");
}

template <class T>
using read_only_particles = soa_view<const std::remove_const_t<T>, device_space>;

// One thread per particle, one atomic per add.
template <class T, class Acc, class F>
void launch_deposit(soa_view<T, device_space> particles, const Acc& acc, const void* grid_data, const F& f,
                    cudaStream_t stream) {
  if (!ready_to_deposit(particles, grid_data)) return;
  constexpr auto kernel = deposit_kernel<const std::remove_const_t<T>, Acc, F>;
  constexpr unsigned threads = 256;
  const unsigned grid = one_wave_grid<kernel>(threads, (particles.size() + threads - 1) / threads);
  kernel<<<grid, threads, 0, stream>>>(read_only_particles<T>(particles), acc, f);
  throw_if_launch_failed("coalesce::deposit kernel launch");
}

// Launches Kernel over chunks of `chunk` particles: as many blocks as there are chunks, at most
// `waves` waves of them.
template <auto Kernel, class... Args>
void launch_chunked_deposit(std::size_t particles, unsigned chunk, unsigned waves, cudaStream_t stream, Args... args) {
  const std::size_t chunks = (particles + chunk - 1) / chunk;
  const unsigned wave = one_wave_grid<Kernel>(deposit_threads, chunks);
  const unsigned blocks = unsigned(chunks < std::size_t(wave) * waves ? chunks : std::size_t(wave) * waves);
  Kernel<<<blocks, deposit_threads, 0, stream>>>(args...);
  throw_if_launch_failed("coalesce::deposit kernel launch");
}

// Whether the register-run stage takes this grid: point (r, c) as r * pitch + c in 32 bits, and
// rows narrow enough (half the stage at most) for a chunk of sorted particles' box to span the
// rows it touches.
template <class G>
bool deposit_runs_fit(pitched_view<G, device_space> grid) {
  constexpr std::size_t capacity = deposit_stage_bytes / sizeof(G);
  if (grid.pitch_bytes() % sizeof(G) != 0) return false;
  const std::size_t pitch = grid.pitch_bytes() / sizeof(G);
  return pitch > 0 && pitch <= capacity / 2 && grid.rows() <= std::size_t(0xffffffffu) / pitch;
}

// The staged deposit into a matrix of fewer than 2^32 rows and columns: the register-run stage
// (detail/deposit_runs.hpp) where the grid allows it, the warp-sum stage
// (detail/deposit_stage.hpp) otherwise.
template <class T, class G, class Acc, class F>
void launch_staged_deposit(soa_view<T, device_space> particles, pitched_view<G, device_space> grid, const Acc& acc,
                           const F& f, cudaStream_t stream) {
  if (!ready_to_deposit(particles, grid.data())) return;
  using U = std::remove_const_t<T>;
  const read_only_particles<T> from(particles);
  if (!deposit_runs_fit(grid)) {
    launch_chunked_deposit<staged_deposit_kernel<deposit_chunk, U, G, Acc, F>>(
        particles.size(), deposit_chunk, deposit_waves, stream, from, grid, acc, f);
    return;
  }
  constexpr unsigned large = run_deposit_chunk, small = run_deposit_small_chunk;
  const std::size_t n = particles.size();
  const std::size_t pitch = grid.pitch_bytes() / sizeof(G), capacity = deposit_stage_bytes / sizeof(G);
  const bool large_chunks = choose_run_deposit_chunk(n, grid.rows(), pitch, capacity) == large;
  if (!columns_load_together(from)) {  // one particle at a time: a rare case, in one size of chunk
    launch_chunked_deposit<run_deposit_kernel<small, false, U, G, Acc, F>>(n, small, run_deposit_waves, stream, from,
                                                                           grid, acc, f);
  } else if (large_chunks) {
    launch_chunked_deposit<run_deposit_kernel<large, true, U, G, Acc, F>>(n, large, run_deposit_waves, stream, from,
                                                                          grid, acc, f);
  } else {
    launch_chunked_deposit<run_deposit_kernel<small, true, U, G, Acc, F>>(n, small, run_deposit_waves, stream, from,
                                                                          grid, acc, f);
  }
}

}  // namespace detail

/// Calls f(p, acc) for every particle p of `particles` (a read-only element proxy), on `stream`;
/// `f` adds its contributions through acc.add(r, c, value) into `grid`, any number per particle.
/// Take `acc` as `auto`: its type depends on the stage it runs in. `f` is called once more for a
/// few particles (two a chunk), with an accumulator that only notes where they add, so it
/// must have no effect other than its adds. Particles sorted by cell (row-major, as
/// sort_by_key(particles, cell_key) leaves them) are summed in registers and shared memory first;
/// particles in no useful order add straight into the grid, a particle's adds into (r, c) and
/// (r, c + 1) of a float grid as one float2 atomic where the pair is 8-byte aligned (sm_90).
/// Adds into what `grid` holds: clear it first for a fresh deposit. `f` may also read what it
/// captures; it must not write the particles (they are read-only) or `grid` other than through
/// `acc`. Throws std::invalid_argument if a view is not of device memory, coalesce::cuda_error if
/// the launch fails (or, attributed to the caller, if an earlier error was pending).
template <class T, class G, class F>
void deposit(soa_view<T, device_space> particles, pitched_view<G, device_space> grid, F f, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::deposit");
  static_assert(detail::check_grid_element<G>());
  if constexpr (detail::has_atomic_add_v<G>) {  // else the one message above, not the stage's errors
    constexpr std::size_t most = std::size_t(0xffffffffu);  // the stage keeps rows and columns in 32 bits
    if (grid.rows() >= most || grid.cols() >= most) {
      detail::launch_deposit(particles, matrix_accumulator<G>(grid), grid.data(), f, stream);
      return;
    }
    detail::launch_staged_deposit(particles, grid, matrix_accumulator<G>(grid), f, stream);
  }
}

/// deposit into a volume: f(p, acc) calls acc.add(z, y, x, value).
template <class T, class G, class F>
void deposit(soa_view<T, device_space> particles, pitched_volume_view<G, device_space> grid, F f,
             cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::deposit");
  detail::launch_deposit(particles, volume_accumulator<G>(grid), grid.data(), f, stream);
}

/// deposit into a span of device memory: f(p, acc) calls acc.add(i, value).
template <class T, class G, class F>
void deposit(soa_view<T, device_space> particles, cuda::std::span<G> grid, F f, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::deposit");
  if (grid.empty()) return;
  detail::launch_deposit(particles, span_accumulator<G>(grid), grid.data(), f, stream);
}

/// deposit into a soa_view of a struct (several fields per grid point, one column each, a 1D
/// grid): f(p, acc) calls acc.add(i, value), which adds each field of value into element i's.
/// One atomicAdd per field and add. (Index a 2D or 3D grid of fields linearly: i = r * cols + c.)
template <class T, class G, class F>
void deposit(soa_view<T, device_space> particles, soa_view<G, device_space> grid, F f, cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::deposit");
  if constexpr (detail::check_field_grid<G>()) {
    if (grid.empty()) return;
    detail::launch_deposit(particles, fields_accumulator<G>(grid), grid.template leaf_column<0>(), f, stream);
  }
}

/// deposit's deterministic mode, into a matrix, a volume or a span (`grid`): the same sums, bit
/// for bit, on every run and every GPU, those of a serial loop over the particles in order, each
/// point's contributions added into it in particle order and, within a particle, in the order f
/// adds them. f is called twice per particle (once to count its adds), so it must add the same
/// points and values each time. Every add is recorded (12 to 24 bytes, with the sort's second
/// copy), the records sorted by point with CUB's stable radix sort, and each point's run added by
/// one thread. It waits once, for the number of adds, so it cannot be captured in a CUDA graph.
/// Measured on an NVIDIA H200, CUDA 13.0 (tests/device/deposit.cu, full scope): 16 M cloud-in-cell
/// particles into 2048 x 2048 floats take 3.93 ms sorted by cell (12x the plain atomic kernel's
/// 0.33 ms, 38x the default deposit's 0.10 ms) and 3.95 ms shuffled (6x).
template <class T, class G, class F>
void deposit(soa_view<T, device_space> particles, pitched_view<G, device_space> grid, F f, deterministic_t,
             cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::deposit");
  static_assert(detail::check_grid_element<G>());
  if (!detail::ready_to_deposit(particles, grid.data())) return;
  detail::deterministic_deposit(particles, detail::matrix_points<G>{grid}, grid.rows() * grid.cols(), f, stream);
}
/// deposit's deterministic mode into a volume.
template <class T, class G, class F>
void deposit(soa_view<T, device_space> particles, pitched_volume_view<G, device_space> grid, F f, deterministic_t,
             cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::deposit");
  static_assert(detail::check_grid_element<G>());
  if (!detail::ready_to_deposit(particles, grid.data())) return;
  detail::deterministic_deposit(particles, detail::volume_points<G>{grid}, grid.depth() * grid.height() * grid.width(),
                                f, stream);
}
/// deposit's deterministic mode into a span of device memory.
template <class T, class G, class F>
void deposit(soa_view<T, device_space> particles, cuda::std::span<G> grid, F f, deterministic_t,
             cudaStream_t stream = 0) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::deposit");
  static_assert(detail::check_grid_element<G>());
  if (grid.empty() || !detail::ready_to_deposit(particles, grid.data())) return;
  detail::deterministic_deposit(particles, detail::span_points<G>{grid}, grid.size(), f, stream);
}

/// deposit from a device soa_vector into a device pitched_matrix or pitched_volume, on the
/// particles' stream. The grid must be ordered on that stream: the two containers' streams must
/// be the same (std::invalid_argument otherwise; pass views and a stream to order them yourself).
template <class T, class R, class Grid, class F,
          std::enable_if_t<std::is_same_v<typename Grid::memory_space, device_space>, int> = 0>
void deposit(const soa_vector<T, device_space, R>& particles, Grid& grid, F f) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::deposit");
  detail::require_same_deposit_streams(particles.stream(), grid.stream());
  deposit(particles.const_view(), grid.view(), f, particles.stream());
}

/// The container form of the deterministic mode, on the particles' stream (the grid's must be
/// the same).
template <class T, class R, class Grid, class F,
          std::enable_if_t<std::is_same_v<typename Grid::memory_space, device_space>, int> = 0>
void deposit(const soa_vector<T, device_space, R>& particles, Grid& grid, F f, deterministic_t mode) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::deposit");
  detail::require_same_deposit_streams(particles.stream(), grid.stream());
  deposit(particles.const_view(), grid.view(), f, mode, particles.stream());
}

}  // namespace coalesce

#endif  // __CUDACC__
