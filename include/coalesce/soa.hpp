// coalesce: structure-of-arrays storage for an array-of-structs type. soa_vector<Particle> keeps
// one column per field of Particle, each 256-byte aligned, in one allocation; its soa_view is
// what kernels take. view[i] stands for element i: get<I>(view[i]) or, after
// COALESCE_FIELDS(Particle, x, y, ...), view[i].x is a reference into the x column, so a kernel
// body written for Particle* compiles unchanged and each field access is a coalesced column access.
//
// T: any aggregate (a struct with public fields, no constructors, no virtuals) of up to 24
// trivially copyable fields, none of them a reference, const, a bit-field or a C array (use
// cuda::std::array for those), and no member with an alignas of its own. Host-capable: soa_vector<T, host_space> needs no GPU and no nvcc.
#pragma once

#include <coalesce/config.hpp>
#include <coalesce/detail/fields.hpp>
#include <coalesce/error.hpp>
#include <coalesce/memory.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// A global-namespace type that coalesce passes to the functions COALESCE_FIELDS defines, so that
// argument-dependent lookup also searches the global namespace (see detail::has_named_fields).
struct coalesce_detail_fields_tag {};

namespace coalesce {

template <class T, class Space = device_space>
class soa_view;

namespace detail {

// A fixed array of column pointers (no libcu++, see detail/fields.hpp).
template <class P, std::size_t N>
struct pointer_array {
  P values[N];
  COALESCE_HOST_DEVICE constexpr P& operator[](std::size_t i) { return values[i]; }
  COALESCE_HOST_DEVICE constexpr const P& operator[](std::size_t i) const { return values[i]; }
};

template <class Q, class F>
using qualify_like_t = std::conditional_t<std::is_const_v<Q>, const F, F>;

template <class T, std::size_t... I>
constexpr bool check_fields(std::index_sequence<I...>) {
  static_assert((std::is_trivially_copyable_v<field_type_t<T, I>> && ...),
                "coalesce::soa_vector<T>: every field of T must be trivially copyable (columns move with "
                "cudaMemcpy); store indices or handles instead of objects that own memory");
  return true;
}

// The checks on an element type, in order, each stopping the next from piling on more errors.
template <class T>
constexpr bool check_soa_element() {
  static_assert(std::is_aggregate_v<T> && std::is_class_v<T> && !std::is_union_v<T>,
                "coalesce::soa_vector<T>: T must be an aggregate struct (public fields, no user-declared "
                "constructors, no virtual functions); give the struct plain fields");
  if constexpr (std::is_aggregate_v<T> && std::is_class_v<T> && !std::is_union_v<T>) {
    constexpr std::size_t n = count_fields<T>();
    static_assert(n <= max_fields,
                  "coalesce::soa_vector<T>: T has more than 24 fields; group related fields into structs of "
                  "their own");
    static_assert(n > max_fields || std::is_copy_assignable_v<T>,
                  "coalesce::soa_vector<T>: T has a reference or const field; store values (or indices) instead");
    static_assert(n > max_fields || !std::is_copy_assignable_v<T> || n >= 1, "coalesce::soa_vector<T>: T has no fields");
    if constexpr (n >= 1 && n <= max_fields && std::is_copy_assignable_v<T>) {
      constexpr bool plain_fields = fields_fill_struct<T>();
      static_assert(plain_fields,
                    "coalesce::soa_vector<T>: T's fields do not fill it as their types say: T has a bit-field "
                    "(or a member with its own alignas); give each field a whole type of its own");
      if constexpr (plain_fields) return check_fields<T>(std::make_index_sequence<n>{});
    }
  }
  return true;
}

template <class T>
inline constexpr std::size_t field_count_v = count_fields<T>();

// Whether fields I of T and the member `member` are the same field: compared by address in a
// constant-evaluated probe object.
template <class T, std::size_t I, class F>
COALESCE_HOST_DEVICE constexpr bool is_field(F T::*member) {
  if constexpr (std::is_same_v<field_type_t<T, I>, std::remove_cv_t<F>>) {
    T probe{};
    return static_cast<const void*>(&(probe.*member)) == static_cast<const void*>(&get_leaf<I>(tie_fields(probe)));
  } else {
    return false;
  }
}

template <class T, class F, std::size_t... I>
COALESCE_HOST_DEVICE constexpr std::size_t field_index(F T::*member, std::index_sequence<I...>) {
  std::size_t index = sizeof...(I);
  ((is_field<T, I>(member) ? (index = I, true) : false) || ...);
  return index;
}

// The index of the field `Member` (a pointer to a data member of T).
template <class T, auto Member>
inline constexpr std::size_t field_index_v = field_index(Member, std::make_index_sequence<field_count_v<T>>{});

// --- element proxies ----------------------------------------------------------------------

// Marks the proxies that view[i] returns, for coalesce::get and the iterators.
struct soa_reference_tag {};

// view[i] when T has no COALESCE_FIELDS: positional access only, through get<I>. The name is
// the hint a compiler prints when code writes view[i].x without the macro: "class
// coalesce::detail::no_COALESCE_FIELDS_for<Particle> has no member x".
template <class T>
class no_COALESCE_FIELDS_for : public soa_reference_tag {
  using value_type = std::remove_const_t<T>;
  using references = decltype(tie_fields(std::declval<T&>()));

