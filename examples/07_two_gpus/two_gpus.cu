// Two GPUs of one process, one NCCL rank each (ncclCommInitAll):
// - a heat solve split into two blocks of rows: each Jacobi sweep first swaps the blocks' edge
//   rows into each other's halo (coalesce::exchange_row_halos, straight from pitched memory), then
//   runs coalesce::stencil on each block. The result must equal the same sweeps on one GPU.
// - tracers drifting across the split at x = 0: after each drift, coalesce::migrate, given both
//   GPUs' vectors, sends every tracer that crossed to the other GPU. The count and the sum of the
//   tracers' ids must be conserved, and each GPU must hold exactly the tracers of its half.
// Exits 77 (skipped) with fewer than two GPUs, 1 on a wrong result.
#include <coalesce/algorithm.hpp>
#include <coalesce/migration.hpp>
#include <coalesce/nccl.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/reduce.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/testing.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace ct = coalesce::testing;

struct Tracer {
  float x, y, vx, vy;
  std::uint32_t id;
};
COALESCE_FIELDS(Tracer, x, y, vx, vy, id);

namespace {

constexpr int ranks = 2;

struct jacobi {
  template <class N>
  __host__ __device__ float operator()(const N& n) const {
    return 0.25f * (n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1));
  }
};

// The GPU that owns x: 0 left of the split at x = 0, 1 right of it.
struct side_of_x {
  template <class P>
  __host__ __device__ int operator()(const P& p) const {
    return p.x < 0.0f ? 0 : 1;
  }
};

void check(cudaError_t e, const char* what) { coalesce::throw_on_error(e, what); }
void check(ncclResult_t r, const char* what) { coalesce::throw_on_nccl_error(r, what); }

// The plate on one GPU: the reference.
std::vector<float> one_gpu(const std::vector<float>& plate, std::size_t rows, std::size_t cols, int sweeps) {
  check(cudaSetDevice(0), "cudaSetDevice");
  coalesce::pitched_matrix<float> u(plate, rows, cols), next(plate, rows, cols);
  for (int s = 0; s < sweeps; ++s) {
    coalesce::stencil<1>(coalesce::interior, u, next, [] __device__(auto n) { return jacobi{}(n); });
    u.swap(next);
  }
  return u.to_vector();
}

// The plate split in two: rank 0 holds global rows 0 .. own (row 0, the hot edge, as its upper
// halo), rank 1 rows own .. rows - 1 (the cold edge as its lower halo); each block's halo row on
// the split holds the other block's edge row after an exchange.
std::vector<float> two_gpus(const std::vector<float>& plate, std::size_t rows, std::size_t cols, int sweeps,
                            const std::vector<ncclComm_t>& comm) {
  const std::size_t own = (rows - 2) / ranks;  // each block's rows, between its two halos
  std::vector<coalesce::pitched_matrix<float>> u, next;
  for (int r = 0; r < ranks; ++r) {
    check(cudaSetDevice(r), "cudaSetDevice");
    const std::vector<float> block(plate.begin() + std::ptrdiff_t(r * own * cols),
                                   plate.begin() + std::ptrdiff_t((r * own + own + 2) * cols));
    u.emplace_back(block, own + 2, cols);
    next.emplace_back(block, own + 2, cols);
  }
  const std::array<coalesce::row_neighbours, ranks> neighbours{coalesce::row_neighbours{-1, 1},
                                                               coalesce::row_neighbours{0, -1}};
  for (int s = 0; s < sweeps; ++s) {
    check(ncclGroupStart(), "ncclGroupStart");
    for (int r = 0; r < ranks; ++r) {
      check(cudaSetDevice(r), "cudaSetDevice");
      coalesce::exchange_row_halos(u[r].view(), 1, neighbours[r], comm[r], u[r].stream());
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    for (int r = 0; r < ranks; ++r) {
      check(cudaSetDevice(r), "cudaSetDevice");
      coalesce::stencil<1>(coalesce::interior, u[r], next[r], [] __device__(auto n) { return jacobi{}(n); });
      u[r].swap(next[r]);
    }
  }
  std::vector<float> result(rows * cols);
  for (int r = 0; r < ranks; ++r) {
    check(cudaSetDevice(r), "cudaSetDevice");
    const auto block = u[r].to_vector();
    // Rank 0's upper halo is the global row 0; each block's own rows are global rows 1 + r * own ...
    const std::size_t first = r == 0 ? 0 : 1, last = r == 0 ? own + 1 : own + 2;  // rows of the block to keep
    std::copy(block.begin() + std::ptrdiff_t(first * cols), block.begin() + std::ptrdiff_t(last * cols),
              result.begin() + std::ptrdiff_t((r * own + first) * cols));
  }
  return result;
}

}  // namespace

