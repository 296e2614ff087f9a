// coalesce::detail: the engine behind for_each and transform on columns. Users never include it.
//
// Work is a grid of `rows` x `cols` elements (rows == 1 for a soa_view or a contiguous range).
// Each row splits into a head of `head` elements, whole chunks of N elements starting at an
// address every column can load as one aligned access, and a tail. Thread c takes chunk c, so
// every load instruction of a warp covers 32 neighbouring chunks (one contiguous span per
// column). Heads and tails (fewer than 2N elements a row) go one element per thread.
//
// Measured on an NVIDIA H200, CUDA 13.0, in-place float4 update of 512 MiB, as a share of
// cudaMemcpy: one chunk per thread and a block per 256 chunks 1.038; the same kernel as a
// one-wave grid-stride loop 0.967; two or four chunks per thread (more loads in flight)
// 0.919-0.923. Hence one chunk per thread and as many blocks as the work has.
// Needs a CUDA compiler.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/block_copy.hpp>
#include <coalesce/detail/element_bytes.hpp>
#include <coalesce/detail/for_each_checks.hpp>
#include <coalesce/detail/launch.hpp>
#include <coalesce/detail/vector_access.hpp>
#include <coalesce/error.hpp>
#include <coalesce/soa_reference.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace coalesce::detail {

// Where an element or a chunk starts: its row and its column within the row.
struct grid_position {
  std::size_t row = 0;
  std::size_t col = 0;
};

// The shape of the work: rows x cols elements, each row with the same head, in chunks of N.
template <unsigned N>
struct chunk_grid {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t head = 0;  // elements before the first aligned chunk of each row (< N)

  COALESCE_HOST_DEVICE std::size_t chunks_per_row() const { return (cols - head) / N; }
  COALESCE_HOST_DEVICE std::size_t edges_per_row() const { return cols - chunks_per_row() * N; }
  COALESCE_HOST_DEVICE std::size_t chunks() const { return rows * chunks_per_row(); }
  COALESCE_HOST_DEVICE std::size_t edges() const { return rows * edges_per_row(); }

  // (Divisions in 32 bits where the counts fit: a 64-bit division is a long instruction sequence.)
  COALESCE_HOST_DEVICE static void divide(std::size_t a, std::size_t b, std::size_t& q, std::size_t& r) {
    if (a <= 0xffffffffu && b <= 0xffffffffu) {
      q = std::uint32_t(a) / std::uint32_t(b);
      r = std::uint32_t(a) % std::uint32_t(b);
    } else {
      q = a / b;
      r = a % b;
    }
  }
  COALESCE_HOST_DEVICE grid_position chunk_position(std::size_t c) const {
    if (rows == 1) return {0, head + c * N};
    std::size_t r, k;
    divide(c, chunks_per_row(), r, k);
    return {r, head + k * N};
  }
  COALESCE_HOST_DEVICE grid_position edge_position(std::size_t e) const {
    std::size_t r, k;
    if (rows == 1) {
      r = 0;
      k = e;
    } else {
      divide(e, edges_per_row(), r, k);
    }
    return {r, k < head ? k : head + chunks_per_row() * N + (k - head)};
  }
};

// The chunk walk: `work.template run<N>(position, lanes)` for every chunk, then
// `work.one(position)` for every head and tail element. (The loops stride by the grid only when
// the work has more than 2^31 - 1 blocks' worth.) Work whose columns share their loads across a
// warp (Work::warp_cooperative<N>) gets whole warps in step and `lanes`, the mask of the lanes
// with a chunk, which are the low ones and hold consecutive chunks; other work gets lanes == 0.
template <unsigned N, class Work>
__global__ void __launch_bounds__(256) chunk_walk_kernel(chunk_grid<N> grid, Work work) {
  const std::size_t step = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t chunks = grid.chunks();
  if constexpr (Work::template warp_cooperative<N>) {
    const unsigned lane = threadIdx.x % 32;
    for (std::size_t warp_first = first - lane; warp_first < chunks; warp_first += step) {
      const std::size_t c = warp_first + lane;
      const unsigned lanes = __ballot_sync(0xffffffffu, c < chunks);
      if (c < chunks) work.template run<N>(grid.chunk_position(c), lanes);
    }
  } else {
    for (std::size_t c = first; c < chunks; c += step) work.template run<N>(grid.chunk_position(c), 0u);
  }
  const std::size_t edges = grid.edges();
  for (std::size_t e = first; e < edges; e += step) work.one(grid.edge_position(e));
}

// The element walk: work.one(position) for every element, one per thread (neighbouring threads,
// neighbouring elements: still coalesced). The fallback for columns that cannot all be read in
// chunks at the same element; each element is then read with the widest access its own
// alignment allows. A kernel of its own, so that no chunk code is compiled into it.
template <class Work>
__global__ void __launch_bounds__(256) element_walk_kernel(chunk_grid<1> grid, Work work) {
  const std::size_t step = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t edges = grid.edges();
  for (std::size_t e = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; e < edges; e += step)
    work.one(grid.edge_position(e));
}

