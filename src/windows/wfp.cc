// wfp.cc: cage's persistent WFP objects (Windows builds only, parent side): added and deleted in one
// transaction by the elevated `cage --install-windows-network` / `--uninstall-windows-network`, read
// (never changed) by `cage --check` and by every --net run. What they are is net_slots.cc's
// wfp_filters() (pure, tested by windows_net_slots_test.cc); this file only turns each one into an
// FWPM_FILTER0. fwpuclnt.dll is looked up at run time (as firewallapi and userenv are): a host
// without it (Wine) gets a clean spawn_sandbox_unavailable. Proof on Windows: `cage --self-test`.
#include "windows/mechanisms.h"
#include "windows/net_slots.h"
// After <windows.h> (mechanisms.h): these headers need its macros.
#include <fwpmu.h>
#include <rpc.h>
#include <sddl.h>

#include <cstdio>
#include <string>
#include <utility>

namespace cage::win {

namespace {

// fwpmtypes.h values mingw's headers lack (Microsoft's fwpmtypes.h).
constexpr UINT32 kProviderPersistent = 0x1, kSublayerPersistent = 0x1, kFilterPersistent = 0x1;

struct Fwp {
  decltype(&::FwpmEngineOpen0) engine_open = nullptr;
  decltype(&::FwpmEngineClose0) engine_close = nullptr;
  decltype(&::FwpmTransactionBegin0) begin = nullptr;
  decltype(&::FwpmTransactionCommit0) commit = nullptr;
  decltype(&::FwpmTransactionAbort0) abort = nullptr;
  decltype(&::FwpmProviderAdd0) provider_add = nullptr;
  decltype(&::FwpmSubLayerAdd0) sublayer_add = nullptr;
  decltype(&::FwpmFilterAdd0) filter_add = nullptr;
  decltype(&::FwpmFilterDeleteByKey0) filter_delete = nullptr;
  decltype(&::FwpmSubLayerDeleteByKey0) sublayer_delete = nullptr;
  decltype(&::FwpmProviderDeleteByKey0) provider_delete = nullptr;
  decltype(&::FwpmFilterGetByKey0) filter_get = nullptr;
  decltype(&::FwpmSubLayerGetByKey0) sublayer_get = nullptr;
  decltype(&::FwpmProviderGetByKey0) provider_get = nullptr;
  decltype(&::FwpmFreeMemory0) free_memory = nullptr;
  bool loaded = false;
};

template <class F>
void load(HMODULE m, F& f, const char* name) {
  f = reinterpret_cast<F>(reinterpret_cast<void*>(::GetProcAddress(m, name)));
}

const Fwp& fwp() {
  static const Fwp f = [] {
    Fwp r;
    HMODULE m = ::LoadLibraryExW(L"fwpuclnt.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
    if (!m) return r;
    load(m, r.engine_open, "FwpmEngineOpen0");
    load(m, r.engine_close, "FwpmEngineClose0");
    load(m, r.begin, "FwpmTransactionBegin0");
    load(m, r.commit, "FwpmTransactionCommit0");
    load(m, r.abort, "FwpmTransactionAbort0");
    load(m, r.provider_add, "FwpmProviderAdd0");
    load(m, r.sublayer_add, "FwpmSubLayerAdd0");
    load(m, r.filter_add, "FwpmFilterAdd0");
    load(m, r.filter_delete, "FwpmFilterDeleteByKey0");
    load(m, r.sublayer_delete, "FwpmSubLayerDeleteByKey0");
    load(m, r.provider_delete, "FwpmProviderDeleteByKey0");
    load(m, r.filter_get, "FwpmFilterGetByKey0");
    load(m, r.sublayer_get, "FwpmSubLayerGetByKey0");
    load(m, r.provider_get, "FwpmProviderGetByKey0");
    load(m, r.free_memory, "FwpmFreeMemory0");
    r.loaded = r.engine_open && r.engine_close && r.begin && r.commit && r.abort && r.provider_add &&
               r.sublayer_add && r.filter_add && r.filter_delete && r.sublayer_delete && r.provider_delete &&
               r.filter_get && r.sublayer_get && r.provider_get && r.free_memory;
    return r;
  }();
  return f;
}

GUID guid_of(const std::string& text) {
  GUID g{};
  std::string copy = text;
  ::UuidFromStringA(reinterpret_cast<RPC_CSTR>(copy.data()), &g);  // texts are cage's constants
  return g;
}

bool not_found(DWORD rc) {
  return rc == static_cast<DWORD>(FWP_E_FILTER_NOT_FOUND) ||
         rc == static_cast<DWORD>(FWP_E_SUBLAYER_NOT_FOUND) ||
         rc == static_cast<DWORD>(FWP_E_PROVIDER_NOT_FOUND) || rc == static_cast<DWORD>(FWP_E_NOT_FOUND);
}

// A session with the filter engine; an open transaction is aborted unless committed.
class Engine {
 public:
  static Result<Engine> open(const std::string& input) {
    if (!fwp().loaded)
      return Error{ErrorClass::spawn_sandbox_unavailable,
                   "the Windows Filtering Platform (fwpuclnt.dll) is not "
                   "available on this host",
                   "--net's filters need Windows 8 or later", input, 0};
    Engine e;
    if (DWORD rc = fwp().engine_open(nullptr, RPC_C_AUTHN_WINNT, nullptr, nullptr, &e.h_);
        rc != ERROR_SUCCESS)
      return call_failed("FwpmEngineOpen0", rc, input, "");
    return e;
  }
  Engine() = default;
  Engine(Engine&& o) noexcept : h_(std::exchange(o.h_, nullptr)), in_txn_(std::exchange(o.in_txn_, false)) {}
  Engine& operator=(Engine&&) = delete;
  ~Engine() {
    if (in_txn_) fwp().abort(h_);
    if (h_) fwp().engine_close(h_);
  }
  HANDLE get() const { return h_; }
  DWORD begin() {
    DWORD rc = fwp().begin(h_, 0);
    in_txn_ = rc == ERROR_SUCCESS;
    return rc;
  }
  DWORD commit() {
    in_txn_ = false;
    return fwp().commit(h_);
  }

 private:
  HANDLE h_ = nullptr;
  bool in_txn_ = false;
};

struct Sd {
  PSECURITY_DESCRIPTOR p = nullptr;
  ~Sd() {
    if (p) ::LocalFree(p);
  }
};

DWORD add_filter(HANDLE h, const WfpFilter& w, GUID& provider, PSECURITY_DESCRIPTOR sd) {
  PSID sid = nullptr;
  std::vector<FWPM_FILTER_CONDITION0> conds;
  for (const auto& c : w.conditions) {
    FWPM_FILTER_CONDITION0 fc{};
    fc.fieldKey = guid_of(field_guid(c.field));
    fc.matchType = FWP_MATCH_EQUAL;
    switch (c.field) {
      case WfpField::package_id:
        if (!::ConvertStringSidToSidW(wide(c.value).c_str(), &sid)) return ::GetLastError();
        fc.conditionValue.type = FWP_SID;
        fc.conditionValue.sid = static_cast<SID*>(sid);
        break;
      case WfpField::remote_address: {  // host byte order, as FWP_UINT32 addresses are
        unsigned a = 0, b = 0, c2 = 0, d = 0;
        std::sscanf(c.value.c_str(), "%u.%u.%u.%u", &a, &b, &c2, &d);
        fc.conditionValue.type = FWP_UINT32;
        fc.conditionValue.uint32 = (a << 24) | (b << 16) | (c2 << 8) | d;
        break;
      }
      case WfpField::remote_port:
        fc.conditionValue.type = FWP_UINT16;
        fc.conditionValue.uint16 = static_cast<UINT16>(std::stoul(c.value));
        break;
      case WfpField::protocol:
        fc.conditionValue.type = FWP_UINT8;
        fc.conditionValue.uint8 = static_cast<UINT8>(std::stoul(c.value));
        break;
    }
    conds.push_back(fc);
  }
  LocalFreer free_sid(sid);
  std::wstring name = wide(w.name), why = wide(w.why);
  FWPM_FILTER0 f{};
  f.filterKey = guid_of(w.key);
  f.displayData.name = name.data();
  f.displayData.description = why.data();
  f.flags = kFilterPersistent;
  f.providerKey = &provider;
  f.layerKey = guid_of(layer_guid(w.layer));
  f.subLayerKey = guid_of(kWfpSublayerKey);
  f.weight.type = FWP_UINT8;
  f.weight.uint8 = w.weight;
  f.numFilterConditions = static_cast<UINT32>(conds.size());
  f.filterCondition = conds.data();
  f.action.type = w.action == WfpAction::permit ? FWP_ACTION_PERMIT : FWP_ACTION_BLOCK;
  DWORD rc = fwp().filter_add(h, &f, sd, nullptr);
  return rc == static_cast<DWORD>(FWP_E_ALREADY_EXISTS) ? ERROR_SUCCESS : rc;
}

}  // namespace

Status wfp_install(const std::vector<WfpFilter>& filters, const std::string& input) {
  auto engine = Engine::open(input);
  if (!engine) return engine.error();
  Sd sd;
  if (!::ConvertStringSecurityDescriptorToSecurityDescriptorW(wide(kWfpObjectSddl).c_str(), SDDL_REVISION_1,
                                                              &sd.p, nullptr))
    return call_failed("ConvertStringSecurityDescriptorToSecurityDescriptorW", ::GetLastError(), input, "");
  if (DWORD rc = engine->begin(); rc != ERROR_SUCCESS)
    return call_failed("FwpmTransactionBegin0", rc, input, "");
  GUID provider = guid_of(kWfpProviderKey);
  FWPM_PROVIDER0 p{};
  p.providerKey = provider;
  p.displayData.name = const_cast<wchar_t*>(L"cage");
  p.displayData.description = const_cast<wchar_t*>(L"cage sandbox: confines its --net slot containers");
  p.flags = kProviderPersistent;
  DWORD rc = fwp().provider_add(engine->get(), &p, sd.p);
  if (rc != ERROR_SUCCESS && rc != static_cast<DWORD>(FWP_E_ALREADY_EXISTS))
    return call_failed("FwpmProviderAdd0", rc, input, "");
  FWPM_SUBLAYER0 s{};
  s.subLayerKey = guid_of(kWfpSublayerKey);
  s.displayData.name = const_cast<wchar_t*>(L"cage --net slots");
  s.displayData.description = const_cast<wchar_t*>(L"cage: each slot container reaches only its run's proxy");
  s.flags = kSublayerPersistent;
  s.providerKey = &provider;
  s.weight = kWfpSublayerWeight;
  rc = fwp().sublayer_add(engine->get(), &s, sd.p);
  if (rc != ERROR_SUCCESS && rc != static_cast<DWORD>(FWP_E_ALREADY_EXISTS))
    return call_failed("FwpmSubLayerAdd0", rc, input, "");
  for (const auto& w : filters)
    if (DWORD frc = add_filter(engine->get(), w, provider, sd.p); frc != ERROR_SUCCESS)
      return call_failed("FwpmFilterAdd0 (" + w.name + ")", frc, input, "");
  if (DWORD crc = engine->commit(); crc != ERROR_SUCCESS)
    return call_failed("FwpmTransactionCommit0", crc, input, "");
  return Ok{};
}

Status wfp_uninstall(const std::vector<WfpFilter>& filters, const std::string& input) {
  auto engine = Engine::open(input);
  if (!engine) return engine.error();
  if (DWORD rc = engine->begin(); rc != ERROR_SUCCESS)
    return call_failed("FwpmTransactionBegin0", rc, input, "");
  for (const auto& w : filters) {
    GUID key = guid_of(w.key);
    if (DWORD rc = fwp().filter_delete(engine->get(), &key); rc != ERROR_SUCCESS && !not_found(rc))
      return call_failed("FwpmFilterDeleteByKey0 (" + w.name + ")", rc, input, "");
  }
  GUID sub = guid_of(kWfpSublayerKey), prov = guid_of(kWfpProviderKey);
  if (DWORD rc = fwp().sublayer_delete(engine->get(), &sub); rc != ERROR_SUCCESS && !not_found(rc))
    return call_failed("FwpmSubLayerDeleteByKey0", rc, input, "");
  if (DWORD rc = fwp().provider_delete(engine->get(), &prov); rc != ERROR_SUCCESS && !not_found(rc))
    return call_failed("FwpmProviderDeleteByKey0", rc, input, "");
  if (DWORD rc = engine->commit(); rc != ERROR_SUCCESS)
    return call_failed("FwpmTransactionCommit0", rc, input, "");
  return Ok{};
}

namespace {

// The fallback when the engine will not answer a normal user (access denied): the Base Filtering
// Engine keeps persistent objects as values named by their braced key under
// HKLM\SYSTEM\CurrentControlSet\Services\BFE\Parameters\Policy\Persistent\{Provider,SubLayer,Filter}
// (not documented by Microsoft; simplewall checks its own provider this way). Presence only, and
// only administrators can write there; if it cannot be read either, the install stays unverified.
Status read_persistent_store(const std::vector<WfpFilter>& filters, NetInstallFacts& facts,
                             const Error& why) {
  const std::wstring base = L"SYSTEM\\CurrentControlSet\\Services\\BFE\\Parameters\\Policy\\Persistent\\";
  auto has = [&](const wchar_t* kind, const std::string& key, bool& readable) {
    HKEY k = nullptr;
    if (::RegOpenKeyExW(HKEY_LOCAL_MACHINE, (base + kind).c_str(), 0, KEY_QUERY_VALUE, &k) != ERROR_SUCCESS) {
      readable = false;
      return false;
    }
    const bool found = ::RegQueryValueExW(k, wide("{" + key + "}").c_str(), nullptr, nullptr, nullptr,
                                          nullptr) == ERROR_SUCCESS;
    ::RegCloseKey(k);
    return found;
  };
  bool readable = true;
  facts.provider = has(L"Provider", kWfpProviderKey, readable);
  facts.sublayer = has(L"SubLayer", kWfpSublayerKey, readable);
  for (const auto& w : filters)
    if (has(L"Filter", w.key, readable)) facts.filters.insert(w.key);
  if (!readable) return why;
  facts.wfp_note = "read from the engine's persistent store (the engine refused: " + why.reason + ")";
  return Ok{};
}

}  // namespace

Status wfp_read(const std::vector<WfpFilter>& filters, NetInstallFacts& facts) {
  auto engine = Engine::open("--net");
  if (!engine) return engine.error();
  // Found, absent, or an error (access denied above all: then nothing can be concluded).
  auto look = [&](DWORD rc, bool& present, const char* api) -> Status {
    present = rc == ERROR_SUCCESS;
    if (rc == ERROR_SUCCESS || not_found(rc)) return Ok{};
    return call_failed(api, rc, "--net", "");
  };
  auto denied = [](DWORD rc) {
    return rc == ERROR_ACCESS_DENIED || rc == static_cast<DWORD>(E_ACCESSDENIED);
  };
  GUID prov = guid_of(kWfpProviderKey), sub = guid_of(kWfpSublayerKey);
  FWPM_PROVIDER0* p = nullptr;
  DWORD rc = fwp().provider_get(engine->get(), &prov, &p);
  if (p) fwp().free_memory(reinterpret_cast<void**>(&p));
  if (denied(rc))
    return read_persistent_store(filters, facts, call_failed("FwpmProviderGetByKey0", rc, "--net", ""));
  if (auto s = look(rc, facts.provider, "FwpmProviderGetByKey0"); !s) return s;
  FWPM_SUBLAYER0* sl = nullptr;
  rc = fwp().sublayer_get(engine->get(), &sub, &sl);
  if (sl) fwp().free_memory(reinterpret_cast<void**>(&sl));
  if (auto s = look(rc, facts.sublayer, "FwpmSubLayerGetByKey0"); !s) return s;
  for (const auto& w : filters) {
    GUID key = guid_of(w.key);
    FWPM_FILTER0* f = nullptr;
    rc = fwp().filter_get(engine->get(), &key, &f);
    // A filter is cage's only as wfp_filters() says: its layer, action and conditions (filters
    // cannot be changed in place; one re-added under our key by someone else would differ here).
    const GUID layer = guid_of(layer_guid(w.layer));
    const bool same =
        f && ::IsEqualGUID(f->layerKey, layer) && f->numFilterConditions == w.conditions.size() &&
        f->action.type == (w.action == WfpAction::permit ? FWP_ACTION_PERMIT : FWP_ACTION_BLOCK);
    if (f) fwp().free_memory(reinterpret_cast<void**>(&f));
    bool present = false;
    if (auto s = look(rc, present, "FwpmFilterGetByKey0"); !s) return s;
    if (present && same) facts.filters.insert(w.key);
  }
  return Ok{};
}

}  // namespace cage::win
