// coalesce: particle migration between GPUs over NCCL. Each rank holds the particles of its part
// of the domain in a device soa_vector; after they move, a particle's new owner is
// destination(element), and migrate sends every particle whose owner changed to that rank and
// receives the ones that came to this one:
//
//   const auto moved = coalesce::migrate(particles, [=] __device__(auto p) { return rank_of(p.x); }, comm);
//
// What moves is only the particles that leave and arrive, never the ones that stay:
// - one pass over the vector calls destination once per particle, appends each that leaves to a
//   list (its destination and index as one key) and counts the departures for each rank;
// - the list, sorted (a radix sort of the leaving ones only: by destination, then index), gathers
//   every column into one buffer, so each rank's particles are one run of each column: one
//   ncclSend per column and destination, never one per particle;
// - the holes they leave below the new size are filled from the particles that stay above it
//   (destination is called again for those): as many moves as holes. The result is the same on
//   every run, but the particles that stay do not keep their order;
// - the counts go to every rank, then the columns, each as grouped ncclSend / ncclRecv, and the
//   arrivals land after the kept particles, in the order of their sources' ranks.
// destination must be a pure function of the element.
//
// coalesce never creates processes or communicators (see nccl.hpp). With one process per GPU,
// migrate does everything. A process that drives several GPUs (ncclCommInitAll) must post every
// rank's messages inside one NCCL group: migrate(vectors, destination, comms, devices) does that,
// or the process runs particle_migration's four steps itself:
//
//   std::vector<coalesce::particle_migration<Particle>> m;             // one per GPU, made with
//   for (int r = 0; r < n; ++r) {                                       // that GPU current
//     cudaSetDevice(devices[r]);
//     m.emplace_back(particles[r], destination, comms[r]);
//   }
//   ncclGroupStart(); for (auto& x : m) x.post_counts();      ncclGroupEnd();
//   for (auto& x : m) x.receive_counts();                    // waits for each rank's counts
//   ncclGroupStart(); for (auto& x : m) x.post_particles();   ncclGroupEnd();
//
// Each step runs on the vector's stream, with the device that was current when its
// particle_migration was made current again for the step. Needs a CUDA compiler and NCCL (CMake
// target coalesce::nccl).
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/migration.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/config.hpp>
#  include <coalesce/detail/migration_local.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/detail/reorder_plan.hpp>
#  include <coalesce/error.hpp>
#  include <coalesce/memory.hpp>
#  include <coalesce/nccl.hpp>
#  include <coalesce/reorder.hpp>
#  include <coalesce/soa.hpp>

#  include <cuda_runtime_api.h>
#  include <nccl.h>

#  include <cstddef>
#  include <cstdint>
#  include <stdexcept>
#  include <string>
#  include <type_traits>
#  include <utility>
#  include <vector>

