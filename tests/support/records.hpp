// The element of coalesce's container tests: four columns of four sizes, whose default member
// initializers make T{} differ from zero bytes (so a value-initialized element is told from
// memory that was only zeroed).
#pragma once

#include <coalesce/soa.hpp>

#include <cstdint>

struct Record {
  std::int64_t key;
  float weight = 1.5f;
  std::int16_t tag = -3;
  double value;
};
COALESCE_FIELDS(Record, key, weight, tag, value);

inline bool operator==(const Record& a, const Record& b) {
  return a.key == b.key && a.weight == b.weight && a.tag == b.tag && a.value == b.value;
}
