// coalesce: stable compaction of SoA data. erase_if removes a device soa_vector's elements for
// which a predicate holds, from every column; copy_if fills a soa_vector with a view's elements
// for which it holds. The predicate receives what for_each's f receives for a read-only element
// (p.x < 0 is the whole user code). Needs a CUDA compiler.
#pragma once
/// @file

#if !defined(__CUDACC__)
// One error instead of pages: a host compiler stops at the first CUDA keyword in here.
#  error \
      "coalesce/compact.hpp launches kernels: include it from a .cu file (or a source with LANGUAGE CUDA), compiled by nvcc"
#else

#  include <coalesce/algorithm.hpp>
#  include <coalesce/config.hpp>
#  include <coalesce/detail/capture.hpp>
#  include <coalesce/detail/compact_walk.hpp>
#  include <coalesce/detail/nvtx.hpp>
#  include <coalesce/layout_vector.hpp>
#  include <coalesce/memory.hpp>
#  include <coalesce/soa.hpp>

#  include <cuda_runtime_api.h>

#  include <cstddef>
#  include <type_traits>

namespace coalesce {
namespace detail {

// copy_if's input: a soa_view of device memory whose elements are the output's.
template <class View>
inline constexpr bool is_compaction_input_v = is_soa_view_v<View>;
template <class T, class L, class Space>
inline constexpr bool is_compaction_input_v<layout_view<T, L, Space>> = true;

template <class View, class T>
constexpr bool copy_if_view_ok() {
  constexpr bool soa = is_compaction_input_v<View>;
  static_assert(soa, "coalesce::copy_if: the input must be a soa_view or layout_view of device memory, or a device "
                     "coalesce::vector");
  if constexpr (soa) {
    constexpr bool device = std::is_same_v<typename view_space<View>::type, device_space>;
    static_assert(device,
                  "coalesce::copy_if: the input is of host memory (a host_space soa_vector's view); the GPU cannot "
                  "read it: copy it into a device container and pass that");
    constexpr bool same = std::is_same_v<std::remove_const_t<typename View::element_type>, T>;
    static_assert(!device || same, "coalesce::copy_if: the input's element type must be the output vector's");
    return device && same;
  }
  return false;
}

// Why a compaction cannot be captured, and what to do instead: the size it makes is known only
// once the device has counted, and a graph replays the sizes of its capture.
inline void refuse_compaction_capture(cudaStream_t stream, const char* what) {
  refuse_capture(stream, what,
                 "it waits for the device's count of the elements kept, which sizes the new storage (a graph "
                 "replays fixed sizes and cannot wait)",
                 "call it outside the capture, between replays; it gives the vector new storage, so capture the "
                 "graphs that use the vector again after it");
}

template <class T, class Space, class Vector, class Pred>
std::size_t erase_from(Vector& v, const Pred& pred) {
  static_assert(std::is_same_v<Space, device_space>,
                "coalesce::erase_if: the vector is in host_space; remove a host vector's elements with "
                "std::remove_if on its iterators and resize, or copy it into a device vector");
  if constexpr (std::is_same_v<Space, device_space>) {
    refuse_compaction_capture(v.stream(), "coalesce::erase_if");
    const std::size_t n = v.size();
    using keep = keep_when<Pred, false>;
    using in = typename Vector::const_view_type;
    const compaction<T, keep, in> counted(v.const_view(), keep{pred}, v.stream(), "coalesce::erase_if");
    if (counted.kept() == n) return 0;
    Vector kept(v.resource());
    kept.resize_for_overwrite(counted.kept());
    counted.move_into(kept.view());
    v.swap(kept);  // the old storage is freed in stream order, after the move that reads it
    return n - counted.kept();
  } else {
    return 0;
  }
}

// copy_if into `out` (a device soa_vector or layout_vector) from a view of any layout.
template <class T, class Space, class View, class Vector, class Pred>
std::size_t copy_into(View view, Vector& out, const Pred& pred) {
  static_assert(std::is_same_v<Space, device_space>,
                "coalesce::copy_if: the output vector is in host_space; copy into a device vector");
  const auto walked = as_walkable(view);
  using walked_type = std::remove_const_t<decltype(walked)>;
  if constexpr (std::is_same_v<Space, device_space> && copy_if_view_ok<walked_type, T>()) {
    refuse_compaction_capture(out.stream(), "coalesce::copy_if");
    using keep = keep_when<Pred, true>;
    const auto in = as_const_view(walked);
    using in_type = std::remove_const_t<decltype(in)>;
    require_device_columns(walk_of<in_type>::columns(in), 1, in.size(), "coalesce::copy_if");
    const compaction<T, keep, in_type> counted(in, keep{pred}, out.stream(), "coalesce::copy_if");
    Vector kept(out.resource());
    kept.resize_for_overwrite(counted.kept());
    counted.move_into(kept.view());
    out.swap(kept);
    return counted.kept();
  } else {
    return 0;
  }
}

}  // namespace detail

/// Removes from `v` (a device soa_vector), stably, every element e for which pred(e) holds, from
/// all columns, and returns how many it removed. pred receives the const named-field proxy of an
/// element in registers and is called twice per element (once to count, once to move): it must be
/// a pure function of the element.
///
/// Runs on v's stream and waits once, for the count, which sizes the new storage: two passes over
/// tiles of 2048 elements, the first reading only the columns pred reads, the second reading every
/// column and writing the kept elements into new storage from v's resource, which then replaces
/// v's (for a moment both are held; iterators and views of v are invalidated). Nothing is moved
/// when nothing is removed. Throws std::logic_error, having done nothing, while v's stream is being
/// captured into a CUDA graph (the wait cannot be recorded); coalesce::cuda_error if a launch, the
/// scan or the copy fails.
template <class T, class Space, class Resource, class Pred>
std::size_t erase_if(soa_vector<T, Space, Resource>& v, Pred pred) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::erase_if");
  return detail::erase_from<T, Space>(v, pred);
}
/// The same on a device layout_vector (records or tiles): each kept element is read and written
/// whole, its records' or tiles' leaves a leaf at a time.
template <class T, class Layout, class Space, class Resource, class Pred>
std::size_t erase_if(layout_vector<T, Layout, Space, Resource>& v, Pred pred) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::erase_if");
  return detail::erase_from<T, Space>(v, pred);
}

