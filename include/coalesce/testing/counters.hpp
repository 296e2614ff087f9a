// coalesce::testing: read Nsight Compute hardware metrics around a launch, in-process, through
// CUPTI's Range Profiling and Profiler Host APIs (CUDA 12.6+). A test can then assert
// `m.load_sectors_per_request() == Approx(4.0)` about a real kernel.
//
// Each kernel launched inside measure() is one range (auto range), replayed by CUPTI as many
// times as the metrics need passes (kernel replay, memory saved and restored between passes), so
// the work's results are unchanged. Values are summed over the kernels of the measurement.
// Counters need profiling permission (root, or NVreg_RestrictProfilingToAdminUsers=0) and no
// other profiler attached (ncu, compute-sanitizer); otherwise unavailable_reason() says why.
#pragma once
/// @file

#include <coalesce/config.hpp>
#include <coalesce/error.hpp>
#include <coalesce/testing/detail/cupti.hpp>
#include <coalesce/testing/device.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coalesce::testing {

/// The metric names the harness reads by default (Nsight Compute names, summed over the chip).
namespace metric {
/// 32-byte sectors that warps' global loads asked L1 for: 4 per request when 32 lanes load
/// consecutive 4-byte values.
inline constexpr const char* global_load_sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
/// Warp-level global load requests to L1 (one per load instruction a warp executes).
inline constexpr const char* global_load_requests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
/// 32-byte sectors that warps' global stores wrote through L1.
inline constexpr const char* global_store_sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
/// Warp-level global store requests to L1.
inline constexpr const char* global_store_requests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
/// Wavefronts (passes through the shared-memory data pipe) of shared loads: more than one per
/// instruction where lanes' 4-byte accesses to different words meet in one bank.
inline constexpr const char* shared_load_wavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
/// Wavefronts of shared stores.
inline constexpr const char* shared_store_wavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
/// Warp-level shared load instructions executed.
inline constexpr const char* shared_load_instructions = "smsp__inst_executed_op_shared_ld.sum";
/// Warp-level shared store instructions executed.
inline constexpr const char* shared_store_instructions = "smsp__inst_executed_op_shared_st.sum";
/// Bytes read from device memory (DRAM), whatever the caches kept.
inline constexpr const char* dram_bytes_read = "dram__bytes_read.sum";
/// Bytes written to device memory (DRAM).
inline constexpr const char* dram_bytes_write = "dram__bytes_write.sum";
}  // namespace metric

/// The ten metrics of namespace metric, which counters' named values and ratios read: what a
/// counter_profiler collects unless it is given others.
inline std::vector<std::string> default_metrics() {
  return {metric::global_load_sectors,      metric::global_load_requests,      metric::global_store_sectors,
          metric::global_store_requests,    metric::shared_load_wavefronts,    metric::shared_store_wavefronts,
          metric::shared_load_instructions, metric::shared_store_instructions, metric::dram_bytes_read,
          metric::dram_bytes_write};
}

/// The metric values of one measurement, summed over the kernels it launched.
class counters {
 public:
  /// values[i] is metric names[i], summed over `kernels` kernels (what counter_profiler::measure
  /// returns).
  counters(std::vector<std::string> names, std::vector<double> values, std::size_t kernels)
      : names_(std::move(names)), values_(std::move(values)), kernels_(kernels) {}

