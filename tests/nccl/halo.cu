// coalesce::exchange_row_halos and row_halo_exchange on two GPUs of one process (one NCCL
// communicator per GPU, from ncclCommInitAll): a matrix split into two blocks of rows, each with
// halos above and below; after an exchange each block's inner halo holds the other block's edge
// rows exactly, and the halos at the domain's edges are untouched. Skipped with fewer than 2 GPUs.
// One case needs one GPU: a single rank of a periodic domain is its own neighbour both ways.
#include <coalesce/nccl.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"
#include "nccl_ranks.hpp"
#include "volume_blocks.hpp"

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ct = coalesce::testing;

namespace {

constexpr int ranks = coalesce_test::two_ranks;
using coalesce_test::communicators;
using coalesce_test::single_rank;

// The value of global row g, column c: each element its own for fewer than 4096 columns (and
// exact in a float below 4096 rows), so a misplaced row or column shows.
float value_at(std::size_t g, std::size_t c) { return float(g * 4096 + c); }

// Every element of `got` (rows x cols, dense) against expected(i, c); `who` says whose block.
template <class Expected>
void check_elements(const std::vector<float>& got, std::size_t rows, std::size_t cols, const Expected& expected,
                    const std::string& who) {
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t c = 0; c < cols; ++c)
      if (got[i * cols + c] != expected(i, c))
        FAIL(who << ", row " << i << ", column " << c << ": " << got[i * cols + c] << ", expected " << expected(i, c));
}

// One process driving both ranks' packed exchanges: every pack, every post in one NCCL group
// (each rank's posts alone would wait for its peer's), then every unpack.
template <class Exchange>
void exchange_in_one_group(std::vector<Exchange>& exchanges) {
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    exchanges[std::size_t(r)].pack();
  }
  coalesce::throw_on_nccl_error(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    exchanges[std::size_t(r)].post();
  }
  coalesce::throw_on_nccl_error(ncclGroupEnd(), "ncclGroupEnd");
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    exchanges[std::size_t(r)].unpack();
  }
}

// Along an axis of `own` positions with `halo` either side, on a single periodic rank: the own
// position whose value position p holds after an exchange (the halo before the first own
// position holds the last own ones, and the halo after them the first).
std::size_t wrapped_source(std::size_t p, std::size_t own, std::size_t halo) {
  if (p < halo) return own - halo + p;
  if (p < halo + own) return p - halo;
  return p - halo - own;
}

}  // namespace

TEST_CASE("exchange_row_halos moves each block's edge rows into the other block's halo, from pitched memory as it is") {
  COALESCE_REQUIRE_TWO_GPUS();
  const std::size_t own = 300, halo = 2, cols = 1001, rows = own + 2 * halo;
  communicators nccl;
  std::vector<coalesce::pitched_matrix<float>> blocks;
  std::array<cudaStream_t, ranks> streams{};
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking));
    std::vector<float> host(rows * cols, -1.0f);  // halos: -1
    for (std::size_t i = 0; i < own; ++i)
      for (std::size_t c = 0; c < cols; ++c) host[(halo + i) * cols + c] = value_at(r * own + i, c);
    blocks.emplace_back(host, rows, cols);
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(blocks[r].stream()));  // the exchange's stream sees the rows it sends
  }
  // Rank 0 holds the top block, rank 1 the bottom one; the domain is not periodic.
  const std::array<coalesce::row_neighbours, ranks> neighbours{coalesce::row_neighbours{-1, 1},
                                                               coalesce::row_neighbours{0, -1}};
  coalesce::throw_on_nccl_error(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    coalesce::exchange_row_halos(blocks[r].view(), halo, neighbours[r], nccl.comm[r], streams[r]);
  }
  coalesce::throw_on_nccl_error(ncclGroupEnd(), "ncclGroupEnd");
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(streams[r]));
  }

  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    const auto expected = [&](std::size_t i, std::size_t c) {
      if (i >= halo && i < halo + own) return value_at(r * own + i - halo, c);
      if (r == 0 && i >= halo + own) return value_at(own + (i - halo - own), c);  // rank 1's first rows
      if (r == 1 && i < halo) return value_at(own - halo + i, c);                 // rank 0's last rows
      return -1.0f;  // the outer halos stay as they were
    };
    check_elements(blocks[r].to_vector(), rows, cols, expected, "rank " + std::to_string(r));
  }
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    COALESCE_CUDA_CHECK(cudaStreamDestroy(streams[r]));
  }
}