/// Makes `out` (a device soa_vector) hold, in order, the elements e of `view` (a soa_view of device
/// memory, or a device soa_vector) for which pred(e) holds, and returns how many. pred is as for
/// erase_if. Runs on out's stream (order the input's writes before it) and waits once, for the
/// count; out gets new storage of that size from its resource, so `view` may be out's own.
/// Throws std::logic_error, having done nothing, while out's stream is being captured into a CUDA
/// graph (the wait cannot be recorded); coalesce::cuda_error if a launch, the scan or the copy
/// fails.
template <class View, class T, class Space, class Resource, class Pred>
std::size_t copy_if(View view, soa_vector<T, Space, Resource>& out, Pred pred) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::copy_if");
  return detail::copy_into<T, Space>(view, out, pred);
}
/// The same into a device layout_vector (records or tiles), from a view of any layout.
template <class View, class T, class Layout, class Space, class Resource, class Pred>
std::size_t copy_if(View view, layout_vector<T, Layout, Space, Resource>& out, Pred pred) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::copy_if");
  return detail::copy_into<T, Space>(view, out, pred);
}
/// The same from a device soa_vector, on the output's stream.
template <class T, class R1, class R2, class Pred>
std::size_t copy_if(const soa_vector<T, device_space, R1>& v, soa_vector<T, device_space, R2>& out, Pred pred) {
  COALESCE_DETAIL_NVTX_RANGE("coalesce::copy_if");
  return copy_if(v.const_view(), out, pred);
}

