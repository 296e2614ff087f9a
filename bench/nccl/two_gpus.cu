// coalesce_bench_two_gpus: coalesce's NCCL halo exchanges and particle migration on two GPUs of
// one process (one rank each, ncclCommInitAll), each against raw ncclSend / ncclRecv of the same
// bytes in the same run, and the weak scaling of a Jacobi sweep from one GPU to two.
//
//   coalesce_bench_two_gpus [--check] [output-file]
//
// Every figure is the median over rounds of the slower GPU's time (events on each GPU's stream).
// - halo exchange, 8192 x 8192 floats split in two: rows (sent from pitched memory as they are)
//   and columns (packed and unpacked), halos 1 and 4 wide; a 512^3 volume split in two along z
//   (planes as they are) and along x (packed), halo 1;
// - migration of 10% of 32 M particles of six floats on each GPU (each sends 10% to the other);
// - a Jacobi sweep of an 8192 x 8192 plate on one GPU against the same plate on each of two,
//   their halos exchanged with and without overlap (the inner rows computed while the halo rows
//   travel).
// With --check it exits 1 when a target of the issue is missed: halo exchange >= 0.8 of raw NCCL,
// migration >= 0.7 of raw NCCL, weak scaling >= 0.9 parallel efficiency. Exits 77 (skipped) with
// fewer than two GPUs.
#include <coalesce/migration.hpp>
#include <coalesce/nccl.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/stencil.hpp>
#include <coalesce/testing/testing.hpp>

#include "particles.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace ct = coalesce::testing;

namespace {

constexpr int ranks = 2;
constexpr int rounds = 15;

void check(cudaError_t e, const char* what) { coalesce::throw_on_error(e, what); }
void check(ncclResult_t r, const char* what) { coalesce::throw_on_nccl_error(r, what); }

struct gpu_pair {
  std::array<ncclComm_t, ranks> comm{};
  std::array<cudaStream_t, ranks> stream{};
  std::array<cudaEvent_t, ranks> begin{}, end{};
  gpu_pair() {
    const std::array<int, ranks> devices{0, 1};
    check(ncclCommInitAll(comm.data(), ranks, devices.data()), "ncclCommInitAll");
    for (int r = 0; r < ranks; ++r) {
      check(cudaSetDevice(r), "cudaSetDevice");
      check(cudaStreamCreateWithFlags(&stream[r], cudaStreamNonBlocking), "cudaStreamCreate");
      check(cudaEventCreate(&begin[r]), "cudaEventCreate");
      check(cudaEventCreate(&end[r]), "cudaEventCreate");
    }
  }
  ~gpu_pair() {
    for (int r = 0; r < ranks; ++r) {
      (void)cudaSetDevice(r);
      (void)cudaEventDestroy(begin[r]);
      (void)cudaEventDestroy(end[r]);
      (void)cudaStreamDestroy(stream[r]);
      (void)ncclCommDestroy(comm[r]);
    }
  }
  gpu_pair(const gpu_pair&) = delete;
  gpu_pair& operator=(const gpu_pair&) = delete;

