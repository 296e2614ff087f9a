// expect: coalesce::transpose: T must be a 4- or 8-byte type
#include <coalesce/transpose.hpp>

#include <cstdint>

void misuse(coalesce::pitched_view<const std::uint16_t> in, coalesce::pitched_view<std::uint16_t> out) {
  coalesce::transpose(in, out);
}
