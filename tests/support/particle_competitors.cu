// The hand-written particle kernels of particle_competitors.hpp.
#include "particle_competitors.hpp"

#include <coalesce/deposit.hpp>

#include <stdexcept>

namespace competitors {
namespace {

// One particle's cloud-in-cell adds, one atomicAdd each.
__device__ __forceinline__ void cloud_in_cell_atomics(float px, float py, float pq,
                                                      coalesce::pitched_view<float> grid) {
  const auto c = std::size_t(px), r = std::size_t(py);
  const float wx = px - float(c), wy = py - float(r);
  atomicAdd(&grid(r, c), pq * (1.0f - wx) * (1.0f - wy));
  atomicAdd(&grid(r, c + 1), pq * wx * (1.0f - wy));
  atomicAdd(&grid(r + 1, c), pq * (1.0f - wx) * wy);
  atomicAdd(&grid(r + 1, c + 1), pq * wx * wy);
}

// A plain deposit kernel, as a user writes it: one atomicAdd per contribution.
__global__ void plain_cloud_in_cell_kernel(const float* x, const float* y, const float* q, std::size_t n,
                                           coalesce::pitched_view<float> grid) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    cloud_in_cell_atomics(x[i], y[i], q[i], grid);
}

// The best hand-written deposit for this case, as far as can be written: it knows the particles
// are sorted by cell and the stencil is cloud-in-cell. A block takes chunks of 8192 particles,
// the box of a chunk (in shared memory) taken from its first and last particle. A thread reads
// four consecutive particles with one 16-byte load of each column and keeps the four sums of its
// current cell in registers: one compare a particle, and only where the cell changes do the sums
// go into the box (shared atomics). Each point of the box that received anything then goes out
// with one atomicAdd. Measured on an H200 against chunks of 2048 and 4096 and 12, 24 or 48 blocks
// an SM: 8192 and 24 were the fastest (0.093 ms for 16 M particles into 2048 x 2048 floats).
constexpr unsigned privatized_chunk = 8192, privatized_capacity = 8192;
__global__ void __launch_bounds__(256)
    privatized_cloud_in_cell_kernel(const float* x, const float* y, const float* q, std::size_t n,
                                    coalesce::pitched_view<float> grid) {
  __shared__ float box[privatized_capacity];
  for (unsigned e = threadIdx.x; e < privatized_capacity; e += 256) box[e] = 0.0f;
  __syncthreads();
  const unsigned cols = unsigned(grid.cols());
  for (std::size_t start = std::size_t(blockIdx.x) * privatized_chunk; start < n;
       start += std::size_t(gridDim.x) * privatized_chunk) {
    const std::size_t last = (start + privatized_chunk < n ? start + privatized_chunk : n) - 1;
    const unsigned first_row = unsigned(y[start]), last_row = unsigned(y[last]);
    const unsigned first_col = first_row == last_row ? unsigned(x[start]) : 0u;
    const unsigned width = (first_row == last_row ? unsigned(x[last]) + 1 : cols - 1) - first_col + 1;
    const unsigned height = last_row - first_row + 2;
    if (width * height > privatized_capacity) {  // the same in the whole block: one atomic per add
      for (unsigned k = 0; k < privatized_chunk; k += 256) {
        const std::size_t i = start + k + threadIdx.x;
        if (i < n) cloud_in_cell_atomics(x[i], y[i], q[i], grid);
      }
      continue;
    }
    unsigned cell = ~0u;  // the box point of the current cell's (r, c)
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    const auto flush = [&] {
      if (cell == ~0u) return;
      atomicAdd(box + cell, s0);
      atomicAdd(box + cell + 1, s1);
      atomicAdd(box + cell + width, s2);
      atomicAdd(box + cell + width + 1, s3);
    };
    const auto one = [&](float px, float py, float pq) {
      const unsigned c = unsigned(px), r = unsigned(py);
      const float wx = px - float(c), wy = py - float(r);
      const unsigned at = (r - first_row) * width + (c - first_col);
      if (at != cell) {
        flush();
        cell = at;
        s0 = s1 = s2 = s3 = 0.0f;
      }
      s0 += pq * (1.0f - wx) * (1.0f - wy);
      s1 += pq * wx * (1.0f - wy);
      s2 += pq * (1.0f - wx) * wy;
      s3 += pq * wx * wy;
    };
    for (unsigned g = 0; g < privatized_chunk; g += 256 * 4) {
      const std::size_t first = start + g + threadIdx.x * 4;
      if (first + 4 <= n) {  // the columns are 16-byte aligned (a soa_vector's)
        const float4 vx = __ldg(reinterpret_cast<const float4*>(x + first));
        const float4 vy = __ldg(reinterpret_cast<const float4*>(y + first));
        const float4 vq = __ldg(reinterpret_cast<const float4*>(q + first));
        one(vx.x, vy.x, vq.x);
        one(vx.y, vy.y, vq.y);
        one(vx.z, vy.z, vq.z);
        one(vx.w, vy.w, vq.w);
      } else {
        for (std::size_t i = first; i < n && i < first + 4; ++i) one(x[i], y[i], q[i]);
      }
    }
    flush();
    __syncthreads();
    for (unsigned e = threadIdx.x; e < width * height; e += 256) {
      const float sum = box[e];
      if (sum != 0.0f) {
        atomicAdd(&grid(first_row + e / width, first_col + e % width), sum);
        box[e] = 0.0f;
      }
    }
    __syncthreads();
  }
}

// The plain kernel a user writes: one thread per body, a loop over every j reading the columns.
__global__ void plain_gravity_kernel(const float* x, const float* y, const float* z, const float* m, float* ax,
                                     float* ay, float* az, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float xi = x[i], yi = y[i], zi = z[i];
  float sx = 0.0f, sy = 0.0f, sz = 0.0f;
  for (unsigned j = 0; j < n; ++j) add_gravity(x[j] - xi, y[j] - yi, z[j] - zi, m[j], sx, sy, sz);
  ax[i] = sx;
  ay[i] = sy;
  az[i] = sz;
}

// The tiled kernel of GPU Gems 3, ch. 31, at its best as far as can be written: position and mass
// as one float4 in shared memory (one 16-byte broadcast per j), the inner loop unrolled 4 times
// with no test in full tiles, and the next tile's bodies loaded into registers while this one is
// used (as for_each_pair does).
template <unsigned Threads>
__global__ void __launch_bounds__(Threads)
    tiled_gravity_kernel(const float* x, const float* y, const float* z, const float* m, float* ax, float* ay,
                         float* az, unsigned n) {
  __shared__ float4 tile[Threads];
  const unsigned t = threadIdx.x, i = blockIdx.x * Threads + t;
  const bool has_i = i < n;
  const float xi = has_i ? x[i] : 0.0f, yi = has_i ? y[i] : 0.0f, zi = has_i ? z[i] : 0.0f;
  float sx = 0.0f, sy = 0.0f, sz = 0.0f;
  float4 next = t < n ? make_float4(x[t], y[t], z[t], m[t]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (unsigned j0 = 0; j0 < n; j0 += Threads) {
    __syncthreads();
    tile[t] = next;
    __syncthreads();
    const unsigned j = j0 + Threads + t;
    if (j < n) next = make_float4(x[j], y[j], z[j], m[j]);
    if (n - j0 >= Threads) {
#pragma unroll 4
      for (unsigned k = 0; k < Threads; ++k) {
        const float4 p = tile[k];
        add_gravity(p.x - xi, p.y - yi, p.z - zi, p.w, sx, sy, sz);
      }
    } else {
      for (unsigned k = 0; k < n - j0; ++k) {
        const float4 p = tile[k];
        add_gravity(p.x - xi, p.y - yi, p.z - zi, p.w, sx, sy, sz);
      }
    }
  }
  if (has_i) {
    ax[i] = sx;
    ay[i] = sy;
    az[i] = sz;
  }
}

// The hand-written cell-list kernel: one thread per particle of the sorted order, the 27 cells
// around its own, each cell's particles read from the columns, the cutoff tested, the force
// summed in registers and written once. The best we could write without coalesce: read-only
// __restrict__ columns (the read-only path), the particle's own fields loaded once, 32-bit
// indices, and the neighbour cells in the order of the sorted particles (z, y, x), so that the
// warp's reads move through memory together.
__global__ void __launch_bounds__(128)
    cell_list_forces_kernel(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ z,
                            const float* __restrict__ m, const std::uint32_t* __restrict__ offsets,
                            coalesce::uniform_grid<3> grid, float cutoff2, std::uint32_t n, float* __restrict__ fx,
                            float* __restrict__ fy, float* __restrict__ fz) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float xi = x[i], yi = y[i], zi = z[i];
  const auto c = grid.cell_of(xi, yi, zi);
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int cz = c.z - 1; cz <= c.z + 1; ++cz) {
    if (cz < 0 || cz >= grid.nz) continue;
    for (int cy = c.y - 1; cy <= c.y + 1; ++cy) {
      if (cy < 0 || cy >= grid.ny) continue;
      for (int cx = c.x - 1; cx <= c.x + 1; ++cx) {
        if (cx < 0 || cx >= grid.nx) continue;
        const std::uint32_t cell_index =
            (std::uint32_t(cz) * grid.ny + std::uint32_t(cy)) * grid.nx + std::uint32_t(cx);
        const std::uint32_t end = offsets[cell_index + 1];
        for (std::uint32_t j = offsets[cell_index]; j < end; ++j) {
          const float dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];
          const float r2 = dx * dx + dy * dy + dz * dz;
          if (r2 < cutoff2 && j != i) {
            const float s = lj_over_r(r2, m[j]);
            ax += s * dx;
            ay += s * dy;
            az += s * dz;
          }
        }
      }
    }
  }
  fx[i] = ax;
  fy[i] = ay;
  fz[i] = az;
}

