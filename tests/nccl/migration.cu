// coalesce::migrate and particle_migration.
// On one GPU:
// - the local half, for a rank of four: every particle bound elsewhere is in the departures,
//   grouped by destination rank in index order, with the counts per rank; the vector keeps
//   exactly the others;
// - a single rank keeps every particle;
// - a destination outside the communicator throws, naming the rank, and moves nothing;
// - the local half's time on 32 M particles is printed (not asserted).
// On two GPUs of one process (skipped with fewer): particles drift across the split at x = 0, and
// after the four steps of particle_migration each rank holds exactly the particles of its half,
// the count and every particle conserved; migrate for several GPUs does the same, and when the
// second GPU's particles hold a bad destination, the first GPU, already packed, loses none.
#include <coalesce/migration.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"
#include "nccl_ranks.hpp"
#include "particles.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace ct = coalesce::testing;
using coalesce_test::communicators;
using coalesce_test::random_particles;
using coalesce_test::single_rank;

namespace {

// The rank owning x in [-1, 1) split into `ranks` equal slabs.
struct slab_of_x {
  int ranks;
  template <class P>
  __host__ __device__ int operator()(const P& p) const {
    const float x = p.x;
    const int r = int((x + 1.0f) * 0.5f * float(ranks));
    return r < 0 ? 0 : r >= ranks ? ranks - 1 : r;
  }
};

struct always {
  int rank;
  template <class P>
  __host__ __device__ int operator()(const P&) const {
    return rank;
  }
};

// Particles compared as whole values, for sorting and set equality on the host.
auto as_tuple(const Particle& p) { return std::make_tuple(p.x, p.y, p.z, p.vx, p.vy, p.vz); }
bool before(const Particle& a, const Particle& b) { return as_tuple(a) < as_tuple(b); }
std::vector<Particle> sorted(std::vector<Particle> v) {
  std::sort(v.begin(), v.end(), before);
  return v;
}
bool same_particles(const std::vector<Particle>& a, const std::vector<Particle>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), coalesce_test::same);
}

}  // namespace

TEST_CASE("a migration's local half groups the departures by destination and keeps exactly the others") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  constexpr int ranks = 4, self = 1;
  for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), std::size_t(100003)}) {
    INFO(n << " particles");
    const auto particles = random_particles(n);
    coalesce::soa_vector<Particle> v(particles);
    coalesce::soa_vector<Particle> departures;
    std::vector<std::size_t> sent;
    coalesce::pool_resource pool(v.stream());
    coalesce::detail::owned_bytes<coalesce::pool_resource> counts(pool, ranks * sizeof(unsigned long long), 256);
    coalesce::detail::pack_departures<std::uint32_t>(v, slab_of_x{ranks}, self, ranks, departures, sent,
                                                     static_cast<unsigned long long*>(counts.get()));

    // The host's model: the departures in index order within each destination, the rest kept.
    std::array<std::vector<Particle>, ranks> bound;
    std::vector<Particle> kept;
    for (const Particle& p : particles) {
      const int r = slab_of_x{ranks}(p);
      (r == self ? kept : bound[std::size_t(r)]).push_back(p);
    }
    std::vector<Particle> expected_departures;
    for (int r = 0; r < ranks; ++r) {
      CHECK(sent[std::size_t(r)] == bound[std::size_t(r)].size());
      expected_departures.insert(expected_departures.end(), bound[std::size_t(r)].begin(), bound[std::size_t(r)].end());
    }
    CHECK(same_particles(departures.to_vector(), expected_departures));
    REQUIRE(v.size() == kept.size());
    CHECK(same_particles(sorted(v.to_vector()), sorted(kept)));  // compacted: the order of the kept ones is not kept
  }
}

// Not a target: what the local half costs, for docs/multi-gpu.md. 32 M particles, a tenth leaving
// for another rank, timed with events (median of 7) beside one pass that reads every column once.
TEST_CASE("a migration's local half on 32 M particles, a tenth leaving: its time, printed") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  if (ct::small_problems()) {
    coalesce_test::record_unmeasured();
    return;
  }
  const std::size_t n = std::size_t(32) << 20;
  const coalesce::soa_vector<Particle> pristine(random_particles(n));
  coalesce::soa_vector<Particle> v(n), departures;
  std::vector<std::size_t> sent;
  coalesce::pool_resource pool(v.stream());
  coalesce::detail::owned_bytes<coalesce::pool_resource> counts(pool, 2 * sizeof(unsigned long long), 256);
  cudaEvent_t begin, end;
  COALESCE_CUDA_CHECK(cudaEventCreate(&begin));
  COALESCE_CUDA_CHECK(cudaEventCreate(&end));
  std::vector<float> local, restore;
  for (int round = 0; round < 7; ++round) {
    v.resize_for_overwrite(n);
    COALESCE_CUDA_CHECK(cudaEventRecord(begin, v.stream()));
    v.assign(pristine);  // one read and one write of every column: the reference pass
    COALESCE_CUDA_CHECK(cudaEventRecord(end, v.stream()));
    COALESCE_CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0;
    COALESCE_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    restore.push_back(ms);
    COALESCE_CUDA_CHECK(cudaEventRecord(begin, v.stream()));
    coalesce::detail::pack_departures<std::uint32_t>(v, coalesce_test::x_below{-0.8f}, 0, 2, departures, sent,
                                                     static_cast<unsigned long long*>(counts.get()));
    COALESCE_CUDA_CHECK(cudaEventRecord(end, v.stream()));
    COALESCE_CUDA_CHECK(cudaEventSynchronize(end));
    COALESCE_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    local.push_back(ms);
  }
  COALESCE_CUDA_CHECK(cudaEventDestroy(begin));
  COALESCE_CUDA_CHECK(cudaEventDestroy(end));
  std::sort(local.begin(), local.end());
  std::sort(restore.begin(), restore.end());
  const double departed_bytes = double(departures.size()) * sizeof(Particle);
  std::printf(
      "\nmigration's local half, %zu particles, %zu leaving (%.1f MB): %.3f ms; copying every column once: %.3f ms\n",
      n, departures.size(), departed_bytes / 1e6, local[3], restore[3]);
  CHECK(departures.size() == sent[1]);
  CHECK(v.size() == n - departures.size());
}