 public:
  COALESCE_HOST_DEVICE explicit no_COALESCE_FIELDS_for(const references& refs) : refs_(refs) {}

  template <std::size_t I>
  COALESCE_HOST_DEVICE auto& get() const {
    return get_leaf<I>(refs_);
  }
  // Gather: the element as a T.
  COALESCE_HOST_DEVICE operator value_type() const {
    value_type v{};
    tie_fields(v).assign_from(refs_);
    return v;
  }
  // Scatter: every field of `v` into its column.
  template <class U = T, std::enable_if_t<!std::is_const_v<U>, int> = 0>
  COALESCE_HOST_DEVICE const no_COALESCE_FIELDS_for& operator=(const value_type& v) const {
    refs_.assign_from(tie_fields(v));
    return *this;
  }
  // Assigning one element to another copies the values, as for T.
  COALESCE_HOST_DEVICE const no_COALESCE_FIELDS_for& operator=(const no_COALESCE_FIELDS_for& other) const {
    refs_.assign_from(other.refs_);
    return *this;
  }
  no_COALESCE_FIELDS_for(const no_COALESCE_FIELDS_for&) = default;

 private:
  references refs_;
};

// The base of the named proxies COALESCE_FIELDS generates: gather, scatter and get<I>.
template <class Derived, class Q>
struct named_soa_reference : soa_reference_tag {
  using value_type = std::remove_const_t<Q>;
  static constexpr std::size_t fields = field_count_v<value_type>;