namespace coalesce {

/// What one rank's migration moved: the particles it sent away and the ones it received.
struct migration_counts {
  std::size_t departed = 0;  ///< particles sent to other ranks
  std::size_t arrived = 0;   ///< particles received from other ranks
};

/// One rank's migration in the four steps a process that drives several GPUs must interleave
/// (see the top of this header); migrate runs them in order for a process with one GPU.
template <class T, class Resource = default_resource_t<device_space>>
class particle_migration {
 public:
  /// Classifies the particles, gathers the departures grouped by destination and compacts the ones
  /// that stay (local; waits once on the vector's stream for the counts). `particles` must outlive
  /// this object, and is not to be touched until post_particles' messages have completed on its
  /// stream. Throws std::out_of_range, having moved nothing, if destination returns a rank outside
  /// the communicator; coalesce::nccl_error or coalesce::cuda_error if a call fails.
  template <class Destination>
  particle_migration(soa_vector<T, device_space, Resource>& particles, Destination destination, ncclComm_t comm)
      : particles_(&particles), comm_(comm),
        device_((detail::throw_if_earlier_error("coalesce::migrate"), detail::current_device())),
        departures_(particles.resource()), pool_(particles.stream()) {
    detail::refuse_migration_capture(particles.stream(), "coalesce::particle_migration");
    throw_on_nccl_error(::ncclCommUserRank(comm, &rank_), "coalesce::particle_migration: ncclCommUserRank");
    throw_on_nccl_error(::ncclCommCount(comm, &ranks_), "coalesce::particle_migration: ncclCommCount");
    counts_ = detail::owned_bytes<pool_resource>(pool_, 2 * std::size_t(ranks_) * sizeof(unsigned long long),
                                                 allocation_alignment);
    // Zero, so that the entry for this rank, which nothing receives, is copied back initialized.
    throw_on_error(::cudaMemsetAsync(received_counts(), 0, std::size_t(ranks_) * sizeof(unsigned long long), stream()),
                   "coalesce::particle_migration: cudaMemsetAsync");
    if (detail::permutation_fits_32_bits(particles.size()))
      detail::pack_departures<std::uint32_t>(particles, destination, rank_, ranks_, departures_, sent_, send_counts());
    else
      detail::pack_departures<std::uint64_t>(particles, destination, rank_, ranks_, departures_, sent_, send_counts());
    kept_ = particles.size();
  }

  /// Sends this rank's count for every other rank and receives theirs (one message each way per
  /// pair of ranks), inside the caller's NCCL group if one is open.
  void post_counts() {
    const detail::current_device_guard on_device(device_);
    detail::throw_if_earlier_error("coalesce::particle_migration::post_counts");
    detail::refuse_migration_capture(stream(), "coalesce::particle_migration::post_counts");
    detail::in_nccl_group("coalesce::particle_migration::post_counts", [&] {
      for (int r = 0; r < ranks_; ++r) {
        if (r == rank_) continue;
        throw_on_nccl_error(::ncclSend(send_counts() + r, 1, ncclUint64, r, comm_, stream()),
                            "coalesce::particle_migration: ncclSend");
        throw_on_nccl_error(::ncclRecv(received_counts() + r, 1, ncclUint64, r, comm_, stream()),
                            "coalesce::particle_migration: ncclRecv");
      }
    });
  }

  /// Waits for the counts post_counts receives and makes room after the kept particles for the
  /// arrivals (the vector's first kept elements stay where they are, or move with a reallocation).
  void receive_counts() {
    const detail::current_device_guard on_device(device_);
    detail::throw_if_earlier_error("coalesce::particle_migration::receive_counts");
    detail::refuse_migration_capture(stream(), "coalesce::particle_migration::receive_counts");
    std::vector<unsigned long long> counts(std::size_t(ranks_), 0);
    throw_on_error(::cudaMemcpyAsync(counts.data(), received_counts(), counts.size() * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, stream()),
                   "coalesce::particle_migration: copying the counts");
    throw_on_error(::cudaStreamSynchronize(stream()), "coalesce::particle_migration: waiting for the counts");
    counts[std::size_t(rank_)] = 0;  // never received: nothing is sent to oneself
    received_.assign(counts.begin(), counts.end());
    arrived_ = 0;
    for (const std::size_t c : received_) arrived_ += c;
    particles_->resize_for_overwrite(kept_ + arrived_);
  }

  /// Sends each rank's departures and receives each rank's arrivals, one message per column and
  /// peer with particles to move, inside the caller's NCCL group if one is open. The messages
  /// complete on the vector's stream.
  void post_particles() {
    const detail::current_device_guard on_device(device_);
    detail::throw_if_earlier_error("coalesce::particle_migration::post_particles");
    detail::refuse_migration_capture(stream(), "coalesce::particle_migration::post_particles");
    detail::in_nccl_group("coalesce::particle_migration::post_particles", [&] {
      std::size_t send_from = 0, receive_at = kept_;
      for (int r = 0; r < ranks_; ++r) {
        const std::size_t out = sent_[std::size_t(r)], in = received_[std::size_t(r)];
        post_columns(r, out, send_from, in, receive_at, std::make_index_sequence<detail::leaf_count_v<T>>{});
        send_from += out;
        receive_at += in;
      }
    });
  }