TEST_CASE("migrate on a single rank keeps every particle where it is") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  single_rank nccl;
  const auto particles = random_particles(5000);
  coalesce::soa_vector<Particle> v(particles);
  const auto moved = coalesce::migrate(v, always{0}, nccl.comm);
  COALESCE_CUDA_CHECK(cudaStreamSynchronize(v.stream()));
  CHECK(moved.departed == 0);
  CHECK(moved.arrived == 0);
  CHECK(same_particles(v.to_vector(), particles));
}

TEST_CASE("migrate refuses a destination outside the communicator, naming it, and moves nothing") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  single_rank nccl;
  const auto particles = random_particles(3000);
  coalesce::soa_vector<Particle> v(particles);
  try {
    coalesce::migrate(v, always{3}, nccl.comm);
    FAIL("no exception for rank 3 of a communicator of 1");
  } catch (const std::out_of_range& e) {
    const std::string message = e.what();
    CHECK(message.find("rank 3") != std::string::npos);
    CHECK(message.find("3000 element(s)") != std::string::npos);
  }
  CHECK(same_particles(v.to_vector(), particles));
  REQUIRE(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("particle_migration between two GPUs of one process: each rank ends with the particles of its half") {
  COALESCE_REQUIRE_TWO_GPUS();
  constexpr int ranks = coalesce_test::two_ranks;
  communicators nccl;
  // Rank r starts with particles of its own half, then they drift: x += vx / 2 moves about a
  // quarter of each half across the split at x = 0 (and some out of [-1, 1), which the slabs clamp).
  std::array<std::vector<Particle>, ranks> start;
  std::vector<Particle> everyone;
  const auto all = random_particles(200000);
  for (const Particle& p : all) start[std::size_t(slab_of_x{ranks}(p))].push_back(p);
  std::vector<coalesce::soa_vector<Particle>> v;
  for (int r = 0; r < ranks; ++r) {
    for (Particle& p : start[std::size_t(r)]) {
      p.x += 0.5f * p.vx;
      everyone.push_back(p);
    }
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    v.emplace_back(start[std::size_t(r)]);
  }

  std::vector<coalesce::particle_migration<Particle>> migrations;
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    migrations.emplace_back(v[std::size_t(r)], slab_of_x{ranks}, nccl.comm[std::size_t(r)]);
  }
  coalesce::throw_on_nccl_error(ncclGroupStart(), "ncclGroupStart");
  for (auto& m : migrations) m.post_counts();
  coalesce::throw_on_nccl_error(ncclGroupEnd(), "ncclGroupEnd");
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    migrations[std::size_t(r)].receive_counts();
  }
  coalesce::throw_on_nccl_error(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    migrations[std::size_t(r)].post_particles();
  }
  coalesce::throw_on_nccl_error(ncclGroupEnd(), "ncclGroupEnd");

  std::size_t total = 0;
  std::vector<Particle> gathered;
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    const auto here = v[std::size_t(r)].to_vector();  // waits for the stream, so for the messages
    INFO("rank " << r << ": " << migrations[std::size_t(r)].departed() << " left, "
                 << migrations[std::size_t(r)].arrived() << " arrived");
    CHECK(migrations[std::size_t(r)].departed() > 0);
    CHECK(migrations[std::size_t(r)].arrived() == migrations[std::size_t(1 - r)].departed());
    const auto elsewhere =
        std::count_if(here.begin(), here.end(), [&](const Particle& p) { return slab_of_x{ranks}(p) != r; });
    CHECK(elsewhere == 0);
    total += here.size();
    gathered.insert(gathered.end(), here.begin(), here.end());
  }
  CHECK(total == all.size());
  CHECK(same_particles(sorted(gathered), sorted(everyone)));
}