  template <std::size_t I>
  COALESCE_HOST_DEVICE auto& get() const {
    return get_leaf<I>(tie_fields(static_cast<const Derived&>(*this), field_count_constant<fields>{}));
  }
  COALESCE_HOST_DEVICE operator value_type() const {
    value_type v{};
    tie_fields(v).assign_from(tie_fields(static_cast<const Derived&>(*this), field_count_constant<fields>{}));
    return v;
  }
  COALESCE_HOST_DEVICE void assign(const value_type& v) const {
    tie_fields(static_cast<const Derived&>(*this), field_count_constant<fields>{}).assign_from(tie_fields(v));
  }
};

// What a COALESCE_FIELDS declaration defines, found by argument-dependent lookup from here:
//   coalesce_detail_fields_declared(const T*, tag)        defined first, so that the macro can
//                                                          check that lookup finds it;
//   coalesce_detail_field_names(const T*, Q*, tag)        returns type_identity<the proxy for Q>,
// where Q is T or const T. The tag is a global-namespace type, so the lookup searches the global
// namespace as well as T's: the macro works in T's namespace and at global scope.
struct fields_declared {};
template <class R>
struct type_identity {
  using type = R;
};

template <class T, class = void>
struct fields_reachable : std::false_type {};
template <class T>
struct fields_reachable<T, std::void_t<decltype(coalesce_detail_fields_declared(static_cast<const T*>(nullptr),
                                                                              ::coalesce_detail_fields_tag{}))>>
    : std::true_type {};

template <class T, class = void>
struct has_named_fields : std::false_type {};
template <class T>
struct has_named_fields<T, std::void_t<decltype(coalesce_detail_field_names(static_cast<const T*>(nullptr),
                                                                          static_cast<T*>(nullptr),
                                                                          ::coalesce_detail_fields_tag{}))>>
    : std::true_type {};

template <class Q, bool Named = has_named_fields<std::remove_const_t<Q>>::value>
struct reference_for {
  using type = no_COALESCE_FIELDS_for<Q>;
};
template <class Q>
struct reference_for<Q, true> {
  using type = typename decltype(coalesce_detail_field_names(static_cast<const std::remove_const_t<Q>*>(nullptr),
                                                             static_cast<Q*>(nullptr),
                                                             ::coalesce_detail_fields_tag{}))::type;
};

// Whether the members name fields 0, 1, 2... of T in order (a COALESCE_FIELDS list).
template <class T, class... Members>
constexpr bool fields_in_order(int, Members... members) {
  std::size_t i = 0;
  bool in_order = true;
  ((in_order = in_order && field_index(members, std::make_index_sequence<field_count_v<T>>{}) == i++), ...);
  return in_order;
}

// COALESCE_FIELDS(Type, ...) reads Type through fields_target: a type is itself, and the name of
// a class template (COALESCE_FIELDS(Vec3, ...)) becomes class_template_given after one
// static_assert, so that the rest of the expansion compiles and that message is the only one.
struct class_template_given {};
template <class T>
constexpr type_identity<T> fields_target() {
  return {};
}
template <template <class...> class>
inline constexpr bool never_for_template = false;
template <template <class...> class Template>
constexpr auto fields_target() {  // auto: deducing it compiles the body, where the message is
  static_assert(never_for_template<Template>,
                "COALESCE_FIELDS(Type, ...): Type names a class template; name the fields of all its "
                "specializations with COALESCE_TEMPLATE_FIELDS((class T), Type<T>, fields...)");
  return type_identity<class_template_given>{};
}

// T, as a type that depends on Q: what the macro's proxies are written in terms of, so that
// nothing in them is compiled before a proxy is asked for.
template <class Q, class T>
struct dependent_on {
  using type = T;
};

// The order check, where it is possible: `check` takes a pointer to the type and checks the
// member pointers of its list. Never called for class_template_given, which has no members.
template <class T, class Check>
constexpr bool named_in_order(Check check) {
  if constexpr (std::is_same_v<T, class_template_given>) {
    return true;
  } else {
    return check(static_cast<T*>(nullptr));
  }
}

}  // namespace detail

// The type of view[i] for a soa_view<T> (T or const T).
template <class T>
using soa_reference_t = typename detail::reference_for<T>::type;

// Field I of an element: of a soa_view element (view[i]) or of a plain struct (p[i]), so kernels
// written with get<I> work on both layouts.
template <std::size_t I, class Ref>
COALESCE_HOST_DEVICE constexpr decltype(auto) get(Ref&& element) {
  if constexpr (std::is_base_of_v<detail::soa_reference_tag, std::remove_cv_t<std::remove_reference_t<Ref>>>) {
    return element.template get<I>();
  } else {
    return detail::get_leaf<I>(detail::tie_fields(element));
  }
}

// The number of fields coalesce sees in T.
template <class T>
inline constexpr std::size_t field_count_v = detail::field_count_v<T>;
// The type of field I of T.
template <class T, std::size_t I>
using field_t = detail::field_type_t<T, I>;

// A random-access iterator over a soa_view; *it is view[i].
template <class T, class Space = device_space>
class soa_iterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = std::remove_const_t<T>;
  using difference_type = std::ptrdiff_t;
  using reference = soa_reference_t<T>;
  using pointer = void;

  soa_iterator() = default;
  COALESCE_HOST_DEVICE soa_iterator(const soa_view<T, Space>& view, std::size_t index) : view_(view), index_(index) {}

  // Host-only for a view of host memory, as view[i] is.
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_HOST_DEVICE reference operator*() const { return view_[index_]; }
  COALESCE_DETAIL_EXEC_CHECK_DISABLE
  COALESCE_HOST_DEVICE reference operator[](difference_type n) const { return view_[index_ + n]; }
  COALESCE_HOST_DEVICE soa_iterator& operator++() { ++index_; return *this; }
  COALESCE_HOST_DEVICE soa_iterator operator++(int) { soa_iterator old = *this; ++index_; return old; }
  COALESCE_HOST_DEVICE soa_iterator& operator--() { --index_; return *this; }
  COALESCE_HOST_DEVICE soa_iterator operator--(int) { soa_iterator old = *this; --index_; return old; }
  COALESCE_HOST_DEVICE soa_iterator& operator+=(difference_type n) { index_ += n; return *this; }
  COALESCE_HOST_DEVICE soa_iterator& operator-=(difference_type n) { index_ -= n; return *this; }
  COALESCE_HOST_DEVICE friend soa_iterator operator+(soa_iterator it, difference_type n) { return it += n; }
  COALESCE_HOST_DEVICE friend soa_iterator operator+(difference_type n, soa_iterator it) { return it += n; }
  COALESCE_HOST_DEVICE friend soa_iterator operator-(soa_iterator it, difference_type n) { return it -= n; }
  COALESCE_HOST_DEVICE friend difference_type operator-(const soa_iterator& a, const soa_iterator& b) {
    return difference_type(a.index_) - difference_type(b.index_);
  }
  COALESCE_HOST_DEVICE friend bool operator==(const soa_iterator& a, const soa_iterator& b) { return a.index_ == b.index_; }
  COALESCE_HOST_DEVICE friend bool operator!=(const soa_iterator& a, const soa_iterator& b) { return a.index_ != b.index_; }
  COALESCE_HOST_DEVICE friend bool operator<(const soa_iterator& a, const soa_iterator& b) { return a.index_ < b.index_; }
  COALESCE_HOST_DEVICE friend bool operator>(const soa_iterator& a, const soa_iterator& b) { return a.index_ > b.index_; }
  COALESCE_HOST_DEVICE friend bool operator<=(const soa_iterator& a, const soa_iterator& b) { return a.index_ <= b.index_; }
  COALESCE_HOST_DEVICE friend bool operator>=(const soa_iterator& a, const soa_iterator& b) { return a.index_ >= b.index_; }
  COALESCE_HOST_DEVICE std::size_t index() const { return index_; }
  COALESCE_HOST_DEVICE const soa_view<T, Space>& view() const { return view_; }

