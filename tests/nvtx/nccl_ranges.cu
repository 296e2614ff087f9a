// The NVTX ranges of <coalesce/nccl.hpp>'s halo exchanges, counted by the test's own NVTX tool
// (nvtx_recorder.hpp), on one rank that is its own neighbour both ways (one GPU): one range in
// domain "coalesce" per call the user makes, named as that call; the split-phase and step forms
// show each step the user calls, and a wrapper's inner exchange (column_halo_exchange on
// volume_halo_exchange, row_halo_exchange on exchange_row_halos) stays hidden inside the outer
// range. The halos are checked too, so that the ranges are those of exchanges that did their work.
#include <coalesce/nccl.hpp>
#include <coalesce/pitched_matrix.hpp>
#include <coalesce/pitched_volume.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_test.hpp"
#include "nccl_ranks.hpp"
#include "nvtx_counting.hpp"
#include "nvtx_recorder.hpp"

#include <nvtx3/nvToolsExt.h>

#include <cstddef>
#include <string>
#include <vector>

namespace {

namespace nvtx = coalesce_test::nvtx;
using coalesce_test::single_rank;

// Whether the running test case counts ranges (nvtx::counting(): not under compute-sanitizer).
bool counted = true;

using names = std::vector<std::string>;

// What `call` pushed in domain "coalesce", once its work is done: `expected`, and every range it
// opened closed. (Counted as a difference: NCCL leaves one range of its own open per communicator
// made, as seen on the H200 with CUDA 13.0.) Only runs `call` where ranges are not counted.
template <class Call>
void check_ranges(const names& expected, Call&& call) {
  nvtx::clear();
  const int open_before = nvtx::open_ranges();
  call();
  COALESCE_CUDA_CHECK(cudaDeviceSynchronize());
  if (!counted) return;
  CHECK(nvtx::open_ranges() == open_before);
  names pushed;
  for (const auto& r : nvtx::pushed())
    if (r.domain == "coalesce") pushed.push_back(r.name);
  CHECK(pushed == expected);
}

// A rows x cols matrix whose element (r, c) is r * 1000 + c, halos included.
std::vector<float> numbered(std::size_t rows, std::size_t cols) {
  std::vector<float> v(rows * cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) v[r * cols + c] = float(r * 1000 + c);
  return v;
}

}  // namespace

TEST_CASE("each halo exchange call is one NVTX range named as the call", "[nvtx][nccl]") {
  if (auto reason = coalesce::testing::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  counted = nvtx::counting();
  const single_rank rank;
  const std::size_t rows = 8, cols = 40;  // one halo row or column on each side
  cudaStream_t stream = nullptr;

  SECTION("rows: the blocking call, and the split-phase form's start") {
    coalesce::pitched_matrix<float> m(numbered(rows, cols), rows, cols);
    const coalesce::row_neighbours self{0, 0};
    check_ranges({"coalesce::exchange_row_halos"},
                 [&] { coalesce::exchange_row_halos(m.view(), 1, self, rank.comm, stream); });
    const auto got = m.to_vector();
    CHECK(got[0 * cols + 3] == float((rows - 2) * 1000 + 3));  // the last own row, periodically
    CHECK(got[(rows - 1) * cols + 3] == float(1 * 1000 + 3));  // the first own row

    coalesce::row_halo_exchange<float> split(m.view(), 1, self, rank.comm);
    check_ranges({"coalesce::row_halo_exchange::start"}, [&] { split.start(stream); });
    check_ranges({}, [&] { split.finish(stream); });  // orders two streams: no copy, no launch
  }

  SECTION("columns: each step, the three in one, and the split-phase form") {
    coalesce::pitched_matrix<float> m(numbered(rows, cols), rows, cols);
    coalesce::column_halo_exchange<float> columns(m.view(), 1, coalesce::column_neighbours{0, 0}, rank.comm, stream);
    check_ranges({"coalesce::column_halo_exchange::exchange"}, [&] { columns.exchange(); });
    const auto got = m.to_vector();
    CHECK(got[2 * cols + 0] == float(2 * 1000 + (cols - 2)));  // the last own column
    CHECK(got[2 * cols + (cols - 1)] == float(2 * 1000 + 1));  // the first own column
    check_ranges({"coalesce::column_halo_exchange::pack", "coalesce::column_halo_exchange::post",
                  "coalesce::column_halo_exchange::unpack"},
                 [&] {
                   columns.pack();
                   columns.post();
                   columns.unpack();
                 });
    check_ranges({"coalesce::column_halo_exchange::start", "coalesce::column_halo_exchange::finish"}, [&] {
      columns.start();
      columns.finish(stream);
    });
  }

  SECTION("a volume split along y") {
    const std::size_t depth = 3;
    coalesce::pitched_volume<float> v(depth, rows, cols, 1.0f);
    coalesce::volume_halo_exchange<float> faces(v.view(), coalesce::volume_axis::y, 1, coalesce::axis_neighbours{0, 0},
                                                rank.comm, stream);
    REQUIRE(faces.packs());  // rows of a deep volume: packed, so pack and unpack launch
    check_ranges({"coalesce::volume_halo_exchange::exchange"}, [&] { faces.exchange(); });
    check_ranges({"coalesce::volume_halo_exchange::start", "coalesce::volume_halo_exchange::finish"}, [&] {
      faces.start();
      faces.finish(stream);
    });
  }
}