  /// Puts the departures back after the kept particles, before any count was posted: for a
  /// migration that cannot go on (another rank of this process found a bad destination), so that
  /// no particle is lost. The particles that stayed keep their new order.
  void cancel() {
    const detail::current_device_guard on_device(device_);
    detail::refuse_migration_capture(stream(), "coalesce::particle_migration::cancel");
    const std::size_t n = departures_.size();
    if (n == 0) return;
    particles_->resize_for_overwrite(kept_ + n);
    copy_back(n, std::make_index_sequence<detail::leaf_count_v<T>>{});
    departures_.clear();
    sent_.assign(sent_.size(), 0);
    kept_ += n;
  }

  std::size_t departed() const noexcept { return departures_.size(); }  ///< particles sent away by the last step
  std::size_t arrived() const noexcept { return arrived_; }             ///< particles received by the last step
  std::size_t kept() const noexcept { return kept_; }                   ///< particles this rank kept
  /// The particles bound for each rank (the departures, grouped in rank order).
  const std::vector<std::size_t>& sent() const noexcept { return sent_; }
  /// The particles that left this rank in the last step, grouped in rank order (see sent()).
  const soa_vector<T, device_space, Resource>& departures() const noexcept { return departures_; }

 private:
  unsigned long long* send_counts() const { return static_cast<unsigned long long*>(counts_.get()); }
  unsigned long long* received_counts() const { return send_counts() + ranks_; }
  cudaStream_t stream() const { return particles_->stream(); }

  template <std::size_t... L>
  void copy_back(std::size_t n, std::index_sequence<L...>) {
    const auto from = departures_.const_view();
    const auto to = particles_->view();
    (throw_on_error(::cudaMemcpyAsync(to.template leaf_column<L>() + kept_, from.template leaf_column<L>(),
                                      n * sizeof(*from.template leaf_column<L>()), cudaMemcpyDeviceToDevice, stream()),
                    "coalesce::particle_migration::cancel: cudaMemcpyAsync"),
     ...);
  }

  template <std::size_t... L>
  void post_columns(int peer, std::size_t out, std::size_t send_from, std::size_t in, std::size_t receive_at,
                    std::index_sequence<L...>) {
    const auto from = departures_.const_view();
    const auto to = particles_->view();
    // Both sides post the columns in leaf order: NCCL pairs a peer's messages in posting order.
    if (out > 0)
      (throw_on_nccl_error(::ncclSend(from.template leaf_column<L>() + send_from,
                                      out * sizeof(*from.template leaf_column<L>()), ncclUint8, peer, comm_, stream()),
                           "coalesce::particle_migration: ncclSend"),
       ...);
    if (in > 0)
      (throw_on_nccl_error(::ncclRecv(to.template leaf_column<L>() + receive_at,
                                      in * sizeof(*to.template leaf_column<L>()), ncclUint8, peer, comm_, stream()),
                           "coalesce::particle_migration: ncclRecv"),
       ...);
  }