 private:
  soa_view<T, Space> view_{};
  std::size_t index_ = 0;
};

// A non-owning view of `size()` elements stored as columns: one pointer per field. Trivially
// copyable, so kernels take it by value; soa_view<const T> is read-only. Space says where the
// columns live: a view of device memory (the default, what kernels and algorithms take) and a
// view of host memory are different types, so host memory cannot reach a kernel unnoticed.
template <class T, class Space>
class soa_view {
  static_assert(is_memory_space_v<Space>,
                "coalesce::soa_view<T, Space>: Space must be coalesce::host_space or coalesce::device_space");

 public:
  using element_type = T;
  using value_type = std::remove_const_t<T>;
  using memory_space = Space;
  using reference = soa_reference_t<T>;
  using iterator = soa_iterator<T, Space>;
  static constexpr std::size_t field_count = detail::field_count_v<value_type>;
  using column_pointers = detail::pointer_array<std::conditional_t<std::is_const_v<T>, const void*, void*>, field_count>;

 private:
  static_assert(detail::check_soa_element<value_type>());
  template <std::size_t I>
  using column_type = detail::qualify_like_t<T, detail::field_type_t<value_type, I>>;

 public:
  soa_view() = default;
  // Columns given as untyped pointers in field order, each holding at least `size` elements.
  COALESCE_HOST_DEVICE soa_view(const column_pointers& columns, std::size_t size) : columns_(columns), size_(size) {}
  // A read-only view of a writable one.
  template <class U, std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>, int> = 0>
  COALESCE_HOST_DEVICE soa_view(const soa_view<U, Space>& other) : size_(other.size()) {
    for (std::size_t i = 0; i < field_count; ++i) columns_[i] = other.columns()[i];
  }

  COALESCE_HOST_DEVICE std::size_t size() const noexcept { return size_; }
  COALESCE_HOST_DEVICE bool empty() const noexcept { return size_ == 0; }
  COALESCE_HOST_DEVICE const column_pointers& columns() const noexcept { return columns_; }

  // The column of a field, as a raw pointer (256-byte aligned for a soa_vector's view): Key is a
  // field index (column<0>()) or a pointer to member (column<&Particle::x>()).
  template <auto Key>
  COALESCE_HOST_DEVICE auto* column() const noexcept {
    if constexpr (std::is_member_object_pointer_v<decltype(Key)>) {
      constexpr std::size_t index = detail::field_index_v<value_type, Key>;
      static_assert(index < field_count, "coalesce::soa_view::column<&T::member>: not a field of T");
      return column<index>();
    } else {
      static_assert(std::size_t(Key) < field_count, "coalesce::soa_view::column<I>: I is not a field index of T");
      return static_cast<column_type<std::size_t(Key)>*>(columns_[std::size_t(Key)]);
    }
  }

  // Element i: references into every column. Precondition: i < size() (checked under
  // COALESCE_DEBUG). Host and device code for a view of device memory; host code only for a view
  // of host memory (device code that indexes one does not compile).
  template <class S = Space, std::enable_if_t<std::is_same_v<S, device_space>, int> = 0>
  COALESCE_HOST_DEVICE reference operator[](std::size_t i) const {
    return element(i);
  }
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  reference operator[](std::size_t i) const {
    return element(i);
  }

  COALESCE_HOST_DEVICE iterator begin() const { return iterator(*this, 0); }
  COALESCE_HOST_DEVICE iterator end() const { return iterator(*this, size_); }

 private:
  COALESCE_HOST_DEVICE reference element(std::size_t i) const {
    COALESCE_ASSERT(i < size_, "coalesce::soa_view: index out of range");
    return element(i, std::make_index_sequence<field_count>{});
  }
  template <std::size_t... I>
  COALESCE_HOST_DEVICE reference element(std::size_t i, std::index_sequence<I...>) const {
    if constexpr (detail::has_named_fields<value_type>::value) {
      return reference{{}, column<I>()[i]...};
    } else {
      return reference(detail::make_ref_tuple(column<I>()[i]...));
    }
  }

