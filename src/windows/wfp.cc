// wfp.cc: the run's network filters (parent side): a dynamic WFP session, cage's own sublayer and
// WfpPlan's filters, added in one transaction; closing the engine handle (at exit, or by the kernel
// when cage dies) removes them all. Under Wine FwpmEngineOpen0 fails (0x6E4): the run is refused
// (tests/cross/wine_smoke.sh checks that); the filters themselves: `cage --self-test` on Windows.

#include <vector>

#include "windows/mechanisms.h"
// After <windows.h> (mechanisms.h): these headers need its macros.
#include <fwpmu.h>
#include <rpc.h>
#include <sddl.h>

namespace cage::win {

namespace {

// Values from Microsoft's WFP reference (fwpmu.h in the Windows SDK); mingw's headers lack them.
constexpr GUID kLayerAleAuthConnectV4 = {
    0xc38d57d1, 0x05a7, 0x4c33, {0x90, 0x4f, 0x7f, 0xbc, 0xee, 0xe6, 0x0e, 0x82}};
constexpr GUID kLayerAleAuthConnectV6 = {
    0x4a72393b, 0x319f, 0x44bc, {0x84, 0xc3, 0xba, 0x54, 0xdc, 0xb3, 0xb6, 0xb4}};
constexpr GUID kConditionAleUserId = {
    0xaf043a0a, 0xb34d, 0x4f86, {0x97, 0x9c, 0xc9, 0x03, 0x71, 0xaf, 0x6e, 0x66}};
constexpr GUID kConditionIpProtocol = {
    0x3971ef2b, 0x623e, 0x4f9a, {0x8c, 0xb1, 0x6e, 0x79, 0xb8, 0x06, 0xb9, 0xa7}};
constexpr GUID kConditionIpRemoteAddress = {
    0xb235ae9a, 0x1d64, 0x49b8, {0xa4, 0x4c, 0x5f, 0xf3, 0xd9, 0x09, 0x50, 0x45}};
constexpr GUID kConditionIpRemotePort = {
    0xc35a604d, 0xd22b, 0x4e1a, {0x91, 0xb4, 0x68, 0xf6, 0x74, 0xee, 0x67, 0x4b}};

const std::string kRemedy =
    "run cage from an elevated prompt (adding WFP filters needs an administrator), or use --share-net "
    "to run with the host network unfiltered";

Status add_filter(HANDLE engine, const GUID& sublayer, const WfpFilter& f) {
  std::vector<FWPM_FILTER_CONDITION0> conds(f.conditions.size());
  std::vector<FWP_BYTE_BLOB> blobs(f.conditions.size());
  std::vector<LocalFreer> owned(f.conditions.size());
  for (size_t i = 0; i < f.conditions.size(); ++i) {
    const auto& c = f.conditions[i];
    auto& out = conds[i];
    out.matchType = FWP_MATCH_EQUAL;
    switch (c.field) {
      case WfpCondition::Field::ale_user_id: {
        PSECURITY_DESCRIPTOR sd = nullptr;
        ULONG size = 0;
        if (!::ConvertStringSecurityDescriptorToSecurityDescriptorW(wide(c.sddl).c_str(), SDDL_REVISION_1,
                                                                    &sd, &size))
          return call_failed("ConvertStringSecurityDescriptorToSecurityDescriptorW", ::GetLastError(), c.sddl,
                             kRemedy);
        owned[i].p = sd;
        blobs[i] = FWP_BYTE_BLOB{size, static_cast<UINT8*>(sd)};
        out.fieldKey = kConditionAleUserId;
        out.conditionValue.type = FWP_SECURITY_DESCRIPTOR_TYPE;
        out.conditionValue.sd = &blobs[i];
        break;
      }
      case WfpCondition::Field::ip_protocol:
        out.fieldKey = kConditionIpProtocol;
        out.conditionValue.type = FWP_UINT8;
        out.conditionValue.uint8 = static_cast<UINT8>(c.value);
        break;
      case WfpCondition::Field::ip_remote_address_v4:
        out.fieldKey = kConditionIpRemoteAddress;
        out.conditionValue.type = FWP_UINT32;
        out.conditionValue.uint32 = c.value;  // host byte order, as WFP wants IPv4 addresses
        break;
      case WfpCondition::Field::ip_remote_port:
        out.fieldKey = kConditionIpRemotePort;
        out.conditionValue.type = FWP_UINT16;
        out.conditionValue.uint16 = static_cast<UINT16>(c.value);
        break;
    }
  }
  FWPM_FILTER0 filter{};
  std::wstring name = L"cage: " + wide(f.why);
  filter.displayData.name = name.data();
  filter.layerKey =
      f.layer == WfpFilter::Layer::ale_auth_connect_v4 ? kLayerAleAuthConnectV4 : kLayerAleAuthConnectV6;
  filter.subLayerKey = sublayer;
  filter.flags = f.flags;
  filter.weight.type = FWP_UINT8;
  filter.weight.uint8 = f.weight;
  filter.numFilterConditions = static_cast<UINT32>(conds.size());
  filter.filterCondition = conds.empty() ? nullptr : conds.data();
  filter.action.type = f.action == WfpFilter::Action::permit ? FWP_ACTION_PERMIT : FWP_ACTION_BLOCK;
  UINT64 id = 0;
  DWORD rc = ::FwpmFilterAdd0(engine, &filter, nullptr, &id);
  if (rc != ERROR_SUCCESS) return call_failed("FwpmFilterAdd0", rc, "network: " + f.why, kRemedy);
  return Ok{};
}

}  // namespace

Result<std::unique_ptr<WfpSession>> WfpSession::open(const WfpPlan& plan) {
  std::unique_ptr<WfpSession> s(new WfpSession);
  FWPM_SESSION0 session{};
  session.flags = plan.session_flags;
  std::wstring name = L"cage run";
  session.displayData.name = name.data();
  DWORD rc = ::FwpmEngineOpen0(nullptr, RPC_C_AUTHN_WINNT, nullptr, &session, &s->engine_);
  if (rc != ERROR_SUCCESS) {
    s->engine_ = nullptr;
    return call_failed(
        "FwpmEngineOpen0", rc, "network",
        "the Windows Filtering Platform is needed to confine the network (Wine has none); " + kRemedy);
  }
  if ((rc = ::FwpmTransactionBegin0(s->engine_, 0)) != ERROR_SUCCESS)
    return call_failed("FwpmTransactionBegin0", rc, "network", kRemedy);
  FWPM_SUBLAYER0 sub{};
  if ((rc = ::UuidCreate(&sub.subLayerKey)) != RPC_S_OK)
    return call_failed("UuidCreate", rc, "network", kRemedy);
  std::wstring sub_name = L"cage";
  sub.displayData.name = sub_name.data();
  sub.weight = plan.sublayer_weight;
  if ((rc = ::FwpmSubLayerAdd0(s->engine_, &sub, nullptr)) != ERROR_SUCCESS) {
    ::FwpmTransactionAbort0(s->engine_);
    return call_failed("FwpmSubLayerAdd0", rc, "network", kRemedy);
  }
  for (const auto& f : plan.filters)
    if (auto st = add_filter(s->engine_, sub.subLayerKey, f); !st) {
      ::FwpmTransactionAbort0(s->engine_);
      return st.error();
    }
  if ((rc = ::FwpmTransactionCommit0(s->engine_)) != ERROR_SUCCESS)
    return call_failed("FwpmTransactionCommit0", rc, "network", kRemedy);
  return s;
}

WfpSession::~WfpSession() {
  if (engine_) ::FwpmEngineClose0(engine_);  // a dynamic session: its sublayer and filters go with it
}

}  // namespace cage::win