int main() {
  const std::size_t rows = 1024, cols = 1024;
  const int sweeps = 200;
  std::printf("two GPUs: %d Jacobi sweeps on a %zu x %zu plate split into two blocks of rows; tracers across x = 0\n",
              sweeps, rows, cols);
  if (auto reason = ct::gpus_unavailable_reason(ranks)) {
    std::printf("SKIPPED: %s\n", reason->c_str());
    return 77;
  }
  std::vector<ncclComm_t> comms(ranks);
  const std::vector<int> gpus{0, 1};
  check(ncclCommInitAll(comms.data(), ranks, gpus.data()), "ncclCommInitAll");
  int status = 0;

  std::vector<float> plate(rows * cols, 0.0f);
  for (std::size_t c = 0; c < cols; ++c) plate[c] = 100.0f;  // the hot edge
  const auto reference = one_gpu(plate, rows, cols, sweeps);
  const auto split = two_gpus(plate, rows, cols, sweeps, comms);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < split.size(); ++i) wrong += split[i] != reference[i];
  if (wrong != 0) {
    std::printf("MISMATCH: %zu of %zu temperatures differ from the one-GPU solve\n", wrong, split.size());
    status = 1;
  } else {
    std::printf("all %zu temperatures equal the one-GPU solve\n", split.size());
  }

  // Tracers: ids 0 .. n - 1, each starting on the GPU of its half.
  const std::uint32_t n = 1u << 20;
  const auto r = ct::random_values<float>(4 * std::size_t(n));
  std::array<std::vector<Tracer>, ranks> start;
  for (std::uint32_t i = 0; i < n; ++i) {
    const Tracer t{r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3], i};
    start[std::size_t(side_of_x{}(t))].push_back(t);
  }
  std::vector<coalesce::soa_vector<Tracer>> tracers;
  for (int g = 0; g < ranks; ++g) {
    check(cudaSetDevice(g), "cudaSetDevice");
    tracers.emplace_back(start[std::size_t(g)]);
  }
  const float dt = 0.05f;
  std::size_t crossed = 0;
  for (int step = 0; step < 20; ++step) {
    for (int g = 0; g < ranks; ++g) {
      check(cudaSetDevice(g), "cudaSetDevice");
      coalesce::for_each(
          tracers[g].view(),
          [=] __device__(auto t) {  // drift, reflected at the box's walls
            float x = t.x + dt * t.vx, vx = t.vx;
            if (x < -1.0f || x >= 1.0f) vx = -vx, x = t.x;
            t.x = x;
            t.vx = vx;
          },
          tracers[g].stream());
    }
    const auto moves = coalesce::migrate(tracers, side_of_x{}, comms, gpus);
    for (const auto& m : moves) crossed += m.departed;
  }

  std::size_t total = 0;
  unsigned long long id_sum = 0, misplaced = 0;
  for (int g = 0; g < ranks; ++g) {
    check(cudaSetDevice(g), "cudaSetDevice");
    const auto view = tracers[g].view();
    total += view.size();
    id_sum += coalesce::transform_reduce(
        view, [] __device__(auto t) { return (unsigned long long)(std::uint32_t(t.id)); }, 0ull,
        [] __device__(unsigned long long a, unsigned long long b) { return a + b; }, tracers[g].stream());
    misplaced += coalesce::transform_reduce(
        view, [=] __device__(auto t) { return side_of_x{}(t) == g ? 0ull : 1ull; }, 0ull,
        [] __device__(unsigned long long a, unsigned long long b) { return a + b; }, tracers[g].stream());
  }
  const unsigned long long expected_sum = (unsigned long long)n * (n - 1) / 2;
  std::printf(
      "tracers: %zu crossings in 20 steps; %zu tracers (of %u), id sum %llu (expected %llu), %llu on the wrong GPU\n",
      crossed, total, n, id_sum, expected_sum, misplaced);
  if (total != n || id_sum != expected_sum || misplaced != 0 || crossed == 0) status = 1;

  for (auto c : comms) (void)ncclCommDestroy(c);
  return status;
}