  column_pointers columns_{};
  std::size_t size_ = 0;
};

namespace detail {

// Byte offsets of each column in a soa_vector's single allocation of `capacity` elements: every
// column starts on a 256-byte boundary and is padded to one, so 16-byte vector access to the
// last element of any column stays inside the allocation.
template <class T, std::size_t... I>
detail::pointer_array<std::size_t, sizeof...(I) + 1> column_offsets(std::size_t capacity, std::index_sequence<I...>) {
  constexpr std::size_t field_bytes[] = {sizeof(field_type_t<T, I>)...};
  pointer_array<std::size_t, sizeof...(I) + 1> offsets{};
  std::size_t at = 0;
  for (std::size_t k = 0; k < sizeof...(I); ++k) {
    offsets[k] = at;
    const std::size_t column = checked_round_up(
        checked_multiply(capacity, field_bytes[k], "coalesce::soa_vector: a column of"), allocation_alignment,
        "coalesce::soa_vector: a column of");
    if (column > static_cast<std::size_t>(-1) - at)
      throw std::length_error("coalesce::soa_vector: " + std::to_string(capacity) + " elements overflow std::size_t");
    at += column;
  }
  offsets[sizeof...(I)] = at;
  return offsets;
}

}  // namespace detail

// An owning structure-of-arrays vector of T in `Space`: one allocation, one 256-byte-aligned
// column per field. Copies between spaces and the growth of device vectors are ordered on the
// resource's stream; reading device data back on the host (to_vector) waits for that stream.
template <class T, class Space = device_space, class Resource = default_resource_t<Space>>
class soa_vector {
  static_assert(detail::check_soa_element<T>());
  static_assert(is_memory_space_v<Space>,
                "coalesce::soa_vector<T, Space>: Space must be coalesce::host_space or coalesce::device_space");
  static_assert(std::is_same_v<typename Resource::memory_space, Space>,
                "coalesce::soa_vector<T, Space, Resource>: Resource allocates in a different memory space");

 public:
  using value_type = T;
  using memory_space = Space;
  using resource_type = Resource;
  using view_type = soa_view<T, Space>;
  using const_view_type = soa_view<const T, Space>;
  using iterator = soa_iterator<T, Space>;
  using const_iterator = soa_iterator<const T, Space>;
  using reference = soa_reference_t<T>;
  using const_reference = soa_reference_t<const T>;
  static constexpr std::size_t field_count = detail::field_count_v<T>;

  soa_vector() = default;
  explicit soa_vector(const Resource& resource) : storage_(resource, 0, allocation_alignment) {}
  // `count` value-initialized elements (T{}: zero, or the fields' default member initializers).
  explicit soa_vector(std::size_t count, const Resource& resource = Resource()) : soa_vector(resource) { resize(count); }
  // The elements of an array of structs on the host.
  explicit soa_vector(const std::vector<T>& aos, const Resource& resource = Resource()) : soa_vector(resource) {
    assign_from_host(aos.data(), aos.size());
  }
  // A deep copy of a vector in another (or the same) space.
  template <class S, class R>
  explicit soa_vector(const soa_vector<T, S, R>& other, const Resource& resource = Resource()) : soa_vector(resource) {
    copy_from(other);
  }
  soa_vector(const soa_vector& other) : soa_vector(other.resource()) { copy_from(other); }
  soa_vector(soa_vector&& other) noexcept { swap(other); }
  // Strong guarantee: on failure *this is unchanged.
  soa_vector& operator=(const soa_vector& other) {
    if (this != &other) soa_vector(other).swap(*this);
    return *this;
  }
  soa_vector& operator=(soa_vector&& other) noexcept {
    soa_vector(std::move(other)).swap(*this);
    return *this;
  }
  ~soa_vector() = default;

  void swap(soa_vector& other) noexcept {
    storage_.swap(other.storage_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }
  friend void swap(soa_vector& a, soa_vector& b) noexcept { a.swap(b); }

  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return size_ == 0; }
  const Resource& resource() const noexcept { return storage_.resource(); }
  cudaStream_t stream() const noexcept { return storage_.resource().stream(); }
  // Bytes taken from the resource.
  std::size_t allocated_bytes() const noexcept { return storage_.allocated_bytes(); }

  view_type view() noexcept { return view_type(columns<void*>(), size_); }
  const_view_type view() const noexcept { return const_view_type(columns<const void*>(), size_); }
  const_view_type const_view() const noexcept { return view(); }
  iterator begin() noexcept { return view().begin(); }
  iterator end() noexcept { return view().end(); }
  const_iterator begin() const noexcept { return view().begin(); }
  const_iterator end() const noexcept { return view().end(); }