  // The median over rounds of the slower GPU's milliseconds for work(): `prepare` (untimed) runs
  // before each round, `work` queues one round on both GPUs' streams.
  double median_ms(const std::function<void()>& prepare, const std::function<void()>& work) {
    std::vector<double> times;
    for (int round = -3; round < rounds; ++round) {
      prepare();
      for (int r = 0; r < ranks; ++r) {
        check(cudaSetDevice(r), "cudaSetDevice");
        check(cudaStreamSynchronize(stream[r]), "cudaStreamSynchronize");
        check(cudaEventRecord(begin[r], stream[r]), "cudaEventRecord");
      }
      work();
      double slowest = 0.0;
      for (int r = 0; r < ranks; ++r) {
        check(cudaSetDevice(r), "cudaSetDevice");
        check(cudaEventRecord(end[r], stream[r]), "cudaEventRecord");
        check(cudaEventSynchronize(end[r]), "cudaEventSynchronize");
        float ms = 0.0f;
        check(cudaEventElapsedTime(&ms, begin[r], end[r]), "cudaEventElapsedTime");
        slowest = std::max(slowest, double(ms));
      }
      if (round >= 0) times.push_back(slowest);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

  // One exchange of each rank's packed halo exchange (column_halo_exchange,
  // volume_halo_exchange): every pack, the posts in one group, every unpack; median ms.
  template <class Exchange>
  double packed_exchange_ms(std::vector<Exchange>& exchange) {
    const auto on_each = [&](auto step) {
      for (int r = 0; r < ranks; ++r) {
        check(cudaSetDevice(r), "cudaSetDevice");
        step(exchange[std::size_t(r)]);
      }
    };
    return median_ms([] {},
                     [&] {
                       on_each([](Exchange& e) { e.pack(); });
                       check(ncclGroupStart(), "ncclGroupStart");
                       on_each([](Exchange& e) { e.post(); });
                       check(ncclGroupEnd(), "ncclGroupEnd");
                       on_each([](Exchange& e) { e.unpack(); });
                     });
  }

  // Raw NCCL: each GPU sends `bytes` to the other and receives as many, in one group.
  double raw_exchange_ms(std::size_t bytes, int messages_each_way) {
    std::array<void*, ranks> send{}, receive{};
    for (int r = 0; r < ranks; ++r) {
      check(cudaSetDevice(r), "cudaSetDevice");
      check(cudaMalloc(&send[r], bytes), "cudaMalloc");
      check(cudaMalloc(&receive[r], bytes), "cudaMalloc");
      check(cudaMemset(send[r], 1, bytes), "cudaMemset");
    }
    const std::size_t piece = bytes / std::size_t(messages_each_way);
    const double ms = median_ms(
        [] {},
        [&] {
          check(ncclGroupStart(), "ncclGroupStart");
          for (int r = 0; r < ranks; ++r)
            for (int m = 0; m < messages_each_way; ++m) {
              const std::size_t at = std::size_t(m) * piece, size = m + 1 == messages_each_way ? bytes - at : piece;
              check(ncclSend(static_cast<char*>(send[r]) + at, size, ncclUint8, 1 - r, comm[r], stream[r]), "ncclSend");
              check(ncclRecv(static_cast<char*>(receive[r]) + at, size, ncclUint8, 1 - r, comm[r], stream[r]),
                    "ncclRecv");
            }
          check(ncclGroupEnd(), "ncclGroupEnd");
        });
    for (int r = 0; r < ranks; ++r) {
      check(cudaSetDevice(r), "cudaSetDevice");
      check(cudaFree(send[r]), "cudaFree");
      check(cudaFree(receive[r]), "cudaFree");
    }
    return ms;
  }
};

// Destroys rank r's exchange with device r current: each frees its buffers on its own device.
template <class Exchange>
void release_on_own_devices(std::vector<Exchange>& exchange) {
  for (int r = int(exchange.size()) - 1; r >= 0; --r) {
    check(cudaSetDevice(r), "cudaSetDevice");
    exchange.pop_back();
  }
}

struct row {
  std::string work, coalesce_name, baseline_name;
  double coalesce_ms, baseline_ms, target;
  double ratio() const { return baseline_ms / coalesce_ms; }
};

struct jacobi {
  template <class N>
  __host__ __device__ float operator()(const N& n) const {
    return 0.25f * (n(-1, 0) + n(1, 0) + n(0, -1) + n(0, 1));
  }
};

// x < -0.8 (a tenth of x uniform in [-1, 1)) leaves for the other rank.
struct tenth_to_other {
  int self;
  template <class P>
  __host__ __device__ int operator()(const P& p) const {
    const float x = p.x;
    return x < -0.8f ? 1 - self : self;
  }
};

std::vector<row> halo_rows(gpu_pair& g) {
  std::vector<row> rows;
  const std::size_t n = 8192, own = n / 2;
  for (const std::size_t halo : {std::size_t(1), std::size_t(4)}) {
    const std::size_t bytes = halo * n * sizeof(float);
    {  // rows: each rank holds own rows plus halos above and below
      std::vector<coalesce::pitched_matrix<float>> block;
      for (int r = 0; r < ranks; ++r) {
        check(cudaSetDevice(r), "cudaSetDevice");
        block.emplace_back(own + 2 * halo, n, 1.0f);
      }
      const std::array<coalesce::row_neighbours, ranks> neighbours{coalesce::row_neighbours{-1, 1},
                                                                   coalesce::row_neighbours{0, -1}};
      const double ms =
          g.median_ms([] {},
                      [&] {
                        check(ncclGroupStart(), "ncclGroupStart");
                        for (int r = 0; r < ranks; ++r) {
                          check(cudaSetDevice(r), "cudaSetDevice");
                          coalesce::exchange_row_halos(block[r].view(), halo, neighbours[r], g.comm[r], g.stream[r]);
                        }
                        check(ncclGroupEnd(), "ncclGroupEnd");
                      });
      rows.push_back({"halo exchange, 8192^2 floats split into 2 blocks of rows, halo " + std::to_string(halo),
                      "coalesce::exchange_row_halos", "ncclSend/ncclRecv of the same bytes", ms,
                      g.raw_exchange_ms(bytes, 1), 0.8});
    }
    {  // columns: each rank holds own columns plus halos left and right, packed and unpacked
      std::vector<coalesce::pitched_matrix<float>> block;
      std::vector<coalesce::column_halo_exchange<float>> exchange;
      const std::array<coalesce::column_neighbours, ranks> neighbours{coalesce::column_neighbours{-1, 1},
                                                                      coalesce::column_neighbours{0, -1}};
      for (int r = 0; r < ranks; ++r) {
        check(cudaSetDevice(r), "cudaSetDevice");
        block.emplace_back(n, own + 2 * halo, 1.0f);
      }
      for (int r = 0; r < ranks; ++r) {
        check(cudaSetDevice(r), "cudaSetDevice");
        exchange.emplace_back(block[r].view(), halo, neighbours[r], g.comm[r], g.stream[r]);
      }
      const double ms = g.packed_exchange_ms(exchange);
      rows.push_back({"halo exchange, 8192^2 floats split into 2 blocks of columns, halo " + std::to_string(halo),
                      "coalesce::column_halo_exchange (pack, post, unpack)", "ncclSend/ncclRecv of the same bytes", ms,
                      g.raw_exchange_ms(bytes, 1), 0.8});
      release_on_own_devices(exchange);
    }
  }
  // A 512^3 volume split in two along z (whole planes, sent as they are) and along x (faces
  // across columns, packed), halo 1: the same bytes per exchange, 512^2 floats each way.
  const std::size_t side = 512, half = side / 2;
  for (const auto axis : {coalesce::volume_axis::z, coalesce::volume_axis::x}) {
    const bool z = axis == coalesce::volume_axis::z;
    std::vector<coalesce::pitched_volume<float>> block;
    std::vector<coalesce::volume_halo_exchange<float>> exchange;
    const std::array<coalesce::axis_neighbours, ranks> neighbours{coalesce::axis_neighbours{-1, 1},
                                                                  coalesce::axis_neighbours{0, -1}};
    for (int r = 0; r < ranks; ++r) {
      check(cudaSetDevice(r), "cudaSetDevice");
      block.emplace_back(z ? half + 2 : side, side, z ? side : half + 2, 1.0f);
      exchange.emplace_back(block[r].view(), axis, 1, neighbours[r], g.comm[r], g.stream[r]);
    }
    const double ms = g.packed_exchange_ms(exchange);
    rows.push_back({std::string("halo exchange, 512^3 floats split into 2 blocks along ") +
                        (z ? "z (planes)" : "x (columns)") + ", halo 1",
                    std::string("coalesce::volume_halo_exchange") + (z ? " (sent as it is)" : " (pack, post, unpack)"),
                    "ncclSend/ncclRecv of the same bytes", ms, g.raw_exchange_ms(side * side * sizeof(float), 1), 0.8});
    release_on_own_devices(exchange);
  }
  return rows;
}

row migration_row(gpu_pair& g) {
  const std::size_t n = std::size_t(32) << 20;
  std::vector<coalesce::soa_vector<Particle>> pristine, v;
  const auto host = coalesce_test::random_particles(n);
  for (int r = 0; r < ranks; ++r) {
    check(cudaSetDevice(r), "cudaSetDevice");
    pristine.emplace_back(host, coalesce::pool_resource(g.stream[r]));
    v.emplace_back(coalesce::pool_resource(g.stream[r]));
  }
  std::array<std::size_t, ranks> departed{};
  const double ms = g.median_ms(
      [&] {
        for (int r = 0; r < ranks; ++r) {
          check(cudaSetDevice(r), "cudaSetDevice");
          v[r].resize_for_overwrite(n);
          v[r].assign(pristine[r]);
        }
      },
      [&] {
        std::vector<coalesce::particle_migration<Particle>> m;
        for (int r = 0; r < ranks; ++r) {
          check(cudaSetDevice(r), "cudaSetDevice");
          m.emplace_back(v[r], tenth_to_other{r}, g.comm[r]);
        }
        check(ncclGroupStart(), "ncclGroupStart");
        for (auto& x : m) x.post_counts();
        check(ncclGroupEnd(), "ncclGroupEnd");
        for (int r = 0; r < ranks; ++r) {
          check(cudaSetDevice(r), "cudaSetDevice");
          m[r].receive_counts();
        }
        check(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < ranks; ++r) {
          check(cudaSetDevice(r), "cudaSetDevice");
          m[r].post_particles();
          departed[r] = m[r].departed();
        }
        check(ncclGroupEnd(), "ncclGroupEnd");
      });
  const std::size_t bytes = std::max(departed[0], departed[1]) * sizeof(Particle);
  return {"migration of 10% of 32 M particles (six floats) each way",
          "coalesce::particle_migration (4 steps)",
          "ncclSend/ncclRecv of the departures' bytes, 6 messages",
          ms,
          g.raw_exchange_ms(bytes, 6),
          0.7};
}

std::vector<row> scaling_rows(gpu_pair& g) {
  const std::size_t n = 8192, sweeps = 10;
  const auto sweep = [](const coalesce::pitched_view<float>& u, const coalesce::pitched_view<float>& next,
                        cudaStream_t s) {
    coalesce::stencil<1>(coalesce::interior, u, next, [] __device__(auto nb) { return jacobi{}(nb); }, s);
  };
  // One GPU: the plate with its edge rows.
  check(cudaSetDevice(0), "cudaSetDevice");
  coalesce::pitched_matrix<float> a(n + 2, n, 1.0f), b(n + 2, n, 1.0f);
  const double one = g.median_ms([] {},
                                 [&] {
                                   check(cudaSetDevice(0), "cudaSetDevice");
                                   for (std::size_t s = 0; s < sweeps; ++s)
                                     sweep(s % 2 ? b.view() : a.view(), s % 2 ? a.view() : b.view(), g.stream[0]);
                                 });

  // Two GPUs: the same plate on each (8192 own rows between two halo rows).
  std::vector<coalesce::pitched_matrix<float>> u, next;
  std::array<cudaStream_t, ranks> side{};
  std::array<cudaEvent_t, ranks> written{};
  for (int r = 0; r < ranks; ++r) {
    check(cudaSetDevice(r), "cudaSetDevice");
    u.emplace_back(n + 2, n, 1.0f);
    next.emplace_back(n + 2, n, 1.0f);
    check(cudaStreamCreateWithFlags(&side[r], cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreateWithFlags(&written[r], cudaEventDisableTiming), "cudaEventCreate");
  }
  const std::array<coalesce::row_neighbours, ranks> neighbours{coalesce::row_neighbours{-1, 1},
                                                               coalesce::row_neighbours{0, -1}};
  const auto views = [&](int r, std::size_t s) {
    return std::make_pair(s % 2 ? next[r].view() : u[r].view(), s % 2 ? u[r].view() : next[r].view());
  };
  const double blocking =
      g.median_ms([] {},
                  [&] {
                    for (std::size_t s = 0; s < sweeps; ++s) {
                      check(ncclGroupStart(), "ncclGroupStart");
                      for (int r = 0; r < ranks; ++r) {
                        check(cudaSetDevice(r), "cudaSetDevice");
                        coalesce::exchange_row_halos(views(r, s).first, 1, neighbours[r], g.comm[r], g.stream[r]);
                      }
                      check(ncclGroupEnd(), "ncclGroupEnd");
                      for (int r = 0; r < ranks; ++r) {
                        check(cudaSetDevice(r), "cudaSetDevice");
                        sweep(views(r, s).first, views(r, s).second, g.stream[r]);
                      }
                    }
                  });
  // Overlapped, with coalesce::row_halo_exchange's split phase: the halo rows travel on a side
  // stream while the rows that do not need them are computed; finish() makes the sweep's stream
  // wait for them, and the two rows beside the halos follow. One exchange per rank and buffer.
  std::vector<coalesce::row_halo_exchange<float>> halos;  // rank r's of buffer b at 2 * r + b
  for (int r = 0; r < ranks; ++r) {
    check(cudaSetDevice(r), "cudaSetDevice");
    for (std::size_t b = 0; b < 2; ++b) halos.emplace_back(views(r, b).first, 1, neighbours[r], g.comm[r]);
  }
  const auto halos_of = [&](int r, std::size_t s) -> coalesce::row_halo_exchange<float>& {
    return halos[2 * r + s % 2];
  };
  const double overlapped =
      g.median_ms([] {},
                  [&] {
                    for (std::size_t s = 0; s < sweeps; ++s) {
                      for (int r = 0; r < ranks; ++r) {  // the rows sent were written by the last sweep
                        check(cudaSetDevice(r), "cudaSetDevice");
                        check(cudaEventRecord(written[r], g.stream[r]), "cudaEventRecord");
                        check(cudaStreamWaitEvent(side[r], written[r], 0), "cudaStreamWaitEvent");
                      }
                      check(ncclGroupStart(), "ncclGroupStart");
                      for (int r = 0; r < ranks; ++r) {
                        check(cudaSetDevice(r), "cudaSetDevice");
                        halos_of(r, s).start(side[r]);
                      }
                      check(ncclGroupEnd(), "ncclGroupEnd");
                      for (int r = 0; r < ranks; ++r) {
                        check(cudaSetDevice(r), "cudaSetDevice");
                        const auto [from, to] = views(r, s);
                        sweep(from.block(1, 0, n, n), to.block(1, 0, n, n), g.stream[r]);  // rows 2 .. n - 1
                        halos_of(r, s).finish(g.stream[r]);
                        sweep(from.block(0, 0, 3, n), to.block(0, 0, 3, n), g.stream[r]);          // row 1
                        sweep(from.block(n - 1, 0, 3, n), to.block(n - 1, 0, 3, n), g.stream[r]);  // row n
                      }
                    }
                  });
  for (int r = ranks - 1; r >= 0; --r) {  // each exchange's event on its own device
    check(cudaSetDevice(r), "cudaSetDevice");
    halos.pop_back();
    halos.pop_back();
  }
  for (int r = 0; r < ranks; ++r) {
    check(cudaSetDevice(r), "cudaSetDevice");
    check(cudaStreamSynchronize(side[r]), "cudaStreamSynchronize");
    check(cudaStreamDestroy(side[r]), "cudaStreamDestroy");
    check(cudaEventDestroy(written[r]), "cudaEventDestroy");
  }
  return {{"Jacobi weak scaling, 10 sweeps of 8192^2 floats per GPU, 1 -> 2 GPUs, halos exchanged then swept",
           "2 GPUs, blocking exchange", "1 GPU", blocking, one, 0.0},
          {"Jacobi weak scaling, 10 sweeps of 8192^2 floats per GPU, 1 -> 2 GPUs, with overlap",
           "2 GPUs, inner rows computed during the exchange", "1 GPU", overlapped, one, 0.9}};
}

}  // namespace

int main(int argc, char** argv) {
  bool check_targets = false;
  std::string output;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check") == 0) check_targets = true;
    else output = argv[i];
  }
  if (auto reason = ct::gpus_unavailable_reason(ranks)) {
    std::printf("SKIPPED: %s\n", reason->c_str());
    return 77;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int nccl_version = 0;
  check(ncclGetVersion(&nccl_version), "ncclGetVersion");
  std::ostringstream out;
  out << "coalesce on two GPUs: 2 x " << prop.name << ", CUDA " << CUDART_VERSION / 1000 << "."
      << CUDART_VERSION % 1000 / 10 << ", NCCL " << nccl_version << "; median of " << rounds
      << " rounds of the slower GPU's time\n\n";

  gpu_pair g;
  std::vector<row> rows = halo_rows(g);
  rows.push_back(migration_row(g));
  for (const row& r : scaling_rows(g)) rows.push_back(r);

  int missed = 0;
  for (const row& r : rows) {
    const bool met = r.target == 0.0 || r.ratio() >= r.target;
    missed += !met;
    char line[512];
    std::snprintf(line, sizeof line, "%s\n  %-55s %9.3f ms\n  %-55s %9.3f ms\n  ratio %.3f%s\n\n", r.work.c_str(),
                  r.coalesce_name.c_str(), r.coalesce_ms, r.baseline_name.c_str(), r.baseline_ms, r.ratio(),
                  r.target == 0.0 ? ""
                                  : (std::string(" (target >= ") + std::to_string(r.target).substr(0, 4) +
                                     (met ? ": met)" : ": MISSED)"))
                                        .c_str());
    out << line;
  }
  std::fputs(out.str().c_str(), stdout);
  if (!output.empty()) std::ofstream(output) << out.str();
  return check_targets && missed > 0 ? 1 : 0;
}
