// The BabelStream group of the benchmark: its six kernels (Copy c = a, Mul b = s c, Add c = a + b,
// Triad a = b + s c, Nstream a += b + s c, Dot sum a b) over 2^28 doubles and 2^28 floats, the
// three arrays the columns of one soa_vector<stream_row<T>>. coalesce twice per kernel: as a user
// writes it first (for_each over the vector, transform_reduce over it for Dot) and through
// transform over column spans and coalesce::inputs (transform_reduce over inputs for Dot). Copy,
// Mul, Add and Triad are timed alone and in BabelStream's sequence (a group of its own). Alone,
// each writes what its output already holds from the launch before; for_each stores it anyway,
// since f overwrites the column without reading it (and so never loads it).
// Against BabelStream-shaped kernels (one element per thread, 1024 threads a block, as its CUDA
// version launches them), the best hand-written kernel we know (one 16-byte vector of each array
// per thread, __restrict__), cub::DeviceTransform and Thrust with par_nosync. Two more rows: two
// inputs into one output (Add) is above; one input into two outputs, (b, c) = (s a, a + s), here.
// Every candidate's result is checked on the device against the value BabelStream's constants
// give.
#include <coalesce/algorithm.hpp>
#include <coalesce/inputs.hpp>
#include <coalesce/reduce.hpp>
#include <coalesce/soa.hpp>
#include <coalesce/soa_span.hpp>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda/std/functional>
#include <cuda/std/span>
#include <cuda/std/tuple>
#include <thrust/execution_policy.h>
#include <thrust/inner_product.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/transform.h>

#include "bench.hpp"

#include <cmath>
#include <string>
#include <vector>

template <class T>
struct stream_row {
  T a, b, c;
};
COALESCE_TEMPLATE_FIELDS((class T), stream_row<T>, a, b, c);
template <class T>
struct two_outputs {
  T b, c;
};
COALESCE_TEMPLATE_FIELDS((class T), two_outputs<T>, b, c);