  // Element access in host space. Precondition: i < size() (checked under COALESCE_DEBUG).
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  reference operator[](std::size_t i) {
    return view()[i];
  }
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  const_reference operator[](std::size_t i) const {
    return view()[i];
  }
  // A device vector is not indexed, neither on the host (its elements are across the bus) nor in
  // a kernel (a kernel that takes the vector gets a copy of the owner, not the columns).
  template <class S = Space, std::enable_if_t<std::is_same_v<S, device_space>, int> = 0>
  COALESCE_HOST_DEVICE reference operator[](std::size_t) const {
    static_assert(std::is_same_v<S, host_space>,
                  "coalesce::soa_vector<T, device_space> has no operator[]: pass vec.view() to the kernel and index "
                  "the view there (or copy to a soa_vector<T, host_space> to read elements on the host)");
    return *static_cast<const reference*>(nullptr);  // never compiled into anything: the assertion fails first
  }
  // Appends `value` (host space), growing the capacity geometrically.
  template <class S = Space, std::enable_if_t<std::is_same_v<S, host_space>, int> = 0>
  void push_back(const T& value) {
    if (size_ == capacity_) reserve(capacity_ == 0 ? 16 : 2 * capacity_);
    view_type(columns<void*>(), size_ + 1)[size_] = value;
    ++size_;
  }

  // Makes room for `count` elements without changing size(). Strong guarantee.
  void reserve(std::size_t count) {
    if (count <= capacity_) return;
    soa_vector next(resource());
    next.allocate(count);
    next.copy_columns_from<Space>(columns<const void*>(), size_, stream());
    next.size_ = size_;
    next.swap(*this);
  }
  // Becomes `count` elements long, keeping the first min(count, size()); new elements are T{}.
  // Strong guarantee.
  void resize(std::size_t count) {
    if (count > capacity_) reserve(count);
    if (count > size_) fill_value_initialized(size_, count);
    size_ = count;
  }
  // Becomes `count` elements long without writing the new ones: for a destination that a kernel
  // is about to overwrite entirely (reading them first is reading uninitialized memory).
  void resize_for_overwrite(std::size_t count) {
    if (count > capacity_) reserve(count);
    size_ = count;
  }
  void clear() noexcept { size_ = 0; }

  // Copies every element of `other`, which must have the same size. Throws std::invalid_argument
  // otherwise.
  template <class S, class R>
  void assign(const soa_vector<T, S, R>& other) {
    if (other.size() != size_)
      throw std::invalid_argument("coalesce::soa_vector::assign: the source has " + std::to_string(other.size()) +
                                  " elements but the destination " + std::to_string(size_) +
                                  "; resize first or construct a new vector");
    copy_columns_from<S>(other.const_view().columns(), size_, detail::device_side_stream<Space, S>(stream(), other.stream()));
    if constexpr (std::is_same_v<Space, host_space>) detail::wait_for<S>(other.stream());
  }

  // The elements as an array of structs on the host; waits for the vector's stream.
  std::vector<T> to_vector() const {
    std::vector<T> aos(size_);
    if constexpr (std::is_same_v<Space, host_space>) {
      const auto v = view();
      for (std::size_t i = 0; i < size_; ++i) aos[i] = v[i];
    } else {
      soa_vector<T, host_space> staging(*this);
      const auto v = staging.view();
      for (std::size_t i = 0; i < size_; ++i) aos[i] = v[i];
    }
    return aos;
  }

 private:
  template <class, class, class>
  friend class soa_vector;

  template <class Pointer>
  detail::pointer_array<Pointer, field_count> columns() const noexcept {
    detail::pointer_array<Pointer, field_count> result{};
    if (capacity_ == 0) return result;
    const auto offsets = detail::column_offsets<T>(capacity_, std::make_index_sequence<field_count>{});
    auto* base = static_cast<unsigned char*>(storage_.get());
    for (std::size_t i = 0; i < field_count; ++i) result[i] = base + offsets[i];
    return result;
  }

  // Takes storage for `count` elements (on an empty vector).
  void allocate(std::size_t count) {
    const auto offsets = detail::column_offsets<T>(count, std::make_index_sequence<field_count>{});
    detail::owned_bytes<Resource>(resource(), offsets[field_count], allocation_alignment).swap(storage_);
    capacity_ = count;
  }

