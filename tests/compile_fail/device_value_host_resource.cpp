// expect: coalesce::device_value<T, Resource>: Resource must allocate device memory
#include <coalesce/device_value.hpp>
#include <coalesce/memory.hpp>

void misuse() { coalesce::device_value<double, coalesce::pinned_resource> total; }