  /// The value of metric `name`; throws std::out_of_range if it was not collected.
  double operator[](std::string_view name) const {
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == name) return values_[i];
    throw std::out_of_range("coalesce::testing::counters: metric not collected: " + std::string(name));
  }

  std::size_t kernels() const noexcept { return kernels_; }                   ///< kernels the values sum over
  const std::vector<std::string>& names() const noexcept { return names_; }  ///< the metric names
  const std::vector<double>& values() const noexcept { return values_; }     ///< their values, in the same order

  /// metric::global_load_sectors. Like operator[], each named value throws std::out_of_range
  /// if its metric was not collected.
  double global_load_sectors() const { return (*this)[metric::global_load_sectors]; }
  /// metric::global_load_requests.
  double global_load_requests() const { return (*this)[metric::global_load_requests]; }
  /// metric::global_store_sectors.
  double global_store_sectors() const { return (*this)[metric::global_store_sectors]; }
  /// metric::global_store_requests.
  double global_store_requests() const { return (*this)[metric::global_store_requests]; }
  /// metric::shared_load_wavefronts.
  double shared_load_wavefronts() const { return (*this)[metric::shared_load_wavefronts]; }
  /// metric::shared_store_wavefronts.
  double shared_store_wavefronts() const { return (*this)[metric::shared_store_wavefronts]; }
  /// metric::shared_load_instructions.
  double shared_load_instructions() const { return (*this)[metric::shared_load_instructions]; }
  /// metric::shared_store_instructions.
  double shared_store_instructions() const { return (*this)[metric::shared_store_instructions]; }
  /// metric::dram_bytes_read: bytes.
  double dram_bytes_read() const { return (*this)[metric::dram_bytes_read]; }
  /// metric::dram_bytes_write: bytes.
  double dram_bytes_write() const { return (*this)[metric::dram_bytes_write]; }

  /// 32-byte sectors per warp-level global load request: 4 for a coalesced 4-byte access.
  double load_sectors_per_request() const { return ratio(global_load_sectors(), global_load_requests()); }
  /// 32-byte sectors per warp-level global store request: 4 for a coalesced 4-byte access.
  double store_sectors_per_request() const { return ratio(global_store_sectors(), global_store_requests()); }
  /// Shared-memory wavefronts per warp-level shared instruction: 1 when conflict-free for 4 B.
  double shared_load_wavefronts_per_instruction() const {
    return ratio(shared_load_wavefronts(), shared_load_instructions());
  }
  /// Shared-memory wavefronts per warp-level shared store instruction: 1 when conflict-free for 4 B.
  double shared_store_wavefronts_per_instruction() const {
    return ratio(shared_store_wavefronts(), shared_store_instructions());
  }

 private:
  // 0/0 is reported as 0 (nothing happened), never as NaN, so a missing access fails an
  // equality assertion visibly instead of comparing unequal to everything.
  static double ratio(double num, double den) { return den == 0.0 ? 0.0 : num / den; }

  std::vector<std::string> names_;
  std::vector<double> values_;
  std::size_t kernels_;
};

/// Collects a fixed set of metrics around launches. Make one per process (it is not cheap: it
/// builds CUPTI's configuration image), then call measure() as often as needed.
class counter_profiler {
 public:
  /// Kernels one measurement may launch; more are an error (their ranges would be dropped).
  static constexpr std::size_t max_kernels_per_measurement = 64;

  /// Configures CUPTI for `metrics` (Nsight Compute names) on the current device, making its
  /// context if there is none. A failure there is not thrown: it becomes unavailable_reason().
  explicit counter_profiler(std::vector<std::string> metrics = default_metrics()) : metrics_(std::move(metrics)) {
    for (const auto& m : metrics_) metric_ptrs_.push_back(m.c_str());
    try {
      setup();
      // Enabling the range profiler is where "another profiler is attached" shows up; try it
      // once now so that availability is known before any test relies on it.
      range_session probe(*this);
    } catch (const std::exception& e) {
      unavailable_reason_ = e.what();
      teardown();
    }
  }
  ~counter_profiler() { teardown(); }
  counter_profiler(const counter_profiler&) = delete;
  counter_profiler& operator=(const counter_profiler&) = delete;

  /// Why counters cannot be read in this process, or nothing when they can.
  const std::optional<std::string>& unavailable_reason() const noexcept { return unavailable_reason_; }
  bool available() const noexcept { return !unavailable_reason_.has_value(); }  ///< whether measure() can run
  /// Replay passes CUPTI needs for the metric set (each kernel runs this many times).
  std::size_t passes() const noexcept { return passes_; }
  const std::vector<std::string>& metrics() const noexcept { return metrics_; }  ///< the metrics measured, in order