namespace {

// The slabs of x, except that a particle beyond x = 5 asks for rank 9, which a communicator of
// two does not have.
struct slab_or_nowhere {
  int ranks;
  template <class P>
  __host__ __device__ int operator()(const P& p) const {
    const float x = p.x;
    return x > 5.0f ? 9 : slab_of_x{ranks}(p);
  }
};

}  // namespace

TEST_CASE(
    "migrate for a process with two GPUs: a bad destination on the second loses no particle, then every rank gets its half") {
  COALESCE_REQUIRE_TWO_GPUS();
  constexpr int ranks = coalesce_test::two_ranks;
  communicators nccl;
  const std::vector<ncclComm_t> comms(nccl.comm.begin(), nccl.comm.end());
  const std::vector<int> devices{0, 1};
  // Each rank's own half, drifted as in the case above; one particle of rank 1 bound nowhere.
  std::array<std::vector<Particle>, ranks> start;
  for (Particle p : random_particles(100000)) {
    const int r = slab_of_x{ranks}(p);
    p.x += 0.5f * p.vx;
    start[std::size_t(r)].push_back(p);
  }
  start[1].back().x = 6.0f;
  std::vector<coalesce::soa_vector<Particle>> v;
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    v.emplace_back(start[std::size_t(r)]);
  }
  COALESCE_CUDA_CHECK(cudaSetDevice(0));
  // Rank 0 packs its departures before rank 1 finds the bad one: rank 0 must put them back.
  CHECK_THROWS_AS(coalesce::migrate(v, slab_or_nowhere{ranks}, comms, devices), std::out_of_range);
  int current = -1;
  COALESCE_CUDA_CHECK(cudaGetDevice(&current));
  CHECK(current == 0);
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    INFO("rank " << r << " after the refused migration");
    CHECK(same_particles(sorted(v[std::size_t(r)].to_vector()), sorted(start[std::size_t(r)])));
  }

  // The same particles with the bad one brought back into the domain.
  start[1].back().x = 0.25f;
  COALESCE_CUDA_CHECK(cudaSetDevice(1));
  v[1] = coalesce::soa_vector<Particle>(start[1]);
  const auto counts = coalesce::migrate(v, slab_of_x{ranks}, comms, devices);
  std::vector<Particle> everyone, gathered;
  for (int r = 0; r < ranks; ++r) {
    everyone.insert(everyone.end(), start[std::size_t(r)].begin(), start[std::size_t(r)].end());
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    const auto here = v[std::size_t(r)].to_vector();
    INFO("rank " << r << ": " << counts[std::size_t(r)].departed << " left, " << counts[std::size_t(r)].arrived
                 << " arrived");
    CHECK(counts[std::size_t(r)].departed > 0);
    CHECK(counts[std::size_t(r)].arrived == counts[std::size_t(1 - r)].departed);
    CHECK(std::count_if(here.begin(), here.end(), [&](const Particle& p) { return slab_of_x{ranks}(p) != r; }) == 0);
    gathered.insert(gathered.end(), here.begin(), here.end());
  }
  CHECK(same_particles(sorted(gathered), sorted(everyone)));
}

namespace {
// A launch that fails at once (1025 threads per block): an error the program leaves pending.
__global__ void never_runs() {}
}  // namespace

// [no-sanitizer]: the deliberate bad launch is what compute-sanitizer reports.
TEST_CASE("migrate made while the program's error is pending throws it as an earlier call's and moves nothing",
          "[no-sanitizer]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  single_rank nccl;
  const auto particles = random_particles(3000);
  coalesce::soa_vector<Particle> v(particles);
  never_runs<<<1, 1025>>>();
  const cudaError_t users = cudaPeekAtLastError();
  REQUIRE(users != cudaSuccess);  // cudaErrorInvalidValue with CUDA 13.0 on an H200
  try {
    coalesce::migrate(v, always{0}, nccl.comm);
    FAIL("no exception");
  } catch (const coalesce::cuda_error& e) {
    CHECK(e.code() == users);
    CHECK(std::string(e.what()).find("an earlier CUDA call") != std::string::npos);
  }
  CHECK(cudaGetLastError() == users);  // still the program's to collect
  CHECK(same_particles(v.to_vector(), particles));
}

TEST_CASE("migrate refuses while its vector's stream is being captured, and the capture ends cleanly") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  single_rank nccl;
  cudaStream_t stream = nullptr;
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const auto particles = random_particles(3000);
  {
    coalesce::soa_vector<Particle> v(particles, coalesce::pool_resource(stream));
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(stream));
    COALESCE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    std::string message;
    try {
      coalesce::migrate(v, always{0}, nccl.comm);
    } catch (const std::logic_error& e) {
      message = e.what();
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    CHECK(message.rfind("coalesce::migrate: ", 0) == 0);
    CHECK(message.find("captured") != std::string::npos);
    CHECK(ended == cudaSuccess);
    CHECK(cudaPeekAtLastError() == cudaSuccess);
    CHECK(same_particles(v.to_vector(), particles));
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(stream));
}
