// expect: coalesce::device_value<T>: T must be a trivially copyable, default-constructible, non-const object type
#include <coalesce/device_value.hpp>

#include <string>

void misuse() { coalesce::device_value<std::string> name; }
