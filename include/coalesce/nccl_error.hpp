// coalesce: the error an NCCL call of coalesce's halo exchanges and migration reports, with NCCL's
// own text for it. Needs NCCL's header (CMake target coalesce::nccl).
#pragma once
/// @file

#include <nccl.h>

#include <stdexcept>
#include <string>

namespace coalesce {

/// An NCCL call that failed: its result, and NCCL's text for it.
class nccl_error : public std::runtime_error {
 public:
  /// what() is "`what`: NCCL's text for `result`".
  nccl_error(ncclResult_t result, const std::string& what)
      : std::runtime_error(what + ": " + ::ncclGetErrorString(result)), result_(result) {}
  ncclResult_t result() const noexcept { return result_; }  ///< what the NCCL call returned

 private:
  ncclResult_t result_;
};

/// Throws nccl_error naming `what` (the call) unless `result` is ncclSuccess.
inline void throw_on_nccl_error(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) throw nccl_error(result, what);
}

}  // namespace coalesce