namespace bench {
namespace {

// BabelStream's start values and scalar.
constexpr double start_a = 0.1, start_b = 0.2, start_c = 0.0, scalar = 0.4;

inline void check_cub(cudaError_t status, const char* what) { coalesce::throw_on_error(status, what); }

// --- the kernels' element operations ---------------------------------------------------------
template <class T>
struct copy_op {
  __host__ __device__ T operator()(T a) const { return a; }
};
template <class T>
struct mul_op {
  T s;
  __host__ __device__ T operator()(T c) const { return s * c; }
};
template <class T>
struct add_op {
  __host__ __device__ T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct triad_op {
  T s;
  __host__ __device__ T operator()(T b, T c) const { return b + s * c; }
};
template <class T>
struct nstream_op {
  T s;
  __host__ __device__ T operator()(T a, T b, T c) const { return a + b + s * c; }
};
template <class T>
struct times_op {
  __host__ __device__ T operator()(T a, T b) const { return a * b; }
};
template <class T>
struct product_at {
  const T* a;
  const T* b;
  __host__ __device__ T operator()(std::size_t i) const { return a[i] * b[i]; }
};
template <class T>
struct split_op {  // one input, two outputs
  T s;
  __host__ __device__ cuda::std::tuple<T, T> operator()(T a) const { return {s * a, a + s}; }
};

// The for_each forms, as a user writes them (functors: a device lambda cannot be defined in the
// host lambdas that hold the rows).
struct start_values {
  template <class E>
  __device__ void operator()(E&& e) const {
    using T = decltype(coalesce::value(e.a));
    e.a = T(start_a);
    e.b = T(start_b);
    e.c = T(start_c) + T(0.3);  // c = 0.3, so that Mul and Triad see a value of their own
  }
};
struct copy_element {
  template <class E>
  __device__ void operator()(E&& e) const {
    e.c = e.a;
  }
};
template <class T>
struct mul_element {
  T s;
  template <class E>
  __device__ void operator()(E&& e) const {
    e.b = s * e.c;
  }
};
struct add_element {
  template <class E>
  __device__ void operator()(E&& e) const {
    e.c = e.a + e.b;
  }
};
template <class T>
struct triad_element {
  T s;
  template <class E>
  __device__ void operator()(E&& e) const {
    e.a = e.b + s * e.c;
  }
};
template <class T>
struct nstream_element {
  T s;
  template <class E>
  __device__ void operator()(E&& e) const {
    e.a += e.b + s * e.c;
  }
};
template <class T>
struct dot_element {
  template <class E>
  __device__ T operator()(const E& e) const {
    return e.a * e.b;
  }
};
template <class T>
struct split_element {
  T s;
  __device__ two_outputs<T> operator()(T a) const { return two_outputs<T>{s * a, a + s}; }
};

// --- BabelStream-shaped kernels: one element per thread, blocks of 1024 -------------------------
constexpr unsigned babel_threads = 1024;
template <class T, class Op>
__global__ void babel_one(const T* a, T* out, Op op) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  out[i] = op(a[i]);
}
template <class T, class Op>
__global__ void babel_two(const T* a, const T* b, T* out, Op op) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  out[i] = op(a[i], b[i]);
}
template <class T>
__global__ void babel_nstream(T* a, const T* b, const T* c, T s) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  a[i] += b[i] + s * c[i];
}
// Dot: a wave of blocks striding over the arrays, a tree in shared memory, partial sums that the
// last block to arrive adds up (BabelStream adds them on the host; here the result stays on the
// device, as every other Dot row's does).
template <class T>
__global__ void babel_dot(const T* a, const T* b, std::size_t n, T* partials, unsigned* arrivals, T* out) {
  __shared__ T sums[babel_threads];
  __shared__ bool last;
  T sum = 0;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    sum += a[i] * b[i];
  sums[threadIdx.x] = sum;
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    __syncthreads();
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sums[0];
    __threadfence();
    last = atomicInc(arrivals, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (threadIdx.x == 0) {
    T total = 0;
    for (unsigned k = 0; k < gridDim.x; ++k) total += __ldcg(partials + k);
    *out = total;
  }
}

// --- the best hand-written: one 16-byte vector of each array per thread, restrict ---------------
template <class T>
struct alignas(16) vec {
  static constexpr unsigned size = 16 / sizeof(T);
  T v[size];
};
constexpr unsigned vector_threads = 256;
template <class T, class Op>
__global__ void vector_one(const vec<T>* __restrict__ a, vec<T>* __restrict__ out, Op op) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const vec<T> x = a[i];
  vec<T> y;
#pragma unroll
  for (unsigned k = 0; k < vec<T>::size; ++k) y.v[k] = op(x.v[k]);
  out[i] = y;
}
template <class T, class Op>
__global__ void vector_two(const vec<T>* __restrict__ a, const vec<T>* __restrict__ b, vec<T>* __restrict__ out,
                           Op op) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const vec<T> x = a[i], y = b[i];
  vec<T> z;
#pragma unroll
  for (unsigned k = 0; k < vec<T>::size; ++k) z.v[k] = op(x.v[k], y.v[k]);
  out[i] = z;
}
template <class T>
__global__ void vector_nstream(vec<T>* a, const vec<T>* __restrict__ b, const vec<T>* __restrict__ c, T s) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  vec<T> x = a[i];
  const vec<T> y = b[i], z = c[i];
#pragma unroll
  for (unsigned k = 0; k < vec<T>::size; ++k) x.v[k] += y.v[k] + s * z.v[k];
  a[i] = x;
}
template <class T>
__global__ void vector_split(const vec<T>* __restrict__ a, vec<T>* __restrict__ b, vec<T>* __restrict__ c, T s) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const vec<T> x = a[i];
  vec<T> y, z;
#pragma unroll
  for (unsigned k = 0; k < vec<T>::size; ++k) {
    y.v[k] = s * x.v[k];
    z.v[k] = x.v[k] + s;
  }
  b[i] = y;
  c[i] = z;
}

