// coalesce::detail: for_each_pair's kernel, the tiled all-pairs scheme of GPU Gems 3, ch. 31
// (Nyland, Harris, Prins). One thread per particle i; the block walks the particles j a tile of
// one j per thread at a time, staged in shared memory one array per leaf, and every thread runs
// f on every j of the tile. All threads read the same j at once: shared reads are broadcasts,
// free of bank conflicts. Users never include this header. Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/element_bytes.hpp>
#include <coalesce/detail/leaves.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/soa_view.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// Threads per block, and so particles per tile: 512, measured. On an H200 (CUDA 13.0,
// tests/device/for_each_pair.cu), softened gravity on 64 K and 512 K float bodies took 3.15 and
// 178-181 ms with blocks of 128 or 256, and 2.77 and 168.7 ms with 512: a larger tile waits at
// half as many barriers per pair, and each block reads the particles from L2 half as often.
// Loading the next tile ahead (pair_prefetch_bytes) gained with 512 (2.83 -> 2.77 ms at 64 K)
// and lost with 256. The grid is one thread per particle whatever the block.
// Splitting the j of each i over several blocks would fill a GPU at smaller n, but the partial
// accumulators would then have to be combined, which is right only for an f that adds into a
// (not one that keeps a minimum, say): for_each_pair takes no combining function, so it does not.
inline constexpr unsigned pair_threads = 512;
// The j's of one step of the inner loop, and of one shared read per leaf: 4 floats of a column
// are one 16-byte broadcast (LDS.128), as GPU Gems' float4 of position and mass is, so a pair
// costs a quarter of a shared instruction per leaf f reads.
inline constexpr unsigned pair_unroll = 4;
// The most a block's stage may take: static shared memory's limit. Particles whose leaves take
// more than 96 bytes get a smaller block (pair_threads_v).
inline constexpr std::size_t pair_stage_limit = 48 * 1024;
// Particles of at most this many bytes of leaves are loaded a tile ahead, into registers held
// while the block works on the tile before (16 floats). Wider ones load their tile between the
// barriers: held through the inner loop, a particle of 300 floats would not fit a thread's 255
// registers and would spill to local memory.
inline constexpr std::size_t pair_prefetch_bytes = 64;

// Every column of the stage starts on this boundary: 16 bytes for the group reads, more for a
// leaf aligned to more.
template <class T, std::size_t... L>
constexpr std::size_t widest_leaf_alignment(std::index_sequence<L...>) {
  std::size_t a = 16;
  ((a = alignof(leaf_type_t<T, L>) > a ? alignof(leaf_type_t<T, L>) : a), ...);
  return a;
}
template <class T>
inline constexpr std::size_t stage_alignment_v = widest_leaf_alignment<T>(std::make_index_sequence<leaf_count_v<T>>{});

// Where each leaf's array starts in a stage of `tile` particles of T, in bytes; at[leaves] is
// the stage's size.
template <class T, std::size_t... L>
constexpr column_array<std::size_t, sizeof...(L) + 1> make_stage_offsets(std::size_t tile, std::index_sequence<L...>) {
  constexpr std::size_t align = stage_alignment_v<T>;
  const std::size_t bytes[] = {(tile * sizeof(leaf_type_t<T, L>) + align - 1) / align * align...};
  column_array<std::size_t, sizeof...(L) + 1> at{};
  for (std::size_t k = 0; k < sizeof...(L); ++k) at[k + 1] = at[k] + bytes[k];
  return at;
}
template <class T>
constexpr std::size_t stage_bytes_for(std::size_t tile) {
  return make_stage_offsets<T>(tile, std::make_index_sequence<leaf_count_v<T>>{})[leaf_count_v<T>];
}

// The block (and tile) of particles of T: pair_threads, halved while the stage would not fit
// pair_stage_limit, down to a warp. 0 when not even a warp's tile fits (for_each_pair refuses T).
template <class T>
constexpr unsigned choose_pair_threads() {
  unsigned threads = pair_threads;
  while (threads > 32 && stage_bytes_for<T>(threads) > pair_stage_limit) threads /= 2;
  return stage_bytes_for<T>(threads) <= pair_stage_limit ? threads : 0u;
}
template <class T>
inline constexpr unsigned pair_threads_v = choose_pair_threads<T>();