TEST_CASE("one rank of a periodic domain sends its edge rows into its own opposite halos") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t own = 50, halo = 3, cols = 257, rows = own + 2 * halo;
  single_rank nccl;
  std::vector<float> host(rows * cols, -1.0f);
  for (std::size_t i = 0; i < own; ++i)
    for (std::size_t c = 0; c < cols; ++c) host[(halo + i) * cols + c] = value_at(i, c);
  coalesce::pitched_matrix<float> block(host, rows, cols);
  // The same rank above and below: the first message posted (the last own rows, going down)
  // must land in the halo above, the second (the first own rows, going up) in the halo below.
  coalesce::exchange_row_halos(block.view(), halo, coalesce::row_neighbours{0, 0}, nccl.comm, block.stream());
  const auto got = block.to_vector();  // waits for the block's stream
  check_elements(
      got, rows, cols, [&](std::size_t i, std::size_t c) { return value_at(wrapped_source(i, own, halo), c); },
      "the single rank");
}

TEST_CASE("row_halo_exchange: start on an exchange stream, finish on the work stream, which then reads the halos") {
  COALESCE_REQUIRE_TWO_GPUS();
  const std::size_t own = 64, halo = 1, cols = 256, rows = own + 2 * halo;
  communicators nccl;
  std::vector<coalesce::pitched_matrix<float>> blocks;
  std::array<cudaStream_t, ranks> exchange{}, work{};
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&exchange[r], cudaStreamNonBlocking));
    COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&work[r], cudaStreamNonBlocking));
    std::vector<float> host(rows * cols, -1.0f);
    for (std::size_t i = 0; i < own; ++i)
      for (std::size_t c = 0; c < cols; ++c) host[(halo + i) * cols + c] = value_at(r * own + i, c);
    blocks.emplace_back(host, rows, cols);
    COALESCE_CUDA_CHECK(cudaDeviceSynchronize());  // the exchange stream sees the rows it sends
  }
  // Periodic: each rank is the other's neighbour above and below.
  std::vector<coalesce::row_halo_exchange<float>> exchanges;
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    exchanges.emplace_back(blocks[r].view(), halo, coalesce::row_neighbours{1 - r, 1 - r}, nccl.comm[r]);
  }
  coalesce::throw_on_nccl_error(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    exchanges[r].start(exchange[r]);
  }
  coalesce::throw_on_nccl_error(ncclGroupEnd(), "ncclGroupEnd");
  std::array<std::vector<float>, ranks> got;
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    exchanges[r].finish(work[r]);
    got[r].resize(rows * cols);
    // Read back on the work stream: only finish() orders it after the exchange.
    COALESCE_CUDA_CHECK(cudaMemcpy2DAsync(got[r].data(), cols * sizeof(float), blocks[r].view().data(),
                                          blocks[r].view().pitch_bytes(), cols * sizeof(float), rows,
                                          cudaMemcpyDeviceToHost, work[r]));
  }
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(work[r]));
    const int other = 1 - r;
    for (std::size_t c = 0; c < cols; ++c) {
      // Row 0: the last own row of the other rank; the last row: its first own row.
      if (got[r][c] != value_at(other * own + own - 1, c)) FAIL("rank " << r << ", top halo, column " << c);
      if (got[r][(rows - 1) * cols + c] != value_at(other * own, c))
        FAIL("rank " << r << ", bottom halo, column " << c);
    }
    COALESCE_CUDA_CHECK(cudaStreamDestroy(exchange[r]));
    COALESCE_CUDA_CHECK(cudaStreamDestroy(work[r]));
  }
}

TEST_CASE("a block too short for its halos is refused before NCCL is called") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  COALESCE_CUDA_CHECK(cudaSetDevice(0));
  coalesce::pitched_matrix<float> tiny(5, 10);
  CHECK_THROWS_AS(coalesce::exchange_row_halos(tiny.view(), 2, coalesce::row_neighbours{-1, 1}, ncclComm_t{},
                                               cudaStream_t{}),
                  std::invalid_argument);
}

// --- columns -------------------------------------------------------------------------------------

namespace {

// A block of `own` columns (global columns from `first_col`) with `halo` columns either side,
// halos -1; element (i, c) of the global matrix is value_at(i, c).
coalesce::pitched_matrix<float> column_block(std::size_t rows, std::size_t own, std::size_t halo,
                                             std::size_t first_col) {
  const std::size_t cols = own + 2 * halo;
  std::vector<float> host(rows * cols, -1.0f);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t c = 0; c < own; ++c) host[i * cols + halo + c] = value_at(i, first_col + c);
  return coalesce::pitched_matrix<float>(host, rows, cols);
}

}  // namespace