// --- the check ------------------------------------------------------------------------------
template <class T>
struct far_from {
  T want, tolerance;
  __device__ unsigned long long operator()(T x) const {
    return fabs(double(x) - double(want)) > double(tolerance) ? 1ull : 0ull;
  }
};
// How many elements of `column` are not within a relative 1e-6 of `want`.
template <class T>
unsigned long long wrong_in(cuda::std::span<const T> column, double want) {
  const T tolerance = T(1e-6 * std::abs(want) + 1e-30);
  return coalesce::transform_reduce(column, far_from<T>{T(want), tolerance}, 0ull, cuda::std::plus<>{});
}

template <class T>
void babelstream_group(runner& r, const char* type) {
  const std::size_t n = std::size_t(1) << 28;
  coalesce::soa_vector<stream_row<T>> v(n);
  const auto view = v.view();
  T* a = view.template column<&stream_row<T>::a>();
  T* b = view.template column<&stream_row<T>::b>();
  T* c = view.template column<&stream_row<T>::c>();
  const auto sa = coalesce::column_span<&stream_row<T>::a>(view);
  const auto sb = coalesce::column_span<&stream_row<T>::b>(view);
  const auto sc = coalesce::column_span<&stream_row<T>::c>(view);
  const cuda::std::span<const T> ca(a, n), cb(b, n), cc(c, n);
  const T s = T(scalar);
  const auto reset = [&] {
    coalesce::for_each(view, start_values{});
    ct::check_sync("resetting the arrays");
  };
  const double A = T(start_a), B = T(start_b), C = T(T(start_c) + T(0.3));
  const unsigned babel_blocks = unsigned(n / babel_threads);
  const unsigned vector_blocks = unsigned(n / vec<T>::size / vector_threads);
  const auto* va = reinterpret_cast<vec<T>*>(a);
  const auto* vb = reinterpret_cast<vec<T>*>(b);
  const auto* vc = reinterpret_cast<vec<T>*>(c);
  auto* wa = reinterpret_cast<vec<T>*>(a);
  auto* wb = reinterpret_cast<vec<T>*>(b);
  auto* wc = reinterpret_cast<vec<T>*>(c);
  const std::string prefix = std::string("BabelStream ") + type + ", 2^28: ";

  // One kernel's rows: check each candidate from the start values, then time them all.
  const auto kernel = [&](const std::string& name, const std::vector<candidate>& candidates, T* written, double want,
                          double arrays) {
    const std::string group = prefix + name;
    std::printf("%s\n", group.c_str());
    for (const auto& candidate : candidates) {
      reset();
      candidate.launch(0);
      ct::check_sync(candidate.name.c_str());
      const auto wrong = wrong_in(cuda::std::span<const T>(written, n), want);
      if (wrong != 0) r.mismatch(group + ": " + candidate.name + " (" + std::to_string(wrong) + " wrong)");
    }
    r.measure(group, candidates, arrays * double(n) * sizeof(T));
  };
  const row_target fast = target(targets::babelstream_of_peak);

  kernel("Copy, c = a",
         {{"BabelStream-shaped, an element a thread", row_role::competitor,
           [=](cudaStream_t st) { babel_one<<<babel_blocks, babel_threads, 0, st>>>(a, c, copy_op<T>{}); }},
          {"hand-written, a 16-byte vector a thread, restrict", row_role::competitor,
           [=](cudaStream_t st) { vector_one<<<vector_blocks, vector_threads, 0, st>>>(va, wc, copy_op<T>{}); }},
          {"cub::DeviceTransform", row_role::competitor,
           [=](cudaStream_t st) { check_cub(cub::DeviceTransform::Transform(a, c, n, copy_op<T>{}, st), "cub copy"); }},
          {"thrust::transform, par_nosync", row_role::competitor,
           [=](cudaStream_t st) { thrust::transform(thrust::cuda::par_nosync.on(st), a, a + n, c, copy_op<T>{}); }},
          {"coalesce::transform(column span, column span)", row_role::library,
           [=](cudaStream_t st) { coalesce::transform(ca, sc, copy_op<T>{}, st); }, fast},
          {"coalesce::for_each(soa_vector), as a user writes it first", row_role::library,
           [=](cudaStream_t st) { coalesce::for_each(view, copy_element{}, st); }, fast}},
         c, A, 2);

  kernel("Mul, b = s c",
         {{"BabelStream-shaped, an element a thread", row_role::competitor,
           [=](cudaStream_t st) { babel_one<<<babel_blocks, babel_threads, 0, st>>>(c, b, mul_op<T>{s}); }},
          {"hand-written, a 16-byte vector a thread, restrict", row_role::competitor,
           [=](cudaStream_t st) { vector_one<<<vector_blocks, vector_threads, 0, st>>>(vc, wb, mul_op<T>{s}); }},
          {"cub::DeviceTransform", row_role::competitor,
           [=](cudaStream_t st) { check_cub(cub::DeviceTransform::Transform(c, b, n, mul_op<T>{s}, st), "cub mul"); }},
          {"thrust::transform, par_nosync", row_role::competitor,
           [=](cudaStream_t st) { thrust::transform(thrust::cuda::par_nosync.on(st), c, c + n, b, mul_op<T>{s}); }},
          {"coalesce::transform(column span, column span)", row_role::library,
           [=](cudaStream_t st) { coalesce::transform(cc, sb, mul_op<T>{s}, st); }, fast},
          {"coalesce::for_each(soa_vector), as a user writes it first", row_role::library,
           [=](cudaStream_t st) { coalesce::for_each(view, mul_element<T>{s}, st); }, fast}},
         b, double(s) * C, 2);

  kernel("Add, c = a + b (two inputs, one output)",
         {{"BabelStream-shaped, an element a thread", row_role::competitor,
           [=](cudaStream_t st) { babel_two<<<babel_blocks, babel_threads, 0, st>>>(a, b, c, add_op<T>{}); }},
          {"hand-written, a 16-byte vector a thread, restrict", row_role::competitor,
           [=](cudaStream_t st) { vector_two<<<vector_blocks, vector_threads, 0, st>>>(va, vb, wc, add_op<T>{}); }},
          {"cub::DeviceTransform, 2 inputs", row_role::competitor,
           [=](cudaStream_t st) {
             check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(a, b), c, n, add_op<T>{}, st), "cub add");
           }},
          {"thrust::transform of two ranges, par_nosync", row_role::competitor,
           [=](cudaStream_t st) { thrust::transform(thrust::cuda::par_nosync.on(st), a, a + n, b, c, add_op<T>{}); }},
          {"coalesce::transform(inputs(a, b), column span)", row_role::library,
           [=](cudaStream_t st) { coalesce::transform(coalesce::inputs(ca, cb), sc, add_op<T>{}, st); }, fast},
          {"coalesce::for_each(soa_vector), as a user writes it first", row_role::library,
           [=](cudaStream_t st) { coalesce::for_each(view, add_element{}, st); }, fast}},
         c, A + B, 3);

  kernel(
      "Triad, a = b + s c",
      {{"BabelStream-shaped, an element a thread", row_role::competitor,
        [=](cudaStream_t st) { babel_two<<<babel_blocks, babel_threads, 0, st>>>(b, c, a, triad_op<T>{s}); }},
       {"hand-written, a 16-byte vector a thread, restrict", row_role::competitor,
        [=](cudaStream_t st) { vector_two<<<vector_blocks, vector_threads, 0, st>>>(vb, vc, wa, triad_op<T>{s}); }},
       {"cub::DeviceTransform, 2 inputs", row_role::competitor,
        [=](cudaStream_t st) {
          check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(b, c), a, n, triad_op<T>{s}, st),
                    "cub triad");
        }},
       {"thrust::transform of two ranges, par_nosync", row_role::competitor,
        [=](cudaStream_t st) { thrust::transform(thrust::cuda::par_nosync.on(st), b, b + n, c, a, triad_op<T>{s}); }},
       {"coalesce::transform(inputs(b, c), column span)", row_role::library,
        [=](cudaStream_t st) { coalesce::transform(coalesce::inputs(cb, cc), sa, triad_op<T>{s}, st); }, fast},
       {"coalesce::for_each(soa_vector), as a user writes it first", row_role::library,
        [=](cudaStream_t st) { coalesce::for_each(view, triad_element<T>{s}, st); }, fast}},
      a, B + double(s) * C, 3);

  // The four in BabelStream's order, as its main loop runs them: Copy, Mul, Add, Triad. Here
  // every output changes at every launch (a shrinks by 0.96 an iteration).
  {
    const std::string group = prefix + "Copy, Mul, Add, Triad in sequence";
    std::printf("%s\n", group.c_str());
    const std::vector<candidate> candidates{
        {"BabelStream-shaped, an element a thread", row_role::competitor,
         [=](cudaStream_t st) {
           babel_one<<<babel_blocks, babel_threads, 0, st>>>(a, c, copy_op<T>{});
           babel_one<<<babel_blocks, babel_threads, 0, st>>>(c, b, mul_op<T>{s});
           babel_two<<<babel_blocks, babel_threads, 0, st>>>(a, b, c, add_op<T>{});
           babel_two<<<babel_blocks, babel_threads, 0, st>>>(b, c, a, triad_op<T>{s});
         }},
        {"hand-written, a 16-byte vector a thread, restrict", row_role::competitor,
         [=](cudaStream_t st) {
           vector_one<<<vector_blocks, vector_threads, 0, st>>>(va, wc, copy_op<T>{});
           vector_one<<<vector_blocks, vector_threads, 0, st>>>(vc, wb, mul_op<T>{s});
           vector_two<<<vector_blocks, vector_threads, 0, st>>>(va, vb, wc, add_op<T>{});
           vector_two<<<vector_blocks, vector_threads, 0, st>>>(vb, vc, wa, triad_op<T>{s});
         }},
        {"cub::DeviceTransform", row_role::competitor,
         [=](cudaStream_t st) {
           check_cub(cub::DeviceTransform::Transform(a, c, n, copy_op<T>{}, st), "cub copy");
           check_cub(cub::DeviceTransform::Transform(c, b, n, mul_op<T>{s}, st), "cub mul");
           check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(a, b), c, n, add_op<T>{}, st), "cub add");
           check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(b, c), a, n, triad_op<T>{s}, st),
                     "cub triad");
         }},
        {"thrust::transform, par_nosync", row_role::competitor,
         [=](cudaStream_t st) {
           const auto policy = thrust::cuda::par_nosync.on(st);
           thrust::transform(policy, a, a + n, c, copy_op<T>{});
           thrust::transform(policy, c, c + n, b, mul_op<T>{s});
           thrust::transform(policy, a, a + n, b, c, add_op<T>{});
           thrust::transform(policy, b, b + n, c, a, triad_op<T>{s});
         }},
        {"coalesce::for_each(soa_vector), as a user writes it first", row_role::library,
         [=](cudaStream_t st) {
           coalesce::for_each(view, copy_element{}, st);
           coalesce::for_each(view, mul_element<T>{s}, st);
           coalesce::for_each(view, add_element{}, st);
           coalesce::for_each(view, triad_element<T>{s}, st);
         },
         fast},
        {"coalesce::transform(column spans, inputs)", row_role::library,
         [=](cudaStream_t st) {
           coalesce::transform(ca, sc, copy_op<T>{}, st);
           coalesce::transform(cc, sb, mul_op<T>{s}, st);
           coalesce::transform(coalesce::inputs(ca, cb), sc, add_op<T>{}, st);
           coalesce::transform(coalesce::inputs(cb, cc), sa, triad_op<T>{s}, st);
         },
         fast},
    };
    // One iteration from the start values: c = a, b = s a, c = a + s a, a = s a + s (a + s a).
    const double want = double(s) * A + double(s) * (A + double(s) * A);
    for (const auto& candidate : candidates) {
      reset();
      candidate.launch(0);
      ct::check_sync(candidate.name.c_str());
      const auto wrong = wrong_in(cuda::std::span<const T>(a, n), want);
      if (wrong != 0) r.mismatch(group + ": " + candidate.name + " (" + std::to_string(wrong) + " wrong)");
    }
    reset();
    r.measure(group, candidates, 10.0 * double(n) * sizeof(T));
  }

  kernel("Nstream, a += b + s c",
         {{"BabelStream-shaped, an element a thread", row_role::competitor,
           [=](cudaStream_t st) { babel_nstream<<<babel_blocks, babel_threads, 0, st>>>(a, b, c, s); }},
          {"hand-written, a 16-byte vector a thread, restrict", row_role::competitor,
           [=](cudaStream_t st) { vector_nstream<<<vector_blocks, vector_threads, 0, st>>>(wa, vb, vc, s); }},
          {"cub::DeviceTransform, 3 inputs", row_role::competitor,
           [=](cudaStream_t st) {
             check_cub(cub::DeviceTransform::Transform(cuda::std::make_tuple(a, b, c), a, n, nstream_op<T>{s}, st),
                       "cub nstream");
           }},
          {"coalesce::for_each(soa_vector), e.a += e.b + s * e.c", row_role::library,
           [=](cudaStream_t st) { coalesce::for_each(view, nstream_element<T>{s}, st); }, fast},
          {"coalesce::transform(inputs(a, b, c), column span a)", row_role::library,
           [=](cudaStream_t st) { coalesce::transform(coalesce::inputs(ca, cb, cc), sa, nstream_op<T>{s}, st); },
           fast}},
         a, A + B + double(s) * C, 4);

  // Dot: every result in device memory, checked against n a b (Thrust's comes back to the host).
  {
    const std::string group = prefix + "Dot, sum a b";
    std::printf("%s\n", group.c_str());
    ct::device_buffer<T> result(1);
    T* out = result.data();
    const thrust::counting_iterator<std::size_t> first(0);
    std::size_t temp_bytes = 0;
    check_cub(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, first, out, n, cuda::std::plus<>{},
                                                 product_at<T>{a, b}, T(0)),
              "cub::DeviceReduce::TransformReduce (sizing)");
    ct::device_buffer<unsigned char> temp(temp_bytes > 0 ? temp_bytes : 1);
    unsigned char* temp_storage = temp.data();
    int device = 0, sms = 0;
    coalesce::throw_on_error(cudaGetDevice(&device), "cudaGetDevice");
    coalesce::throw_on_error(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                             "cudaDeviceGetAttribute");
    const unsigned dot_blocks = unsigned(sms * 2);  // two blocks of 1024 per SM: a full wave
    ct::device_buffer<T> partials_buffer(dot_blocks);
    ct::device_buffer<unsigned> arrivals_buffer(1);
    T* partials = partials_buffer.data();
    unsigned* arrivals = arrivals_buffer.data();
    T thrust_sum = T(-1);
    const std::vector<candidate> candidates{
        {"BabelStream-shaped, a wave of blocks, last block sums", row_role::competitor,
         [=](cudaStream_t st) {
           coalesce::throw_on_error(cudaMemsetAsync(arrivals, 0, sizeof(unsigned), st), "cudaMemsetAsync");
           babel_dot<<<dot_blocks, babel_threads, 0, st>>>(a, b, n, partials, arrivals, out);
         }},
        {"cub::DeviceReduce::TransformReduce", row_role::competitor,
         [=](cudaStream_t st) {
           std::size_t bytes = temp_bytes;
           check_cub(cub::DeviceReduce::TransformReduce(temp_storage, bytes, first, out, n, cuda::std::plus<>{},
                                                        product_at<T>{a, b}, T(0), st),
                     "cub::DeviceReduce::TransformReduce");
         }},
        {"thrust::inner_product, par_nosync", row_role::competitor,
         [=, &thrust_sum](cudaStream_t st) {
           thrust_sum = thrust::inner_product(thrust::cuda::par_nosync.on(st), a, a + n, b, T(0));
         }},
        {"coalesce::transform_reduce(soa_vector's view), e.a * e.b", row_role::library,
         [=](cudaStream_t st) {
           coalesce::transform_reduce(view, dot_element<T>{}, T(0), cuda::std::plus<>{}, out, st);
         },
         target(targets::reduction_of_peak)},
        {"coalesce::transform_reduce(inputs(a, b))", row_role::library,
         [=](cudaStream_t st) {
           coalesce::transform_reduce(coalesce::inputs(ca, cb), times_op<T>{}, T(0), cuda::std::plus<>{}, out, st);
         },
         target(targets::reduction_of_peak)},
    };
    const double want = double(n) * A * B;
    const double tolerance = (sizeof(T) == 4 ? 1e-3 : 1e-9) * want;
    reset();
    for (const auto& candidate : candidates) {
      result.poison();
      thrust_sum = T(-1);
      candidate.launch(0);
      ct::check_sync(candidate.name.c_str());
      const double got = thrust_sum >= T(0) ? double(thrust_sum) : double(result.download()[0]);
      if (!(std::abs(got - want) <= tolerance))
        r.mismatch(group + ": " + candidate.name + " gave " + std::to_string(got) + ", want " + std::to_string(want));
    }
    r.measure(group, candidates, 2.0 * double(n) * sizeof(T));
  }

  // One input into two outputs: (b, c) = (s a, a + s), a soa_vector of the two as the output.
  {
    const std::string group = prefix + "one input, two outputs, (b, c) = (s a, a + s)";
    std::printf("%s\n", group.c_str());
    coalesce::soa_vector<two_outputs<T>> two(n);
    const auto out = two.view();
    T* ob = out.template column<&two_outputs<T>::b>();
    T* oc = out.template column<&two_outputs<T>::c>();
    auto* wob = reinterpret_cast<vec<T>*>(ob);
    auto* woc = reinterpret_cast<vec<T>*>(oc);
    const auto zip_out = thrust::make_zip_iterator(ob, oc);
    const std::vector<candidate> candidates{
        {"hand-written, a 16-byte vector a thread, restrict", row_role::competitor,
         [=](cudaStream_t st) { vector_split<<<vector_blocks, vector_threads, 0, st>>>(va, wob, woc, s); }},
        {"cub::DeviceTransform into a zip of 2", row_role::competitor,
         [=](cudaStream_t st) {
           check_cub(cub::DeviceTransform::Transform(a, zip_out, n, split_op<T>{s}, st), "cub split");
         }},
        {"thrust::transform into a zip of 2, par_nosync", row_role::competitor,
         [=](cudaStream_t st) {
           thrust::transform(thrust::cuda::par_nosync.on(st), a, a + n, zip_out, split_op<T>{s});
         }},
        {"coalesce::transform(column span, soa_view of 2)", row_role::library,
         [=](cudaStream_t st) { coalesce::transform(ca, out, split_element<T>{s}, st); }, fast},
    };
    for (const auto& candidate : candidates) {
      reset();
      candidate.launch(0);
      ct::check_sync(candidate.name.c_str());
      const auto wrong = wrong_in(cuda::std::span<const T>(ob, n), double(s) * A) +
                         wrong_in(cuda::std::span<const T>(oc, n), A + double(s));
      if (wrong != 0) r.mismatch(group + ": " + candidate.name + " (" + std::to_string(wrong) + " wrong)");
    }
    r.measure(group, candidates, 3.0 * double(n) * sizeof(T));
  }
}

}  // namespace

void babelstream(runner& r) {
  babelstream_group<double>(r, "double");
  babelstream_group<float>(r, "float");
}

}  // namespace bench