inline constexpr unsigned chunk_walk_threads = 256;

template <unsigned N, class Work>
void launch_chunk_walk(const chunk_grid<N>& grid, const Work& work, cudaStream_t stream, const char* what) {
  if (grid.rows == 0 || grid.cols == 0) return;
  throw_if_earlier_error(what);
  constexpr unsigned threads = chunk_walk_threads;
  const std::size_t chunks = grid.chunks(), edges = grid.edges();
  const std::size_t wanted = ((chunks > edges ? chunks : edges) + threads - 1) / threads;
  chunk_walk_kernel<N, Work><<<grid_for_all(wanted), threads, 0, stream>>>(grid, work);
  throw_if_launch_failed(what);
}

template <class Work>
void launch_element_walk(std::size_t rows, std::size_t cols, const Work& work, cudaStream_t stream, const char* what) {
  if (rows == 0 || cols == 0) return;
  throw_if_earlier_error(what);
  const chunk_grid<1> grid{rows, cols, cols};  // every element an edge: no chunks
  constexpr unsigned threads = chunk_walk_threads;
  element_walk_kernel<Work><<<grid_for_all((grid.edges() + threads - 1) / threads), threads, 0, stream>>>(grid, work);
  throw_if_launch_failed(what);
}

// --- the two kinds of columns ------------------------------------------------------------------

// Host side: the head (in elements, < N) that aligns a chunk of N values of F at `address`, or N
// when no head does (the column cannot be read in chunks of N).
template <class F, unsigned N>
std::size_t aligning_head(const void* address) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  for (unsigned h = 0; h < N; ++h)
    if ((a + h * sizeof(F)) % chunk_alignment<F, N> == 0) return h;
  return N;
}

// Host side: can chunks of N values of F start `head` elements into `address`, and in every
// row, `row_bytes` apart?
template <class F, unsigned N>
bool chunks_aligned(const void* address, std::size_t head, std::size_t rows, std::size_t row_bytes) {
  constexpr std::size_t alignment = chunk_alignment<F, N>;
  const auto a = reinterpret_cast<std::uintptr_t>(address) + head * sizeof(F);
  return a % alignment == 0 && (rows <= 1 || row_bytes % alignment == 0);
}

// --- the operations ------------------------------------------------------------------------------

// f on the element(s) of one position: f(element) for the columns of one view, f(element of each
// input...) for the columns of coalesce::inputs (zip_columns).
template <class Columns, class = void>
struct spreads_arguments : std::false_type {};
template <class Columns>
struct spreads_arguments<Columns, std::enable_if_t<Columns::spreads_arguments>> : std::true_type {};
template <class Columns, class F, class V>
COALESCE_DEVICE COALESCE_FORCEINLINE decltype(auto) call_on_element(const F& f, const V& v) {
  if constexpr (spreads_arguments<Columns>::value) {
    return Columns::call(f, v);
  } else {
    return f(Columns::element(v));
  }
}

// Columns whose element f gets with tracked fields (a soa_view's: Columns::tracked_element), so
// that the columns f overwrites are stored without being loaded.
template <class Columns, class = void>
struct tracks_fields : std::false_type {};
template <class Columns>
struct tracks_fields<Columns, std::void_t<typename Columns::tracked_element>> : std::true_type {};
template <class Columns, bool Tracked = tracks_fields<Columns>::value>
struct walk_element {
  using type = decltype(Columns::element(std::declval<typename Columns::value_type&>()));
};
template <class Columns>
struct walk_element<Columns, true> {
  using type = decltype(Columns::element(std::declval<typename Columns::tracked_element&>()));
};

// for_each: load, f on copies in registers, store what changed.
template <class Columns, class F>
struct update_in_place {
  Columns columns;
  F f;
  using value_type = typename Columns::value_type;
  using element_type = typename walk_element<Columns>::type;
  template <unsigned N>
  static constexpr bool warp_cooperative = Columns::template warp_staged<N>;
  static constexpr bool keeps_padding = Columns::keeps_padding;