TEST_CASE("one rank of a periodic domain sends its edge columns into its own opposite halos") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t rows = 70, own = 41, halo = 2, cols = own + 2 * halo;
  single_rank nccl;
  auto block = column_block(rows, own, halo, 0);
  {
    coalesce::column_halo_exchange<float> exchange(block.view(), halo, coalesce::column_neighbours{0, 0}, nccl.comm,
                                                   block.stream());
    exchange.exchange();
  }  // the buffers go back to the pool in stream order
  const auto got = block.to_vector();  // waits for the block's stream
  check_elements(
      got, rows, cols, [&](std::size_t i, std::size_t c) { return value_at(i, wrapped_source(c, own, halo)); },
      "the single rank");
}

TEST_CASE("column_halo_exchange between two GPUs of one process: pack, one group of posts, unpack") {
  COALESCE_REQUIRE_TWO_GPUS();
  const std::size_t rows = 90, own = 100, halo = 3, cols = own + 2 * halo;
  communicators nccl;
  std::vector<coalesce::pitched_matrix<float>> blocks;
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    blocks.push_back(column_block(rows, own, halo, r * own));
  }
  // Rank 0 holds the left block, rank 1 the right one; not periodic.
  const std::array<coalesce::column_neighbours, ranks> neighbours{coalesce::column_neighbours{-1, 1},
                                                                  coalesce::column_neighbours{0, -1}};
  std::vector<coalesce::column_halo_exchange<float>> exchanges;
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    exchanges.emplace_back(blocks[r].view(), halo, neighbours[r], nccl.comm[r], blocks[r].stream());
  }
  exchange_in_one_group(exchanges);
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    const auto expected = [&](std::size_t i, std::size_t c) {
      if (c >= halo && c < halo + own) return value_at(i, r * own + c - halo);
      if (r == 0 && c >= halo + own) return value_at(i, own + c - halo - own);  // rank 1's first columns
      if (r == 1 && c < halo) return value_at(i, own - halo + c);  // rank 0's last columns
      return -1.0f;  // the outer halos stay as they were
    };
    check_elements(blocks[r].to_vector(), rows, cols, expected, "rank " + std::to_string(r));
  }
  for (int r = 0; r < ranks; ++r) {  // each exchange frees its buffers on its own device
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    exchanges[r] = coalesce::column_halo_exchange<float>(blocks[r].view(), 0, {}, nccl.comm[r], blocks[r].stream());
  }
}

TEST_CASE("a block too narrow for its halo columns is refused before anything is allocated") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  coalesce::pitched_matrix<float> narrow(10, 5);
  CHECK_THROWS_AS(coalesce::column_halo_exchange<float>(narrow.view(), 2, coalesce::column_neighbours{-1, 1},
                                                        ncclComm_t{}, cudaStream_t{}),
                  std::invalid_argument);
}

// --- volumes -------------------------------------------------------------------------------------

namespace {

using coalesce::volume_axis;
using coalesce_test::after_exchange_of_two;
using coalesce_test::check_volume;
using coalesce_test::value_at;
using coalesce_test::volume_shape;
using coalesce_test::volume_values;

}  // namespace

TEST_CASE(
    "one rank of a periodic domain exchanges a volume's faces along z, y and x with itself; whole planes go as they are") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  single_rank nccl;
  struct variant {
    volume_shape shape;
    bool packs;
  };
  const variant variants[] = {
      {volume_shape(volume_axis::z, 9, 2, 0, 37, 45), false},  // whole planes: one run each way
      {volume_shape(volume_axis::y, 21, 2, 7, 0, 45), true},  // rows of every plane: packed
      {volume_shape(volume_axis::y, 21, 3, 1, 0, 45), false},  // one plane: its rows are one run
      {volume_shape(volume_axis::x, 33, 1, 7, 19, 0), true},  // columns: packed
      {volume_shape(volume_axis::x, 33, 4, 5, 19, 0), true},
  };
  for (const auto& v : variants) {
    const auto& s = v.shape;
    coalesce::pitched_volume<float> block(volume_values(s, 0), s.extents[0], s.extents[1], s.extents[2]);
    {
      coalesce::volume_halo_exchange<float> exchange(block.view(), s.axis, s.halo, coalesce::axis_neighbours{0, 0},
                                                     nccl.comm, block.stream());
      CHECK(exchange.packs() == v.packs);
      exchange.exchange();
    }
    check_volume(
        block.to_vector(), s,
        [&](std::array<std::size_t, 3> p) {
          p[std::size_t(s.axis)] = wrapped_source(s.along(p), s.own, s.halo);
          return value_at(p[0], p[1], p[2]);
        },
        "the single rank");
  }
}