/// copy_if between two device layout_vectors (records or tiles), on the output's stream.
template <class T, class L1, class R1, class L2, class R2, class Pred>
std::size_t copy_if(const layout_vector<T, L1, device_space, R1>& v, layout_vector<T, L2, device_space, R2>& out,
                    Pred pred) {
  return copy_if(v.const_view(), out, pred);
}
/// copy_if from a device layout_vector into a device soa_vector, on the output's stream.
template <class T, class L1, class R1, class R2, class Pred>
std::size_t copy_if(const layout_vector<T, L1, device_space, R1>& v, soa_vector<T, device_space, R2>& out, Pred pred) {
  return copy_if(v.const_view(), out, pred);
}
/// copy_if from a device soa_vector into a device layout_vector, on the output's stream.
template <class T, class R1, class L2, class R2, class Pred>
std::size_t copy_if(const soa_vector<T, device_space, R1>& v, layout_vector<T, L2, device_space, R2>& out, Pred pred) {
  return copy_if(v.const_view(), out, pred);
}

/// Both change a vector's size, which only the vector can: erase_if takes the vector itself, and
/// copy_if's output is one. A view (or a const vector) handed over instead stops here, with one
/// message instead of "no instance of function template".
template <class T, class Space, class Pred>
std::size_t erase_if(soa_view<T, Space>, Pred) {
  static_assert(detail::is_container<soa_view<T, Space>>::value,
                "coalesce::erase_if: takes the device soa_vector itself, erase_if(vec, pred), not a view of it (nor a "
                "const vector): removing elements changes the vector's size and storage, which a view cannot");
  return 0;
}
/// Refused at compile time: a const vector cannot lose elements.
template <class T, class Space, class Resource, class Pred>
std::size_t erase_if(const soa_vector<T, Space, Resource>&, Pred) {
  static_assert(!detail::is_container<soa_vector<T, Space, Resource>>::value,
                "coalesce::erase_if: takes the device soa_vector itself, erase_if(vec, pred), not a view of it (nor a "
                "const vector): removing elements changes the vector's size and storage, which a view cannot");
  return 0;
}
/// Refused at compile time: copy_if's output gets new storage of the size kept, which a view
/// cannot; pass the device soa_vector.
template <class View, class T, class Space, class Pred>
std::size_t copy_if(View, soa_view<T, Space>, Pred) {
  static_assert(detail::is_container<soa_view<T, Space>>::value,
                "coalesce::copy_if: the output must be a device soa_vector, copy_if(view, out_vector, pred), not a "
                "view or a span (nor a const vector): copy_if gives it new storage of the size kept, which a view "
                "cannot");
  return 0;
}
/// Refused at compile time: nor can a span be copy_if's output.
template <class View, class U, std::size_t Extent, class Pred>
std::size_t copy_if(View, cuda::std::span<U, Extent>, Pred) {
  static_assert(detail::is_container<cuda::std::span<U, Extent>>::value,
                "coalesce::copy_if: the output must be a device soa_vector, copy_if(view, out_vector, pred), not a "
                "view or a span (nor a const vector): copy_if gives it new storage of the size kept, which a view "
                "cannot");
  return 0;
}
/// Refused at compile time: nor can a const vector, whose storage cannot be replaced.
template <class View, class T, class Space, class Resource, class Pred>
std::size_t copy_if(View, const soa_vector<T, Space, Resource>&, Pred) {
  static_assert(!detail::is_container<soa_vector<T, Space, Resource>>::value,
                "coalesce::copy_if: the output must be a device soa_vector, copy_if(view, out_vector, pred), not a "
                "view or a span (nor a const vector): copy_if gives it new storage of the size kept, which a view "
                "cannot");
  return 0;
}

}  // namespace coalesce

#endif  // __CUDACC__
