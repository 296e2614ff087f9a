// coalesce::for_each on records as they are in real codes (issue 32): a soa_vector of 64 fields,
// and one whose momentum is a class like Eigen::Vector3d, bitwise copyable by specialization of
// coalesce::is_bitwise_copyable; each checked element by element against the same update on the
// host.
#include <coalesce/algorithm.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/testing/testing.hpp>

#include "coalesce_device_test.hpp"
#include "many_fields.hpp"

#include <cstddef>
#include <utility>
#include <vector>

namespace ct = coalesce::testing;
using coalesce_test::many_field_type;
using coalesce_test::many_field_value;

namespace {

// Field k of element i after bump_every_field: its value plus k + 1, in its own type.
template <std::size_t K>
many_field_type<K> bumped_value(std::size_t i) {
  return static_cast<many_field_type<K>>(many_field_value<K>(i) + many_field_type<K>(K + 1));
}

// Adds k + 1 to every field k: every one of the 64 columns changes, each by its own amount.
struct bump_every_field {
  template <std::size_t... K>
  __device__ static void bump(coalesce::soa_reference_t<event64> e, std::index_sequence<K...>) {
    ((coalesce::get<K>(e) = static_cast<many_field_type<K>>(coalesce::get<K>(e) + many_field_type<K>(K + 1))), ...);
  }
  __device__ void operator()(coalesce::soa_reference_t<event64> e) const { bump(e, std::make_index_sequence<64>{}); }
};

template <std::size_t... K>
bool columns_bumped(const coalesce::soa_view<const event64, coalesce::host_space>& view, std::size_t i,
                    std::index_sequence<K...>) {
  return ((view.leaf_column<K>()[i] == bumped_value<K>(i)) && ...);
}

// The momentum doubled in x, shifted in y, mirrored in z, and the charge flipped; hits unchanged.
struct turn_track {
  __host__ __device__ void operator()(track& t) const {
    t.momentum = vector3d(t.momentum[0] * 2.0, t.momentum[1] + 1.0, -t.momentum[2]);
    t.charge = -t.charge;
  }
  __device__ void operator()(coalesce::soa_reference_t<track> t) const {
    t.momentum = vector3d(t.momentum[0] * 2.0, t.momentum[1] + 1.0, -t.momentum[2]);
    t.charge = -t.charge;
  }
};

// Odd, so that the walk has a tail as well as whole chunks.
constexpr std::size_t element_count = 100003;

}  // namespace

TEST_CASE("for_each over soa_vectors of 64 fields and of a field bitwise copyable by specialization matches the host") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);

  std::vector<event64> events;
  for (std::size_t i = 0; i < element_count; ++i) events.push_back(make_event64(i));
  coalesce::soa_vector<event64> on_device(events);
  coalesce::for_each(on_device.view(), bump_every_field{});
  const coalesce::soa_vector<event64, coalesce::host_space> events_after(on_device);
  for (std::size_t i = 0; i < element_count; ++i)
    if (!columns_bumped(events_after.const_view(), i, std::make_index_sequence<64>{}))
      FAIL("event " << i << " differs from the host's update");

  std::vector<track> tracks, expected;
  for (std::size_t i = 0; i < element_count; ++i) {
    tracks.push_back(make_track(i));
    expected.push_back(make_track(i));
    turn_track{}(expected.back());
  }
  coalesce::soa_vector<track> tracks_on_device(tracks);
  coalesce::for_each(tracks_on_device.view(), turn_track{});
  const auto tracks_after = tracks_on_device.to_vector();
  REQUIRE(tracks_after.size() == element_count);
  for (std::size_t i = 0; i < element_count; ++i)
    if (!same_track(tracks_after[i], expected[i])) FAIL("track " << i << " differs from the host's update");
}
