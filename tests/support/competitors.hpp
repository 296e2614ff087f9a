// The competitors coalesce is judged against, shared by the device tests and the benchmark so that
// both measure the same code: for each piece of work, what a user writes instead - one element per
// thread, the fastest hand-written kernel we know (one 16-byte chunk per thread, a block per 256
// chunks, __restrict__ so that read-only columns take the non-coherent path), Thrust with
// par_nosync (no stream synchronization inside the timed window) and CUB through its stream APIs.
// Compiled once (competitors.cu, the static library coalesce_competitors).
//
// Each function returns the competitors of one piece of work on the given memory; every launch
// takes the stream to run on and only enqueues work. Kernels that move float4s need 16-byte
// aligned columns and a multiple of 4 elements (what soa_vector and device_buffer give); the
// functions check and throw std::invalid_argument otherwise.
#pragma once

#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/testing/report.hpp>

#include <cuda_runtime_api.h>

#include "particles.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace coalesce_test {

// One implementation of a piece of work: its name, what it is to the comparison, and how to
// enqueue it on a stream. The benchmark also gives coalesce's rows a target and a note.
struct candidate {
  std::string name;
  coalesce::testing::row_role role = coalesce::testing::row_role::competitor;
  std::function<void(cudaStream_t)> launch;
  std::optional<coalesce::testing::row_target> target = std::nullopt;
  std::string note = {};
};

// A group's candidates: `list`, then `extra`.
inline std::vector<candidate> operator+(std::vector<candidate> list, std::vector<candidate> extra) {
  for (auto& c : extra) list.push_back(std::move(c));
  return list;
}

namespace competitors {

// The particle update: x += vx dt, y += vy dt, z += vz dt on six float columns.
struct particle_columns {
  float *x, *y, *z;
  const float *vx, *vy, *vz;
  std::size_t n;
};
std::vector<candidate> particle_update(const particle_columns& p, float dt);
// The same update on an array of structs, one per thread: the layout SoA replaces (context).
candidate particle_update_on_structs(Particle* p, std::size_t n, float dt);

// The update of one Particle, for host references and for_each over Particle*.
struct drift_struct {
  float dt;
  __host__ __device__ void operator()(Particle& p) const {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
};

// One float column, x -> 0.25 - x. Every launch changes every value (a map that converged would
// let coalesce skip its stores after a few launches and flatter it), and host and device round it
// the same way.
struct reflect {
  __host__ __device__ float operator()(float x) const { return 0.25f - x; }
};
std::vector<candidate> column_in_place(float* x, std::size_t n);
std::vector<candidate> column_into_another(const float* x, float* y, std::size_t n);
// cub::DeviceTransform of x in place, for the same floats in another layout (context).
candidate column_in_place_with_cub(float* x, std::size_t n, std::string name);

// Eight mixed columns (the Mixed of mixed.hpp): a += e * (c & 7), b = f * d - b, g += h. All eight
// are read and a, b and g written; no column converges, so every launch stores all three.
struct mixed_columns {
  float* a;
  double* b;
  const std::int32_t* c;
  const std::int16_t* d;
  const float* e;
  const double* f;
  std::int32_t* g;
  const std::int16_t* h;
  std::size_t n;
};
std::vector<candidate> mixed_update(const mixed_columns& m);

// x -> 0.25 - x on every element of `m`, a whole pitched_matrix view (it owns its padding) whose
// rows are whole float4s.
std::vector<candidate> pitched_in_place(coalesce::pitched_view<float> m);

// Copying a whole pitched matrix into another of the same shape and pitch.
std::vector<candidate> pitched_copy(coalesce::pitched_view<const float> in, coalesce::pitched_view<float> out);

// The particle update on an array of 24-byte structs, in place; n a multiple of 4.
std::vector<candidate> structs_in_place(Particle* p, std::size_t n, float dt);

// Conversion between an array of Particles and six columns.
struct writable_particle_columns {
  float *x, *y, *z, *vx, *vy, *vz;
};
struct readable_particle_columns {
  const float *x, *y, *z, *vx, *vy, *vz;
  std::size_t n;
};
std::vector<candidate> aos_to_soa(const Particle* in, writable_particle_columns out, std::size_t n);
std::vector<candidate> soa_to_aos(const readable_particle_columns& in, Particle* out);

// out[i] = 2 x[i]: reading one float column of a soa_view.
std::vector<candidate> column_twice(const float* x, float* out, std::size_t n);

// A stencil of stencils.hpp on a pitched matrix of floats, reads beyond the edge clamped (what
// coalesce::clamp does), written by hand four ways:
//   - a shared-memory tile: 128 x 32 outputs per block of 128 x 2 threads, the tile and its halo
//     filled with float4 loads where a whole float4 is inside (scalars for the halo columns),
//     each thread computing one column of 16 outputs from conflict-free shared reads;
//   - stencil_float4_chunks: one float4 of outputs per thread, a block per 256 of them, 2R + 1
//     float4 rows and the 2R scalars beside each loaded read-only (the kernel of
//     tests/device/pitched_matrix.cu, for any shape and the clamp border);
//   - stencil_float4_bands: a float4 of outputs in each of K rows per thread, in blocks 64 x 4
//     (K = 2) or 32 x 8 (K = 4) threads, so that halo rows are shared in registers and L1;
//   - one element per thread (128 x 4 blocks), each neighbour read read-only.
// All take __restrict__ rows through the read-only path. `in` and `out` have the same shape,
// 16-byte aligned rows and a multiple of 4 columns (checked; std::invalid_argument otherwise).
enum class stencil_shape { five_point, nine_point, thirteen_point };
std::vector<candidate> stencil_clamped(stencil_shape shape, coalesce::pitched_view<const float> in,
                                       coalesce::pitched_view<float> out);

// The volume stencils of stencils.hpp (7-point, 25-point star) on a pitched volume of floats,
// clamped, by hand: a float4 of outputs in each of K planes per thread (K = 2 for radius 1, else
// 1) in 64 x 4 blocks; the 2.5D scheme, each thread walking z with the centre column in a
// register queue (star shapes); and one element per thread. One shape and pitch, widths % 4 == 0.
enum class volume_stencil_shape { seven_point, twenty_five_point };
std::vector<candidate> volume_stencil_clamped(volume_stencil_shape shape, coalesce::pitched_volume_view<const float> in,
                                              coalesce::pitched_volume_view<float> out);

}  // namespace competitors
}  // namespace coalesce_test