  // Copies `count` elements of every column, ordered on `on`.
  template <class FromSpace, class Pointers>
  void copy_columns_from(const Pointers& from, std::size_t count, cudaStream_t on) {
    copy_columns_from<FromSpace>(from, count, on, std::make_index_sequence<field_count>{});
  }
  template <class FromSpace, class Pointers, std::size_t... I>
  void copy_columns_from(const Pointers& from, std::size_t count, cudaStream_t on, std::index_sequence<I...>) {
    const auto to = columns<void*>();
    (detail::copy_rows<Space, FromSpace>(to[I], 0, from[I], 0, count * sizeof(detail::field_type_t<T, I>), 1, on), ...);
  }

  template <class S, class R>
  void copy_from(const soa_vector<T, S, R>& other) {
    allocate(other.size());
    const cudaStream_t on = detail::device_side_stream<Space, S>(stream(), other.stream());
    copy_columns_from<S>(other.const_view().columns(), other.size(), on);
    // Host elements are read by host code right away: wait for a copy out of the device.
    if constexpr (std::is_same_v<Space, host_space>) detail::wait_for<S>(on);
    size_ = other.size();
  }

  // Scatters an array of structs from the host into the columns (staged in host memory first
  // for a device vector: one copy per column).
  void assign_from_host(const T* aos, std::size_t count) {
    if constexpr (std::is_same_v<Space, host_space>) {
      allocate(count);
      const view_type v(columns<void*>(), count);
      for (std::size_t i = 0; i < count; ++i) v[i] = aos[i];
      size_ = count;
    } else {
      soa_vector<T, host_space> staging;
      staging.assign_from_host(aos, count);
      copy_from(staging);
    }
  }

  // Elements [first, last) = T{}, column by column: each column is filled by doubling copies, so
  // this needs no kernel.
  void fill_value_initialized(std::size_t first, std::size_t last) {
    fill_value_initialized(first, last, std::make_index_sequence<field_count>{});
  }
  template <std::size_t... I>
  void fill_value_initialized(std::size_t first, std::size_t last, std::index_sequence<I...>) {
    const T value{};
    const auto to = columns<void*>();
    (fill_column(static_cast<detail::field_type_t<T, I>*>(to[I]) + first, last - first, detail::get_leaf<I>(detail::tie_fields(value))),
     ...);
  }
  template <class F>
  void fill_column(F* first, std::size_t count, const F& value) {
    if (count == 0) return;
    detail::copy_rows<Space, host_space>(first, 0, &value, 0, sizeof(F), 1, stream());
    for (std::size_t done = 1; done < count; done *= 2) {
      const std::size_t n = done < count - done ? done : count - done;
      detail::copy_rows<Space, Space>(first + done, 0, first, 0, n * sizeof(F), 1, stream());
    }
  }

