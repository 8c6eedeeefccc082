// UTF-8 <-> UTF-16 and error text for the Windows executor (Windows builds only).
#include "windows/win32.h"

#include <cstdio>

namespace cage::win {

std::wstring wide(const std::string& utf8) {
  if (utf8.empty()) return {};
  int n = ::MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
  std::wstring out(static_cast<size_t>(n > 0 ? n : 0), L'\0');
  if (n > 0) ::MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), out.data(), n);
  return out;
}

std::string narrow(const std::wstring& utf16) {
  if (utf16.empty()) return {};
  int n = ::WideCharToMultiByte(CP_UTF8, 0, utf16.data(), static_cast<int>(utf16.size()), nullptr, 0, nullptr,
                                nullptr);
  std::string out(static_cast<size_t>(n > 0 ? n : 0), '\0');
  if (n > 0)
    ::WideCharToMultiByte(CP_UTF8, 0, utf16.data(), static_cast<int>(utf16.size()), out.data(), n, nullptr,
                          nullptr);
  return out;
}

std::string narrow(const wchar_t* utf16) {
  return utf16 ? narrow(std::wstring(utf16)) : std::string();
}

std::string describe(DWORD code) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(code));
  wchar_t* msg = nullptr;
  DWORD n = ::FormatMessageW(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
      code, 0, reinterpret_cast<wchar_t*>(&msg), 0, nullptr);
  std::string text = n && msg ? narrow(msg) : std::string();
  if (msg) ::LocalFree(msg);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text.empty() ? std::string(hex) : std::string(hex) + " (" + text + ")";
}

Error call_failed(const std::string& api, DWORD code, const std::string& input, const std::string& remedy) {
  // The Windows code is in the reason; sys_errno is for errno values (strerror would misname it).
  return unavailable(input, api + " failed: " + describe(code), remedy);
}

}  // namespace cage::win
