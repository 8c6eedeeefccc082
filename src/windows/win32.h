// Small helpers shared by the Windows executor files (Windows builds only): UTF-8 <-> UTF-16, an
// owning HANDLE, and an Error from GetLastError(). No policy here.
#pragma once
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <string>
#include <utility>

#include "common/error.h"

namespace cage::win {

std::wstring wide(const std::string& utf8);
std::string narrow(const std::wstring& utf16);
std::string narrow(const wchar_t* utf16);
// "0x6e4 (The RPC server is unavailable.)"
std::string describe(DWORD code);
// spawn_sandbox_unavailable naming the call that failed and its error code.
Error call_failed(const std::string& api, DWORD code, const std::string& input, const std::string& remedy);

class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(HANDLE h) : h_(h == INVALID_HANDLE_VALUE ? nullptr : h) {}
  UniqueHandle(UniqueHandle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    reset(std::exchange(o.h_, nullptr));
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }
  HANDLE get() const { return h_; }
  explicit operator bool() const { return h_ != nullptr; }
  void reset(HANDLE h = nullptr) {
    if (h_) ::CloseHandle(h_);
    h_ = h;
  }

 private:
  HANDLE h_ = nullptr;
};

// LocalAlloc'd memory from the security APIs (ConvertStringSidToSidW, ...).
struct LocalFreer {
  void* p = nullptr;
  LocalFreer() = default;
  explicit LocalFreer(void* q) : p(q) {}
  LocalFreer(const LocalFreer&) = delete;
  LocalFreer& operator=(const LocalFreer&) = delete;
  ~LocalFreer() {
    if (p) ::LocalFree(p);
  }
};

}  // namespace cage::win