  /// Runs `launch()`, which launches one or more kernels, and returns their metrics, summed.
  /// The device is synchronized before returning. Throws if counters are unavailable.
  template <class Launch>
  counters measure(Launch&& launch) {
    if (!available()) throw std::runtime_error("coalesce::testing: counters unavailable: " + *unavailable_reason_);
    throw_on_error(::cudaDeviceSynchronize(), "synchronizing before a counter measurement");
    range_session session(*this);
    session.configure();
    // Kernel replay submits every pass from one run of the work; the loop stays correct if a
    // future CUPTI asks for the work again.
    for (std::size_t attempt = 0;; ++attempt) {
      session.start();
      launch();
      throw_on_error(::cudaGetLastError(), "launch under the counter profiler");
      throw_on_error(::cudaDeviceSynchronize(), "work under the counter profiler");
      if (session.stop()) break;
      if (attempt > passes_) throw std::runtime_error("coalesce::testing: CUPTI did not finish its passes");
    }
    return session.collect();
  }

 private:
  // One enabled range profiler with its counter-data image; disabled on destruction.
  class range_session {
   public:
    explicit range_session(counter_profiler& owner) : owner_(owner) {
      auto p = detail::cupti_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
      p.ctx = owner_.context_;
      detail::cupti_check(::cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
      object_ = p.pRangeProfilerObject;
    }
    ~range_session() {
      auto p = detail::cupti_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = object_;
      (void)::cuptiRangeProfilerDisable(&p);
    }
    range_session(const range_session&) = delete;
    range_session& operator=(const range_session&) = delete;

    void configure() {
      auto size = detail::cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
          CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
      size.pRangeProfilerObject = object_;
      size.pMetricNames = owner_.metric_ptrs_.data();
      size.numMetrics = owner_.metric_ptrs_.size();
      size.maxNumOfRanges = max_kernels_per_measurement;
      size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_kernels_per_measurement);
      detail::cupti_check(::cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
      counter_data_.assign(size.counterDataSize, 0);

      auto init = detail::cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
          CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
      init.pRangeProfilerObject = object_;
      init.counterDataSize = counter_data_.size();
      init.pCounterData = counter_data_.data();
      detail::cupti_check(::cuptiRangeProfilerCounterDataImageInitialize(&init),
                          "cuptiRangeProfilerCounterDataImageInitialize");

      auto config =
          detail::cupti_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
      config.pRangeProfilerObject = object_;
      config.configSize = owner_.config_image_.size();
      config.pConfig = owner_.config_image_.data();
      config.counterDataImageSize = counter_data_.size();
      config.pCounterDataImage = counter_data_.data();
      config.range = CUPTI_AutoRange;
      config.replayMode = CUPTI_KernelReplay;
      config.maxRangesPerPass = max_kernels_per_measurement;
      config.numNestingLevels = 1;
      config.minNestingLevel = 1;
      config.passIndex = 0;
      config.targetNestingLevel = 1;
      detail::cupti_check(::cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig");
    }

    void start() {
      auto p = detail::cupti_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = object_;
      detail::cupti_check(::cuptiRangeProfilerStart(&p), "cuptiRangeProfilerStart");
    }

    // Returns true once every pass has been submitted.
    bool stop() {
      auto p = detail::cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = object_;
      detail::cupti_check(::cuptiRangeProfilerStop(&p), "cuptiRangeProfilerStop");
      return p.isAllPassSubmitted != 0;
    }

    counters collect() {
      auto decode = detail::cupti_params<CUpti_RangeProfiler_DecodeData_Params>(
          CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
      decode.pRangeProfilerObject = object_;
      detail::cupti_check(::cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
      if (decode.numOfRangeDropped != 0)
        throw std::runtime_error("coalesce::testing: more than " + std::to_string(max_kernels_per_measurement) +
                                 " kernels in one counter measurement; ranges were dropped");

      auto info = detail::cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
          CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
      info.pCounterDataImage = counter_data_.data();
      info.counterDataImageSize = counter_data_.size();
      detail::cupti_check(::cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");

      std::vector<double> totals(owner_.metric_ptrs_.size(), 0.0), range_values(owner_.metric_ptrs_.size(), 0.0);
      for (std::size_t range = 0; range < info.numTotalRanges; ++range) {
        auto eval = detail::cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
            CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
        eval.pHostObject = owner_.host_object_;
        eval.pCounterDataImage = counter_data_.data();
        eval.counterDataImageSize = counter_data_.size();
        eval.rangeIndex = range;
        eval.ppMetricNames = owner_.metric_ptrs_.data();
        eval.numMetrics = owner_.metric_ptrs_.size();
        eval.pMetricValues = range_values.data();
        detail::cupti_check(::cuptiProfilerHostEvaluateToGpuValues(&eval), "cuptiProfilerHostEvaluateToGpuValues");
        for (std::size_t m = 0; m < totals.size(); ++m) totals[m] += range_values[m];
      }
      return counters(owner_.metrics_, std::move(totals), info.numTotalRanges);
    }

   private:
    counter_profiler& owner_;
    CUpti_RangeProfiler_Object* object_ = nullptr;
    std::vector<std::uint8_t> counter_data_;
  };

  void setup() {
    context_ = detail::current_context();
    int device = 0;
    throw_on_error(::cudaGetDevice(&device), "cudaGetDevice");

    auto init = detail::cupti_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    detail::cupti_check(::cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");
    profiler_initialized_ = true;

    auto chip = detail::cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<std::size_t>(device);
    detail::cupti_check(::cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");

    auto avail = detail::cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    avail.ctx = context_;
    detail::cupti_check(::cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability (size)");
    availability_image_.assign(avail.counterAvailabilityImageSize, 0);
    avail.pCounterAvailabilityImage = availability_image_.data();
    detail::cupti_check(::cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");

    auto host =
        detail::cupti_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host.pChipName = chip.pChipName;
    host.pCounterAvailabilityImage = availability_image_.data();
    detail::cupti_check(::cuptiProfilerHostInitialize(&host), "cuptiProfilerHostInitialize");
    host_object_ = host.pHostObject;

    auto add = detail::cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = host_object_;
    add.ppMetricNames = metric_ptrs_.data();
    add.numMetrics = metric_ptrs_.size();
    detail::cupti_check(::cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");

    auto size = detail::cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = host_object_;
    detail::cupti_check(::cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
    config_image_.assign(size.configImageSize, 0);

    auto image = detail::cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = host_object_;
    image.configImageSize = config_image_.size();
    image.pConfigImage = config_image_.data();
    detail::cupti_check(::cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");

    auto passes = detail::cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    passes.configImageSize = config_image_.size();
    passes.pConfigImage = config_image_.data();
    detail::cupti_check(::cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses");
    passes_ = passes.numOfPasses;
  }

  void teardown() noexcept {
    if (host_object_ != nullptr) {
      auto p = detail::cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(
          CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      p.pHostObject = host_object_;
      (void)::cuptiProfilerHostDeinitialize(&p);
      host_object_ = nullptr;
    }
    if (profiler_initialized_) {
      auto p = detail::cupti_params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      (void)::cuptiProfilerDeInitialize(&p);
      profiler_initialized_ = false;
    }
  }

  std::vector<std::string> metrics_;
  std::vector<const char*> metric_ptrs_;
  std::optional<std::string> unavailable_reason_;
  CUcontext context_ = nullptr;
  bool profiler_initialized_ = false;
  CUpti_Profiler_Host_Object* host_object_ = nullptr;
  std::vector<std::uint8_t> availability_image_;
  std::vector<std::uint8_t> config_image_;
  std::size_t passes_ = 0;
};

}  // namespace coalesce::testing
