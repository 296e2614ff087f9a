// The NVTX tool of nvtx_recorder.hpp. NVTX calls InitializeInjectionNvtx2 once, on the process's
// first NVTX call; the tool then replaces the entries of the domain API it records (domain
// creation, string registration, push and pop) in NVTX's table of the core module. Every other
// entry stays NVTX's no-op.
#include "nvtx_recorder.hpp"

#include <nvtx3/nvToolsExt.h>  // with nvtxDetail/nvtxTypes.h: the tables a tool fills

#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct recorder {
  std::mutex mutex;
  bool attached = false;
  std::deque<std::string> domains;  // a domain handle points at its name here (deque: stable)
  std::deque<std::string> strings;  // likewise a registered string's handle
  std::vector<coalesce_test::nvtx::range> pushed;
  int open = 0;
};

recorder& the_recorder() {
  static recorder instance;
  return instance;
}

std::string domain_name(nvtxDomainHandle_t domain) {
  return domain == nullptr ? std::string() : *reinterpret_cast<const std::string*>(domain);
}

std::string message_of(const nvtxEventAttributes_t* attributes) {
  if (attributes == nullptr) return "(no attributes)";
  switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return attributes->message.ascii;
    case NVTX_MESSAGE_TYPE_REGISTERED: return *reinterpret_cast<const std::string*>(attributes->message.registered);
    default: return "(message of type " + std::to_string(attributes->messageType) + ")";
  }
}

nvtxDomainHandle_t NVTX_API create_domain(const char* name) {
  auto& r = the_recorder();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.domains.emplace_back(name);
  return reinterpret_cast<nvtxDomainHandle_t>(&r.domains.back());
}

nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t, const char* text) {
  auto& r = the_recorder();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.strings.emplace_back(text);
  return reinterpret_cast<nvtxStringHandle_t>(&r.strings.back());
}

int NVTX_API push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  auto& r = the_recorder();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.pushed.push_back({domain_name(domain), message_of(attributes)});
  return r.open++;
}

int NVTX_API pop(nvtxDomainHandle_t) {
  auto& r = the_recorder();
  const std::lock_guard<std::mutex> lock(r.mutex);
  return --r.open;
}

template <class F>
void install(NvtxFunctionTable table, unsigned size, unsigned id, F function) {
  if (id < size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || table == nullptr) return 0;
  install(table, size, NVTX_CBID_CORE2_DomainCreateA, &create_domain);
  install(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_string);
  install(table, size, NVTX_CBID_CORE2_DomainRangePushEx, &push);
  install(table, size, NVTX_CBID_CORE2_DomainRangePop, &pop);
  the_recorder().attached = true;
  return 1;  // success: NVTX keeps the tool
}

namespace coalesce_test::nvtx {

bool attached() {
  auto& r = the_recorder();
  const std::lock_guard<std::mutex> lock(r.mutex);
  return r.attached;
}

std::vector<range> pushed() {
  auto& r = the_recorder();
  const std::lock_guard<std::mutex> lock(r.mutex);
  return r.pushed;
}

int open_ranges() {
  auto& r = the_recorder();
  const std::lock_guard<std::mutex> lock(r.mutex);
  return r.open;
}

void clear() {
  auto& r = the_recorder();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.pushed.clear();
}

}  // namespace coalesce_test::nvtx