  // Chunks and single elements alike: f runs on a copy in registers (what it is handed refers to
  // that copy, never to memory), and what f changed is stored after it returns.
  template <unsigned N>
  COALESCE_DEVICE COALESCE_FORCEINLINE void run(grid_position at, unsigned lanes) const {
    if constexpr (takes_element<F, element_type>()) {
      if constexpr (keeps_padding) {
        constexpr std::size_t alignment = chunk_alignment<value_type, N>;
        auto bytes = columns.template load_bytes<N, alignment>(at);
        const bool changed = update_image<value_type, N>(bytes, [&](unsigned k, value_type& v) {
          if (columns.live(at, k)) f(Columns::element(v));
        });
        if (changed) columns.template store_bytes<N, alignment>(at, bytes);
      } else if constexpr (tracks_fields<Columns>::value) {
        value_type before[N], after[N];
        bool overwritten[N][Columns::fields];
        columns.template load<N, false>(at, before, lanes);
#pragma unroll
        for (unsigned k = 0; k < N; ++k) {
          typename Columns::tracked_element element(before[k]);
          if (columns.live(at, k)) f(Columns::element(element));
          element.give(after[k], overwritten[k]);
        }
        columns.template store_changed<N>(at, before, after, overwritten, lanes);
      } else {
        value_type before[N], after[N];
        columns.template load<N, false>(at, before, lanes);
        std::memcpy(after, before, sizeof(before));
#pragma unroll
        for (unsigned k = 0; k < N; ++k)
          if (columns.live(at, k)) f(Columns::element(after[k]));
        columns.template store_changed<N>(at, before, after, lanes);
      }
    }
  }
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_DEVICE COALESCE_FORCEINLINE void one(grid_position p) const {
    if constexpr (takes_element<F, element_type>()) {
      if (!columns.live(p, 0)) return;
      if constexpr (keeps_padding) {
        constexpr std::size_t alignment = alignof(value_type);
        auto bytes = columns.template load_bytes<1, alignment>(p);
        if (update_image<value_type, 1>(bytes, [&](unsigned, value_type& v) { f(Columns::element(v)); }))
          columns.template store_bytes<1, alignment>(p, bytes);
      } else if constexpr (tracks_fields<Columns>::value) {
        value_type before, after;
        bool overwritten[Columns::fields];
        columns.load_one(p, before);
        typename Columns::tracked_element element(before);
        f(Columns::element(element));
        element.give(after, overwritten);
        columns.store_one_changed(p, before, after, overwritten);
      } else {
        value_type before, after;
        columns.load_one(p, before);
        std::memcpy(&after, &before, sizeof(before));
        f(Columns::element(after));
        columns.store_one_changed(p, before, after);
      }
    }
  }
};

// transform: load the input (through the non-coherent path when ReadOnly), store f of each.
template <class In, class Out, class F, bool ReadOnly>
struct map_columns {
  In in;
  Out out;
  F f;

  // A chunk wholly in owned padding is loaded (the walk reads whole lines) but never stored: a
  // row copy of 1000 floats in 4096-byte rows that stored it ran at 0.973 of the hand-written
  // kernel that does not, on an NVIDIA H200 (2.4% more bytes written).
  template <unsigned N>
  static constexpr bool warp_cooperative = In::template warp_staged<N> || Out::template warp_staged<N>;

  template <unsigned N>
  COALESCE_DEVICE COALESCE_FORCEINLINE void run(grid_position at, unsigned lanes) const {
    typename In::value_type x[N];
    typename Out::value_type y[N];
    in.template load<N, ReadOnly>(at, x, lanes);
    if (!in.live(at, 0)) {
      keep_loaded(x);
      return;
    }
#pragma unroll
    for (unsigned k = 0; k < N; ++k) {
      if (in.live(at, k)) {
        y[k] = call_on_element<In>(f, static_cast<const typename In::value_type&>(x[k]));
      } else {
        std::memset(&y[k], 0, sizeof y[k]);  // owned padding keeps its zero bytes
      }
    }
    out.template store<N>(at, y, lanes);
  }
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_DEVICE COALESCE_FORCEINLINE void one(grid_position p) const {
    if (!in.live(p, 0)) return;
    typename In::value_type x;
    in.load_one(p, x);
    out.store_one(p, call_on_element<In>(f, static_cast<const typename In::value_type&>(x)));
  }
};

// Host side: how the memory of `a` meets that of `b` over a rows x cols walk: not at all; only as
// the very same ranges (an input that is the output, or one of its columns: in place, each
// element read before it is written by the same thread); or otherwise, where what an element
// reads would depend on the order the threads run in. An input that meets the output cannot take
// the non-coherent path: the kernel writes it.
enum class overlap { none, in_place, partial };
template <class A, class B>
overlap columns_overlap(const A& a, const B& b, std::size_t rows, std::size_t cols) {
  overlap found = overlap::none;
  a.visit_ranges(rows, cols, [&](const void* a_first, const void* a_last) {
    b.visit_ranges(rows, cols, [&](const void* b_first, const void* b_last) {
      const auto x = reinterpret_cast<std::uintptr_t>(a_first), x_end = reinterpret_cast<std::uintptr_t>(a_last);
      const auto y = reinterpret_cast<std::uintptr_t>(b_first), y_end = reinterpret_cast<std::uintptr_t>(b_last);
      if (x < y_end && y < x_end) {
        const bool same = x == y && x_end == y_end;
        if (!same) found = overlap::partial;
        else if (found == overlap::none) found = overlap::in_place;
      }
    });
  });
  return found;
}

}  // namespace coalesce::detail