// (Variables, not functions: device code may use them without nvcc's --expt-relaxed-constexpr.)
template <class T>
inline constexpr bool pair_prefetch_v =
    leaf_bytes<T>(std::make_index_sequence<leaf_count_v<T>>{}) <= pair_prefetch_bytes;

template <class T, unsigned Tile>
inline constexpr auto stage_offsets_v = make_stage_offsets<T>(Tile, std::make_index_sequence<leaf_count_v<T>>{});
template <class T, unsigned Tile>
inline constexpr std::size_t stage_bytes_v = stage_bytes_for<T>(Tile);

// The stage of one tile: Tile particles of T in shared memory, one array per leaf. A particle is
// put there leaf by leaf (consecutive threads, consecutive words: conflict-free) and taken out as
// a plain T, whose leaves are shared loads the compiler sees one by one: it drops those of leaves
// f never reads.
template <class T, unsigned Tile>
struct pair_stage {
  static_assert(Tile % pair_unroll == 0, "coalesce::detail: a tile is whole steps of the inner loop");
  using leaves = std::make_index_sequence<leaf_count_v<T>>;

  unsigned char* bytes;  // the block's shared memory, stage_alignment_v<T>-aligned

  template <std::size_t L>
  COALESCE_DEVICE COALESCE_FORCEINLINE leaf_type_t<T, L>* column() const {
    constexpr std::size_t at = stage_offsets_v<T, Tile>[L];  // a constant: no host variable in device code
    return reinterpret_cast<leaf_type_t<T, L>*>(bytes + at);
  }

  // Particle p into slot s.
  COALESCE_DEVICE COALESCE_FORCEINLINE void put(unsigned s, const T& p) const { put(s, p, leaves{}); }
  // The particle in slot s.
  COALESCE_DEVICE COALESCE_FORCEINLINE T get(unsigned s) const { return get(s, leaves{}); }
  // The particles in slots [g * pair_unroll, (g + 1) * pair_unroll): one read per leaf, as wide
  // as the group's bytes (16 bytes for 4 floats, twice 16 for 4 doubles).
  COALESCE_DEVICE COALESCE_FORCEINLINE void get_group(unsigned g, T (&out)[pair_unroll]) const {
    get_group(g, out, leaves{});
  }

 private:
  template <std::size_t... L>
  COALESCE_DEVICE COALESCE_FORCEINLINE void put(unsigned s, const T& p, std::index_sequence<L...>) const {
    ((column<L>()[s] = struct_leaf<L>(p)), ...);
  }
  template <std::size_t... L>
  COALESCE_DEVICE COALESCE_FORCEINLINE T get(unsigned s, std::index_sequence<L...>) const {
    T p;
    ((struct_leaf<L>(p) = column<L>()[s]), ...);
    return p;
  }
  template <std::size_t L>
  COALESCE_DEVICE COALESCE_FORCEINLINE void get_leaf_group(unsigned g, T (&out)[pair_unroll]) const {
    using group = vector_chunk<leaf_type_t<T, L>, pair_unroll>;
    const group values = load_words<alignof(group)>(reinterpret_cast<const group*>(column<L>()) + g);
#pragma unroll
    for (unsigned u = 0; u < pair_unroll; ++u) struct_leaf<L>(out[u]) = values[u];
  }
  template <std::size_t... L>
  COALESCE_DEVICE COALESCE_FORCEINLINE void get_group(unsigned g, T (&out)[pair_unroll],
                                                      std::index_sequence<L...>) const {
    (get_leaf_group<L>(g, out), ...);
  }
};

// Particle i of the columns, as a T in registers (the compiler drops the loads of leaves nothing
// reads).
template <class T, std::size_t... L>
COALESCE_DEVICE COALESCE_FORCEINLINE void load_particle(const soa_view<const T, device_space>& from, std::size_t i,
                                                        T& to, std::index_sequence<L...>) {
  ((struct_leaf<L>(to) = from.template leaf_column<L>()[i]), ...);
}
// out[i] = a, leaf by leaf.
template <class A, std::size_t... L>
COALESCE_DEVICE COALESCE_FORCEINLINE void store_accumulator(const soa_view<A, device_space>& out, std::size_t i,
                                                            const A& a, std::index_sequence<L...>) {
  ((out.template leaf_column<L>()[i] = struct_leaf<L>(a)), ...);
}