  soa_vector<T, device_space, Resource>* particles_;
  ncclComm_t comm_;
  int device_;  // current when made: every step makes it current again
  int rank_ = 0;
  int ranks_ = 1;
  soa_vector<T, device_space, Resource> departures_;
  pool_resource pool_;
  detail::owned_bytes<pool_resource> counts_;
  std::vector<std::size_t> sent_;
  std::vector<std::size_t> received_;
  std::size_t kept_ = 0;
  std::size_t arrived_ = 0;
};

/// Moves every particle of `particles` (a device soa_vector on this rank) whose owner changed to
/// rank destination(element) of `comm`, and appends the particles other ranks send here; the
/// particles that stay are compacted, their order not kept. destination receives what for_each's
/// f receives for a read-only element and returns an int rank. Call it on every rank of the
/// communicator, each process with its own GPU current (for several GPUs in one process, see
/// particle_migration). Waits twice on the vector's stream (for the counts leaving and arriving);
/// the particles themselves are in place when the stream reaches the end of the messages. Throws
/// std::out_of_range, having moved nothing, if destination returns a rank outside the
/// communicator; coalesce::nccl_error or coalesce::cuda_error if a call fails. The other ranks
/// then wait for this rank's counts: a program that goes on after the exception aborts the
/// communicator (ncclCommAbort), which ends their wait with an error.
template <class T, class Resource, class Destination>
migration_counts migrate(soa_vector<T, device_space, Resource>& particles, Destination destination, ncclComm_t comm) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::migrate");
  detail::refuse_migration_capture(particles.stream(), "coalesce::migrate");
  particle_migration<T, Resource> migration(particles, destination, comm);
  migration.post_counts();
  migration.receive_counts();
  migration.post_particles();
  return {migration.departed(), migration.arrived()};
}

/// The same for a process that drives several GPUs, one rank each: particles[r] lives on GPU
/// devices[r], and comms[r] is its rank (from ncclCommInitAll). Runs the four steps of every rank,
/// each with its GPU current, posting the messages of all of them in one NCCL group per step, and
/// makes the GPU that was current current again. Returns each rank's counts. Throws
/// std::invalid_argument if the three lists differ in length, and as migrate does; where one
/// rank's destination is bad, the ranks made before it put their departures back, so that no
/// vector loses a particle (those that stayed are compacted, and the departures follow them).
template <class T, class Resource, class Destination>
std::vector<migration_counts> migrate(std::vector<soa_vector<T, device_space, Resource>>& particles,
                                      Destination destination, const std::vector<ncclComm_t>& comms,
                                      const std::vector<int>& devices) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::migrate");
  if (comms.size() != particles.size() || devices.size() != particles.size())
    throw std::invalid_argument("coalesce::migrate: " + std::to_string(particles.size()) + " vectors, " +
                                std::to_string(comms.size()) + " communicators and " + std::to_string(devices.size()) +
                                " devices; give one of each per rank");
  detail::throw_if_earlier_error("coalesce::migrate");
  int current = 0;
  throw_on_error(::cudaGetDevice(&current), "coalesce::migrate: cudaGetDevice");
  struct restore_device {
    int device;
    ~restore_device() { (void)::cudaSetDevice(device); }
  } restore{current};
  const auto on = [&](std::size_t r) {
    throw_on_error(::cudaSetDevice(devices[r]), "coalesce::migrate: cudaSetDevice");
  };
  for (std::size_t r = 0; r < particles.size(); ++r)
    on(r), detail::refuse_migration_capture(particles[r].stream(), "coalesce::migrate");
  const auto each_in_one_group = [&](auto&& step) {
    detail::in_nccl_group("coalesce::migrate", [&] {
      for (std::size_t r = 0; r < particles.size(); ++r) on(r), step(r);
    });
  };
  std::vector<particle_migration<T, Resource>> migrations;
  migrations.reserve(particles.size());
  try {
    for (std::size_t r = 0; r < particles.size(); ++r)
      on(r), migrations.emplace_back(particles[r], destination, comms[r]);
  } catch (...) {
    // A bad destination on a later rank: the ranks already packed put their departures back, so
    // that nothing is lost (the rank that threw moved nothing). A failure to put them back must
    // not hide the first error.
    for (auto& m : migrations) {
      try {
        m.cancel();
      } catch (...) {
      }
    }
    throw;
  }
  each_in_one_group([&](std::size_t r) { migrations[r].post_counts(); });
  for (std::size_t r = 0; r < particles.size(); ++r) on(r), migrations[r].receive_counts();
  each_in_one_group([&](std::size_t r) { migrations[r].post_particles(); });
  std::vector<migration_counts> counts;
  for (const auto& m : migrations) counts.push_back({m.departed(), m.arrived()});
  return counts;
}

}  // namespace coalesce

#endif  // __CUDACC__
