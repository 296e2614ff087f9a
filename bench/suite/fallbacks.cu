// The fallback groups of the benchmark: each layout that misses a fast path's assumption next to
// the aligned case of the same work, which is its competitor (tests/support/fallbacks.hpp, shared
// with tests/device/fallbacks.cu). coalesce's row is held to targets::fallback_versus_aligned of it.
#include "bench.hpp"
#include "fallbacks.hpp"

#include <string>
#include <vector>

namespace bench {
namespace {

namespace fb = coalesce_test::fallbacks;

row_target within_aligned(double min_fraction_of_dram_peak) {
  return row_target{targets::fallback_versus_aligned, min_fraction_of_dram_peak};
}

// Runs every candidate once after `prepare`, checks it with `exact`, then times them all.
template <class Prepare, class Exact>
void check_and_measure(runner& r, const std::string& group, const std::vector<candidate>& candidates, double bytes,
                       Prepare&& prepare, Exact&& exact) {
  std::printf("%s\n", group.c_str());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    prepare(i);
    candidates[i].launch(0);
    ct::check_sync(candidates[i].name.c_str());
    if (!exact(i)) r.mismatch(group + ": " + candidates[i].name);
  }
  r.measure(group, candidates, bytes);
}

}  // namespace

void fallbacks(runner& r) {
  {
    fb::twelve_byte_columns work(std::size_t(1) << 25);
    const std::vector<candidate> candidates{
        {"coalesce::for_each(soa_view), 7 float columns (aligned case)", row_role::competitor,
         [&](cudaStream_t s) { work.aligned(s); }},
        {"coalesce::for_each(soa_view), 2 Vec3f columns + 1 float", row_role::library,
         [&](cudaStream_t s) { work.fallback(s); }, within_aligned(targets::particle_update_of_peak)},
    };
    check_and_measure(
        r, "fallback: 12-byte fields next to a float column (pos += vel * dt)", candidates, work.bytes,
        [&](std::size_t) { work.reset(); },
        [&](std::size_t i) { return i == 0 ? work.aligned_exact() : work.fallback_exact(); });
  }
  {
    fb::under_aligned_structs work(std::size_t(1) << 26);
    const std::vector<candidate> into{
        {"coalesce::transform(span<const AlignedQuad>) (aligned case)", row_role::competitor,
         [&](cudaStream_t s) { work.transform_aligned(s); }},
        {"coalesce::transform(span<const Quad>), Quad 4-byte aligned", row_role::library,
         [&](cudaStream_t s) { work.transform_fallback(s); }, within_aligned(targets::one_column_of_peak)},
    };
    check_and_measure(
        r, "fallback: a 16-byte struct of 4-byte alignment into one float each", into, 20.0 * double(work.n),
        [&](std::size_t) { work.reset(); }, [&](std::size_t) { return work.sums_exact(); });
    const std::vector<candidate> in_place{
        {"coalesce::for_each(span<AlignedQuad>) (aligned case)", row_role::competitor,
         [&](cudaStream_t s) { work.for_each_aligned(s); }},
        {"coalesce::for_each(span<Quad>), Quad 4-byte aligned", row_role::library,
         [&](cudaStream_t s) { work.for_each_fallback(s); }, within_aligned(targets::one_column_of_peak)},
    };
    check_and_measure(
        r, "fallback: a 16-byte struct of 4-byte alignment in place", in_place, 32.0 * double(work.n),
        [&](std::size_t) { work.reset(); },
        [&](std::size_t i) { return i == 0 ? work.aligned_halved_exact(1) : work.halved_exact(1); });
  }
  {
    fb::offset_array_of_structs work(std::size_t(1) << 25);
    Particle* const placements[] = {work.aligned_structs(), work.offset_structs()};
    const std::vector<candidate> to_soa{
        {"coalesce::copy_aos_to_soa, 16-byte-aligned source (aligned case)", row_role::competitor,
         [&, p = placements[0]](cudaStream_t s) { work.to_soa(p, s); }},
        {"coalesce::copy_aos_to_soa, source 4 bytes off", row_role::library,
         [&, p = placements[1]](cudaStream_t s) { work.to_soa(p, s); }, within_aligned(targets::conversion_of_peak)},
    };
    check_and_measure(
        r, "fallback: AoS to SoA from an array 4 bytes off 16-byte alignment", to_soa, work.bytes,
        [&](std::size_t i) { work.prepare_to_soa(placements[i]); }, [&](std::size_t) { return work.soa_exact(); });
    const std::vector<candidate> to_aos{
        {"coalesce::copy_soa_to_aos, 16-byte-aligned target (aligned case)", row_role::competitor,
         [&, p = placements[0]](cudaStream_t s) { work.to_aos(p, s); }},
        {"coalesce::copy_soa_to_aos, target 4 bytes off", row_role::library,
         [&, p = placements[1]](cudaStream_t s) { work.to_aos(p, s); }, within_aligned(targets::conversion_of_peak)},
    };
    check_and_measure(
        r, "fallback: SoA to AoS into an array 4 bytes off 16-byte alignment", to_aos, work.bytes,
        [&](std::size_t) { work.prepare_to_aos(); }, [&](std::size_t i) { return work.aos_exact(placements[i]); });
  }
}

}  // namespace bench