TEST_CASE("a volume block narrower than its volume sends its planes packed, and leaves its neighbour's columns alone") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  single_rank nccl;
  const volume_shape s(volume_axis::z, 6, 1, 0, 11, 40);
  const std::size_t extra = 5;  // columns right of the block, of someone else
  const volume_shape wide(volume_axis::z, 6, 1, 0, 11, 40 + extra);
  auto host = volume_values(wide, 0);
  wide.for_each([&](std::array<std::size_t, 3> p, std::size_t i) {
    if (p[2] >= s.extents[2]) host[i] = -7.0f;
  });
  coalesce::pitched_volume<float> volume(host, wide.extents[0], wide.extents[1], wide.extents[2]);
  {
    coalesce::volume_halo_exchange<float> exchange(
        volume.view().block(0, 0, 0, s.extents[0], s.extents[1], s.extents[2]), volume_axis::z, s.halo,
        coalesce::axis_neighbours{0, 0}, nccl.comm, volume.stream());
    CHECK(exchange.packs());
    exchange.exchange();
  }
  check_volume(
      volume.to_vector(), wide,
      [&](std::array<std::size_t, 3> p) {
        if (p[2] >= s.extents[2]) return -7.0f;
        p[0] = wrapped_source(p[0], s.own, s.halo);
        return value_at(p[0], p[1], p[2]);
      },
      "the single rank");
}

TEST_CASE("volume_halo_exchange between two GPUs of one process, split along z (as it is) and along x (packed)") {
  COALESCE_REQUIRE_TWO_GPUS();
  communicators nccl;
  for (const auto& s :
       {volume_shape(volume_axis::z, 12, 2, 0, 40, 70), volume_shape(volume_axis::x, 50, 3, 9, 40, 0)}) {
    std::vector<coalesce::pitched_volume<float>> blocks;
    for (int r = 0; r < ranks; ++r) {
      COALESCE_CUDA_CHECK(cudaSetDevice(r));
      blocks.emplace_back(volume_values(s, r * s.own), s.extents[0], s.extents[1], s.extents[2]);
    }
    // Rank 0 holds the first block along the axis, rank 1 the second; not periodic.
    const std::array<coalesce::axis_neighbours, ranks> neighbours{coalesce::axis_neighbours{-1, 1},
                                                                  coalesce::axis_neighbours{0, -1}};
    {
      std::vector<coalesce::volume_halo_exchange<float>> exchanges;
      for (int r = 0; r < ranks; ++r) {
        COALESCE_CUDA_CHECK(cudaSetDevice(r));
        exchanges.emplace_back(blocks[r].view(), s.axis, s.halo, neighbours[r], nccl.comm[r], blocks[r].stream());
      }
      exchange_in_one_group(exchanges);
      for (int r = ranks - 1; r >= 0; --r) {  // each exchange frees its buffers on its own device
        COALESCE_CUDA_CHECK(cudaSetDevice(r));
        exchanges.pop_back();
      }
    }
    for (int r = 0; r < ranks; ++r) {
      COALESCE_CUDA_CHECK(cudaSetDevice(r));
      check_volume(
          blocks[r].to_vector(), s, [&](std::array<std::size_t, 3> p) { return after_exchange_of_two(s, r, p); },
          "rank " + std::to_string(r));
    }
  }
}

TEST_CASE("a volume too thin along its split for its halos is refused before anything is allocated") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  coalesce::pitched_volume<float> thin(4, 10, 10);
  CHECK_THROWS_AS(coalesce::volume_halo_exchange<float>(thin.view(), volume_axis::z, 2,
                                                        coalesce::axis_neighbours{-1, 1}, ncclComm_t{}, cudaStream_t{}),
                  std::invalid_argument);
}

