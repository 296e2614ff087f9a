// expect: coalesce::testing::device_buffer<T>: T must be trivially copyable
#include <coalesce/testing/device.hpp>

#include <string>

void misuse() { coalesce::testing::device_buffer<std::string> buffer(4); }