// Whether f can be called as for_each_pair calls it. Checked in device code: on the host, nvcc
// hides a device lambda's call operator.
template <class F, class T, class A>
COALESCE_HOST_DEVICE constexpr bool check_pair_function() {
  constexpr bool callable = std::is_invocable_v<const F&, const T&, const T&, A&>;
  static_assert(callable,
                "coalesce::for_each_pair: f must be callable as f(p_i, p_j, a), p_i and p_j two particles (const T&) "
                "and a the accumulator of p_i (an A&, A the element type of out): declare f as [] __device__(const "
                "auto& p_i, const auto& p_j, auto& a)");
  return callable;
}

// f(p_i, p_j, a) for the Tile particles j of a full tile, none of them i: no test per pair, 4
// j's a step, each leaf f reads one shared read a step.
template <unsigned Tile, class T, class A, class F>
COALESCE_DEVICE COALESCE_FORCEINLINE void visit_full_tile(const pair_stage<T, Tile>& stage, const T& p_i, A& a,
                                                          const F& f) {
#pragma unroll 1
  for (unsigned g = 0; g < Tile / pair_unroll; ++g) {
    T p_j[pair_unroll];
    stage.get_group(g, p_j);
#pragma unroll
    for (unsigned u = 0; u < pair_unroll; ++u) f(p_i, p_j[u], a);
  }
}

// f(p_i, p_j, a) for the first `count` particles of a tile but slot `skip` (i's own; Tile or more
// for none): the tile holding the block's own particles, and the last, partial one. One tile of
// every block's n / Tile takes this loop.
template <unsigned Tile, class T, class A, class F>
COALESCE_DEVICE COALESCE_FORCEINLINE void visit_tile_except(const pair_stage<T, Tile>& stage, unsigned count,
                                                            unsigned skip, const T& p_i, A& a, const F& f) {
#pragma unroll pair_unroll
  for (unsigned s = 0; s < count; ++s) {
    if (s == skip) continue;
    const T p_j = stage.get(s);
    f(p_i, p_j, a);
  }
}

// for_each_pair over all n particles, Tile = pair_threads_v<T> threads a block, block b holding
// particles [b * Tile, (b + 1) * Tile) (striding on when the grid is capped). Every thread loads
// one particle of each tile, also those past n with no particle of their own. The next tile's
// particle is loaded into registers while the block works on this one (pair_prefetch_v), so a
// tile costs two barriers and no wait for memory.
template <class T, class A, class F>
__global__ void __launch_bounds__(pair_threads_v<T>)
    pair_tiles_kernel(soa_view<const T, device_space> particles, soa_view<A, device_space> out, F f) {
  if constexpr (check_pair_function<F, T, A>()) {
    constexpr unsigned tile = pair_threads_v<T>;
    using leaves = std::make_index_sequence<leaf_count_v<T>>;
    __shared__ alignas(stage_alignment_v<T>) unsigned char stage_bytes[stage_bytes_v<T, tile>];
    const pair_stage<T, tile> stage{stage_bytes};
    const std::size_t n = particles.size();
    const std::size_t tiles = (n + tile - 1) / tile;
    const unsigned t = threadIdx.x;
    for (std::size_t first = std::size_t(blockIdx.x) * tile; first < n; first += std::size_t(gridDim.x) * tile) {
      const std::size_t i = first + t;
      const bool has_i = i < n;
      T p_i{};
      if (has_i) load_particle(particles, i, p_i, leaves{});
      A a{};
      constexpr bool prefetch = pair_prefetch_v<T>;
      T next{};  // this thread's particle of the tile to come
      if (prefetch && t < n) load_particle(particles, t, next, leaves{});
      for (std::size_t k = 0; k < tiles; ++k) {
        const std::size_t j0 = k * tile;
        const unsigned count = n - j0 < tile ? unsigned(n - j0) : tile;
        __syncthreads();  // the block is done with the tile before
        if (t < count) {
          if (!prefetch) load_particle(particles, j0 + t, next, leaves{});
          stage.put(t, next);
        }
        __syncthreads();
        if (prefetch && j0 + tile + t < n) load_particle(particles, j0 + tile + t, next, leaves{});
        if (!has_i) continue;
        if (count == tile && j0 != first) {
          visit_full_tile(stage, p_i, a, f);
        } else {
          visit_tile_except(stage, count, j0 == first ? t : tile, p_i, a, f);
        }
      }
      if (has_i) store_accumulator(out, i, a, std::make_index_sequence<leaf_count_v<A>>{});
    }
  }
}

}  // namespace coalesce::detail