TEST_CASE(
    "volume_halo_exchange's split phase: start on an exchange stream, finish on the work stream, which then reads the halos") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  single_rank nccl;
  cudaStream_t exchange_stream{}, work{};
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&exchange_stream, cudaStreamNonBlocking));
  COALESCE_CUDA_CHECK(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking));
  for (const auto& s : {volume_shape(volume_axis::x, 40, 2, 6, 17, 0), volume_shape(volume_axis::z, 8, 1, 0, 17, 40)}) {
    coalesce::pitched_volume<float> block(volume_values(s, 0), s.extents[0], s.extents[1], s.extents[2]);
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(block.stream()));  // the exchange stream sees the layers it sends
    std::vector<float> got(s.size());
    {
      coalesce::volume_halo_exchange<float> exchange(block.view(), s.axis, s.halo, coalesce::axis_neighbours{0, 0},
                                                     nccl.comm, exchange_stream);
      exchange.start();
      exchange.finish(work);
      // Read back on the work stream: only finish() orders it after the exchange.
      const auto v = block.view();
      COALESCE_CUDA_CHECK(cudaMemcpy2DAsync(got.data(), v.width() * sizeof(float), v.data(), v.pitch_bytes(),
                                            v.width() * sizeof(float), v.depth() * v.height(), cudaMemcpyDeviceToHost,
                                            work));
      COALESCE_CUDA_CHECK(cudaStreamSynchronize(work));
    }  // the buffers go back to the pool on the exchange stream
    COALESCE_CUDA_CHECK(cudaStreamSynchronize(exchange_stream));
    check_volume(
        got, s,
        [&](std::array<std::size_t, 3> p) {
          p[std::size_t(s.axis)] = wrapped_source(s.along(p), s.own, s.halo);
          return value_at(p[0], p[1], p[2]);
        },
        "the single rank");
  }
  COALESCE_CUDA_CHECK(cudaStreamDestroy(exchange_stream));
  COALESCE_CUDA_CHECK(cudaStreamDestroy(work));
}

namespace {
// A launch that fails at once (1025 threads per block): an error the program leaves pending.
__global__ void never_runs() {}
}  // namespace

// [no-sanitizer]: the deliberate bad launch is what compute-sanitizer reports.
TEST_CASE("one rank: every halo exchange made while the program's error is pending throws it as an earlier call's",
          "[no-sanitizer]") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  single_rank nccl;
  const std::size_t own = 20, halo = 2;
  coalesce::pitched_matrix<float> rows_block(own + 2 * halo, 64, 1.0f);
  auto columns_block = column_block(40, own, halo, 0);
  coalesce::pitched_volume<float> volume(16, 16, 16, 1.0f);
  cudaStream_t exchange_stream = rows_block.stream();
  coalesce::row_halo_exchange<float> split_rows(rows_block.view(), halo, coalesce::row_neighbours{0, 0}, nccl.comm);
  const std::pair<const char*, std::function<void()>> calls[] = {
      {"exchange_row_halos",
       [&] {
         coalesce::exchange_row_halos(rows_block.view(), halo, coalesce::row_neighbours{0, 0}, nccl.comm,
                                      rows_block.stream());
       }},
      {"row_halo_exchange::start", [&] { split_rows.start(exchange_stream); }},
      {"row_halo_exchange::finish", [&] { split_rows.finish(rows_block.stream()); }},
      {"column_halo_exchange",
       [&] {
         coalesce::column_halo_exchange<float> e(columns_block.view(), halo, coalesce::column_neighbours{0, 0},
                                                 nccl.comm, columns_block.stream());
         e.exchange();
       }},
      {"volume_halo_exchange along x (packed)",
       [&] {
         coalesce::volume_halo_exchange<float> e(volume.view(), coalesce::volume_axis::x, halo,
                                                 coalesce::axis_neighbours{0, 0}, nccl.comm, volume.stream());
         e.exchange();
       }},
  };
  for (const auto& [name, call] : calls) {
    INFO(name);
    never_runs<<<1, 1025>>>();
    const cudaError_t users = cudaPeekAtLastError();
    REQUIRE(users != cudaSuccess);  // cudaErrorInvalidValue with CUDA 13.0 on an H200
    try {
      call();
      FAIL("no exception");
    } catch (const coalesce::cuda_error& e) {
      CHECK(e.code() == users);
      CHECK(std::string(e.what()).find("an earlier CUDA call") != std::string::npos);
    }
    CHECK(cudaGetLastError() == users);  // still the program's to collect
    call();  // and the call works once it is collected
    ct::check_sync(name);
  }
}