  detail::owned_bytes<Resource> storage_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace coalesce

// Names the fields of `Type`, in declaration order, so that view[i].x is a reference into the x
// column of a soa_view<Type>:
//   struct Particle { float x, y, z, vx, vy, vz; };
//   COALESCE_FIELDS(Particle, x, y, z, vx, vy, vz)
// Write it in Type's namespace, or at global scope (there Type may be qualified: sim::Particle);
// the trailing semicolon is optional. For a class template, give its parameters and the type:
//   template <class T> struct Vec3 { T x, y, z; };
//   COALESCE_TEMPLATE_FIELDS((class T), Vec3<T>, x, y, z)
// (a type with a comma goes in parentheses: COALESCE_TEMPLATE_FIELDS((class A, class B), (Pair<A, B>), a, b)).
// Mistakes stop at the macro with one static_assert: a field left out or out of order, more than
// 24 names, or a namespace where coalesce cannot find the declaration.
#define COALESCE_FIELDS(Type, ...)                                                                             \
  COALESCE_DETAIL_FIELDS((), (template <class coalesce_qualified>),                                           \
                         (typename decltype(::coalesce::detail::fields_target<COALESCE_DETAIL_UNPAREN(Type)>())::type), #Type, \
                         __VA_ARGS__)
#define COALESCE_TEMPLATE_FIELDS(Parameters, Type, ...)                                                        \
  COALESCE_DETAIL_FIELDS((template <COALESCE_DETAIL_UNPAREN(Parameters)>),                                    \
                         (template <class coalesce_qualified, COALESCE_DETAIL_UNPAREN(Parameters)>), Type, #Type, \
                         __VA_ARGS__)

// Two function definitions: ending on a closing brace, the expansion takes a semicolon after it
// or none. The proxy is a class local to the function, so no name is pasted together from Type
// (which may be qualified or a template-id).
#define COALESCE_DETAIL_FIELDS(Head, ProxyHead, Type, TypeName, ...)                                           \
  COALESCE_DETAIL_UNPAREN(Head)                                                                                 \
  [[maybe_unused]] inline ::coalesce::detail::fields_declared coalesce_detail_fields_declared(                  \
      const COALESCE_DETAIL_UNPAREN(Type)*, ::coalesce_detail_fields_tag) {                                     \
    /* The checks, here: for a plain type this body is compiled at the macro, once. */                          \
    using coalesce_target = COALESCE_DETAIL_UNPAREN(Type);                                                             \
    constexpr bool coalesce_template = std::is_same_v<coalesce_target, ::coalesce::detail::class_template_given>;  \
    constexpr std::size_t coalesce_names = COALESCE_DETAIL_COUNT_ARGS(__VA_ARGS__);                             \
    static_assert(coalesce_template || ::coalesce::detail::fields_reachable<coalesce_target>::value,              \
                  "COALESCE_FIELDS(" TypeName ", ...): coalesce cannot find this declaration; write it in the " \
                  "namespace of " TypeName ", or at global scope");                                             \
    static_assert(coalesce_names <= ::coalesce::detail::max_fields,                                              \
                  "COALESCE_FIELDS(" TypeName ", ...): more than 24 names; coalesce reflects at most 24 "       \
                  "fields, so group related fields into structs of their own");                                 \
    static_assert(coalesce_template || coalesce_names > ::coalesce::detail::max_fields ||                        \
                      coalesce_names == ::coalesce::detail::field_count_v<coalesce_target>,                       \
                  "COALESCE_FIELDS(" TypeName ", ...): name every field of " TypeName ", in declaration order"); \
    static_assert(coalesce_names != ::coalesce::detail::field_count_v<coalesce_target> ||                         \
                      ::coalesce::detail::named_in_order<coalesce_target>([](auto* coalesce_probe) {              \
                        using coalesce_type = std::remove_pointer_t<decltype(coalesce_probe)>;                  \
                        return ::coalesce::detail::fields_in_order<coalesce_type>(                              \
                            0 COALESCE_DETAIL_FOR_EACH(COALESCE_DETAIL_MEMBER_POINTER, _, __VA_ARGS__));        \
                      }),                                                                                       \
                  "COALESCE_FIELDS(" TypeName ", ...): name every field of " TypeName ", in declaration order"); \
    return {};                                                                                                  \
  }                                                                                                             \
  COALESCE_DETAIL_UNPAREN(ProxyHead)                                                                            \
  auto coalesce_detail_field_names(const COALESCE_DETAIL_UNPAREN(Type)*, coalesce_qualified*,                   \
                                   ::coalesce_detail_fields_tag) {                                              \
    using coalesce_type =                                                                                       \
        typename ::coalesce::detail::dependent_on<coalesce_qualified, COALESCE_DETAIL_UNPAREN(Type)>::type;     \
    /* For a class template, the checks run when the first proxy is made. */                                    \
    (void)coalesce_detail_fields_declared(static_cast<const coalesce_type*>(nullptr), ::coalesce_detail_fields_tag{}); \
    /* Members of a local class are instantiated with the function: the read-only proxy must */                 \
    /* not even declare assignment, so it is a class of its own. */                                            \
    if constexpr (std::is_const_v<coalesce_qualified>) {                                                       \
      struct reference : ::coalesce::detail::named_soa_reference<reference, coalesce_qualified> {               \
        COALESCE_DETAIL_FOR_EACH(COALESCE_DETAIL_NAMED_FIELD, _, __VA_ARGS__)                                   \
      };                                                                                                        \
      return ::coalesce::detail::type_identity<reference>{};                                                    \
    } else {                                                                                                    \
      struct reference : ::coalesce::detail::named_soa_reference<reference, coalesce_qualified> {               \
        COALESCE_DETAIL_FOR_EACH(COALESCE_DETAIL_NAMED_FIELD, _, __VA_ARGS__)                                   \
        COALESCE_HOST_DEVICE const reference& operator=(const coalesce_type& value) const {                     \
          this->assign(value);                                                                                  \
          return *this;                                                                                         \
        }                                                                                                       \
        COALESCE_HOST_DEVICE const reference& operator=(const reference& other) const {                         \
          this->assign(static_cast<coalesce_type>(other));                                                      \
          return *this;                                                                                         \
        }                                                                                                       \
      };                                                                                                        \
      return ::coalesce::detail::type_identity<reference>{};                                                    \
    }                                                                                                           \
  }

#define COALESCE_DETAIL_NAMED_FIELD(unused, name) \
  ::coalesce::detail::qualify_like_t<coalesce_qualified, decltype(coalesce_type::name)>& name;
#define COALESCE_DETAIL_MEMBER_POINTER(unused, name) , &coalesce_type::name
