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

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace ct = coalesce::testing;

namespace {

constexpr int ranks = coalesce_test::two_ranks;
using coalesce_test::communicators;
using coalesce_test::single_rank;

// The value of global row g, column c: each row its own, so a misplaced row shows.
float value_at(std::size_t g, std::size_t c) { return float(g * 1000 + c); }

// Every element of `got` (rows x cols, dense) against expected(i, c); `who` says whose block.
template <class Expected>
void check_elements(const std::vector<float>& got, std::size_t rows, std::size_t cols, const Expected& expected,
                    const std::string& who) {
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t c = 0; c < cols; ++c)
      if (got[i * cols + c] != expected(i, c))
        FAIL(who << ", row " << i << ", column " << c << ": " << got[i * cols + c] << ", expected " << expected(i, c));
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
  }
  // Rank 0 holds the top block, rank 1 the bottom one; the domain is not periodic.
  const std::array<coalesce::row_neighbours, ranks> neighbours{coalesce::row_neighbours{-1, 1}, coalesce::row_neighbours{0, -1}};
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
      return -1.0f;                                                               // the outer halos stay as they were
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
  check_elements(got, rows, cols, [&](std::size_t i, std::size_t c) { return value_at(wrapped_source(i, own, halo), c); },
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
      if (got[r][(rows - 1) * cols + c] != value_at(other * own, c)) FAIL("rank " << r << ", bottom halo, column " << c);
    }
    COALESCE_CUDA_CHECK(cudaStreamDestroy(exchange[r]));
    COALESCE_CUDA_CHECK(cudaStreamDestroy(work[r]));
  }
}

TEST_CASE("a block too short for its halos is refused before NCCL is called") {
  COALESCE_REQUIRE_TWO_GPUS();
  COALESCE_CUDA_CHECK(cudaSetDevice(0));
  coalesce::pitched_matrix<float> tiny(5, 10);
  CHECK_THROWS_AS(coalesce::exchange_row_halos(tiny.view(), 2, coalesce::row_neighbours{-1, 1}, ncclComm_t{}, cudaStream_t{}),
                  std::invalid_argument);
}

// --- columns -------------------------------------------------------------------------------------

namespace {

// A block of `own` columns (global columns from `first_col`) with `halo` columns either side,
// halos -1; element (i, c) of the global matrix is value_at(i, c).
coalesce::pitched_matrix<float> column_block(std::size_t rows, std::size_t own, std::size_t halo, std::size_t first_col) {
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
  check_elements(got, rows, cols, [&](std::size_t i, std::size_t c) { return value_at(i, wrapped_source(c, own, halo)); },
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
    exchanges.back().pack();
  }
  coalesce::throw_on_nccl_error(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    exchanges[r].post();
  }
  coalesce::throw_on_nccl_error(ncclGroupEnd(), "ncclGroupEnd");
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    exchanges[r].unpack();
  }
  for (int r = 0; r < ranks; ++r) {
    COALESCE_CUDA_CHECK(cudaSetDevice(r));
    const auto expected = [&](std::size_t i, std::size_t c) {
      if (c >= halo && c < halo + own) return value_at(i, r * own + c - halo);
      if (r == 0 && c >= halo + own) return value_at(i, own + c - halo - own);  // rank 1's first columns
      if (r == 1 && c < halo) return value_at(i, own - halo + c);                // rank 0's last columns
      return -1.0f;                                                              // the outer halos stay as they were
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
  CHECK_THROWS_AS(coalesce::column_halo_exchange<float>(narrow.view(), 2, coalesce::column_neighbours{-1, 1}, ncclComm_t{},
                                                        cudaStream_t{}),
                  std::invalid_argument);
}