unsigned multiprocessors() {
  int device = 0, count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    throw std::runtime_error("competitors: cannot read the device's multiprocessor count");
  return unsigned(count);
}

}  // namespace

void plain_cloud_in_cell(const float* x, const float* y, const float* q, std::size_t n,
                         coalesce::pitched_view<float> grid, cudaStream_t stream) {
  plain_cloud_in_cell_kernel<<<4 * multiprocessors(), 256, 0, stream>>>(x, y, q, n, grid);
}

void privatized_cloud_in_cell(const float* x, const float* y, const float* q, std::size_t n,
                              coalesce::pitched_view<float> grid, cudaStream_t stream) {
  // Its fastest grid on an H200: 24 blocks an SM.
  privatized_cloud_in_cell_kernel<<<24 * multiprocessors(), 256, 0, stream>>>(x, y, q, n, grid);
}

void plain_gravity(const float* x, const float* y, const float* z, const float* m, float* ax, float* ay, float* az,
                   unsigned n, unsigned threads, cudaStream_t stream) {
  if (threads != 128 && threads != 256) throw std::invalid_argument("competitors::plain_gravity: 128 or 256 threads");
  plain_gravity_kernel<<<(n + threads - 1) / threads, threads, 0, stream>>>(x, y, z, m, ax, ay, az, n);
}

void tiled_gravity(const float* x, const float* y, const float* z, const float* m, float* ax, float* ay, float* az,
                   unsigned n, unsigned threads, cudaStream_t stream) {
  const unsigned blocks = (n + threads - 1) / threads;
  if (threads == 128) tiled_gravity_kernel<128><<<blocks, 128, 0, stream>>>(x, y, z, m, ax, ay, az, n);
  else if (threads == 256) tiled_gravity_kernel<256><<<blocks, 256, 0, stream>>>(x, y, z, m, ax, ay, az, n);
  else if (threads == 512) tiled_gravity_kernel<512><<<blocks, 512, 0, stream>>>(x, y, z, m, ax, ay, az, n);
  else throw std::invalid_argument("competitors::tiled_gravity: 128, 256 or 512 threads");
}

void cell_list_forces(const float* x, const float* y, const float* z, const float* m, const std::uint32_t* offsets,
                      coalesce::uniform_grid<3> grid, float cutoff2, std::uint32_t n, float* fx, float* fy, float* fz,
                      cudaStream_t stream) {
  cell_list_forces_kernel<<<(n + 127) / 128, 128, 0, stream>>>(x, y, z, m, offsets, grid, cutoff2, n, fx, fy, fz);
}

}  // namespace competitors
