// coalesce::detail: deposit's adds into a float matrix for particles in no useful order, two at a
// time where they can be. Such adds reach L2 one atomic each, and L2's atomic units are what the
// deposit waits on; an add into (r, c) followed, in the same particle, by one into (r, c + 1)
// goes out as one float2 atomic where the pair is 8-byte aligned (sm_90: one request at L2 for
// two adds). Cloud-in-cell's four adds, two rows of two, are two such pairs where the column is
// even. Only float2: a float4 holding a pair would add -0.0 to its two other elements, and L2's
// float atomics flush subnormals, so an element the particle never touched could change. Users
// never include this header.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/deposit_stage.hpp>
#include <coalesce/detail/grid_atomics.hpp>
#include <coalesce/detail/pitched_view.hpp>
#include <coalesce/soa_view.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace coalesce::detail {

#if defined(__CUDACC__)

// Whether a grid of G pairs its adds: float, on sm_90 and later (float2 atomics in global memory).
template <class G>
COALESCE_DEVICE constexpr bool pairs_adds() {
#  if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return std::is_same_v<G, float>;
#  else
  return false;
#  endif
}

// The add a thread holds back, waiting to see whether the next one is its neighbour.
template <class G>
struct held_add {
  G* at;
  G value;
  bool held;
};

// f's accumulator: add(r, c, value) into `grid`, each add held until the next shows whether the
// two go out together. The thread calls flush() after each particle, so a pair is one particle's.
template <class G>
struct pairing_accumulator {
  pitched_view<G, device_space> grid;
  held_add<G>* hold;  // the thread's, in registers once inlined

  COALESCE_DEVICE COALESCE_FORCEINLINE void add(std::size_t r, std::size_t c, G value) const {
    COALESCE_ASSERT(r < grid.rows() && c < grid.cols(), "coalesce::deposit: add(r, c) outside the grid");
    G* const p = &grid(r, c);
    if constexpr (pairs_adds<G>()) {
      // For adds of fixed offsets (cloud-in-cell's c, then c + 1), the compiler sees that the two
      // points are neighbours: what is left to test is the alignment.
      if (hold->held && p == hold->at + 1 && (reinterpret_cast<std::uintptr_t>(hold->at) & 7u) == 0) {
        atomicAdd(reinterpret_cast<float2*>(hold->at), float2{hold->value, value});
        hold->held = false;
        return;
      }
      flush();
      *hold = held_add<G>{p, value, true};
    } else {
      atomic_add_value(p, value);
    }
  }
  // The add held back, if any, alone.
  COALESCE_DEVICE COALESCE_FORCEINLINE void flush() const {
    if (hold->held) {
      atomic_add_value(hold->at, hold->value);
      hold->held = false;
    }
  }
};

// deposit_chunk_with (detail/deposit_stage.hpp) for the grid's accumulator `global`, but with the
// adds of each particle into `grid` paired where they can be.
template <class T, class G, class Global, class F>
__device__ void deposit_chunk_paired(soa_view<const T, device_space> particles, std::size_t start, unsigned chunk,
                                     pitched_view<G, device_space> grid, const Global& global, const F& f) {
  if constexpr (pairs_adds<G>()) {
    held_add<G> hold{nullptr, G{}, false};
    const pairing_accumulator<G> acc{grid, &hold};
    for (unsigned k = 0; k < chunk; k += deposit_threads) {
      const std::size_t i = start + k + threadIdx.x;
      if (i < particles.size()) {
        f(particles[i], acc);
        acc.flush();
      }
    }
  } else {
    deposit_chunk_with(particles, start, chunk, global, f);
  }
}

#endif  // __CUDACC__

}  // namespace coalesce::detail
