// expect: coalesce::pitched_matrix<T>: T must be a trivially copyable
#include <coalesce/pitched_matrix.hpp>

#include <string>

void misuse() { coalesce::pitched_matrix<std::string, coalesce::host_space> names(4, 4); }
