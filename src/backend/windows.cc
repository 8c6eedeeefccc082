// The Windows backend behind src/main.cc: an AppContainer per run and a job object (src/windows/).
// Process facts come from the wide-character originals (GetCommandLineW, GetEnvironmentStringsW),
// converted to UTF-8 once here.
#include <windows.h>
#include <shellapi.h>
#include <rpc.h>

#include <cstring>
#include <iostream>

#include "backend/backend.h"
#include "windows/compile.h"
#include "windows/execute.h"
#include "windows/self_test.h"

namespace cage::backend {

namespace {

std::string utf8(const wchar_t* w, int len) {
  if (len == 0) return {};
  int n = WideCharToMultiByte(CP_UTF8, 0, w, len, nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<size_t>(n > 0 ? n : 0), '\0');
  if (n > 0) WideCharToMultiByte(CP_UTF8, 0, w, len, out.data(), n, nullptr, nullptr);
  return out;
}

}  // namespace

const char* host_os() { return "windows"; }

int internal_entry(int, char**) { return -1; }

std::vector<std::string> arguments(int argc, char** argv) {
  int n = 0;
  LPWSTR* wargv = CommandLineToArgvW(GetCommandLineW(), &n);
  if (!wargv) return std::vector<std::string>(argv, argv + argc);
  std::vector<std::string> args;
  for (int i = 0; i < n; ++i) args.push_back(utf8(wargv[i], static_cast<int>(wcslen(wargv[i]))));
  LocalFree(wargv);
  return args;
}

Environ environment() {
  Environ env;
  LPWCH block = GetEnvironmentStringsW();
  if (!block) return env;
  for (const wchar_t* e = block; *e; e += wcslen(e) + 1) {
    // "=C:=C:\dir" entries (per-drive current directories) start with '=': not variables.
    const wchar_t* eq = wcschr(e + 1, L'=');
    if (*e == L'=' || !eq) continue;
    env.emplace_back(utf8(e, static_cast<int>(eq - e)), utf8(eq + 1, static_cast<int>(wcslen(eq + 1))));
  }
  FreeEnvironmentStringsW(block);
  return env;
}

std::string current_dir() {
  wchar_t buf[32768];
  DWORD n = GetCurrentDirectoryW(32768, buf);
  if (n == 0 || n >= 32768) return {};
  return utf8(buf, static_cast<int>(n));
}

void adapt_input(policy::PolicyInput& in, policy::Context& ctx) {
  win::normalize_input(in);
  ctx.cwd = win::posix_form(ctx.cwd);
  ctx.home.clear();  // a POSIX-style HOME (Git Bash's "/c/Users/ann") is not the profile directory
  for (const auto& [k, v] : ctx.environ)
    if (_stricmp(k.c_str(), "USERPROFILE") == 0 && !v.empty()) ctx.home = win::posix_form(v);
}

int check(bool json, const Result<policy::Policy>&, const Environ&) { return win::check(json); }

int self_test(const std::vector<std::string>&, bool json) { return win::self_test(json); }

int windows_network(bool install, bool json_errors) {
  auto done = win::set_up_network(install);
  if (!done) return fail(done.error(), json_errors);
  std::cout << "cage: " << *done << "\n";
  return 0;
}

int dry_run(const policy::Policy& pol, const Environ& env, bool json, bool verbose, bool json_errors) {
  auto text = win::dry_run(pol, env, json, verbose);
  if (!text) return fail(text.error(), json_errors);
  std::cout << *text;
  return 0;
}

int run(const policy::Policy& pol, const Environ& env, bool json_errors) {
  auto status = win::run(pol, env);
  if (!status) return fail(status.error(), json_errors);
  return *status;
}

std::string new_run_id() {
  UUID u{};
  ::UuidCreate(&u);  // version 4: random
  const auto* b = reinterpret_cast<const unsigned char*>(&u);
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < sizeof u; ++i) s += {hex[b[i] >> 4], hex[b[i] & 15]};
  return s;
}

// --scratch is refused by win::compile too: no scratch directory exists to list or remove.
int scratch_command(const std::string&, const std::string& name, bool, bool json_errors) {
  return fail(unavailable(name.empty() ? "--scratch-list" : "--scratch-remove " + name,
                          "scratch directories are not implemented on Windows yet", "keep state in a --rw directory"),
              json_errors);
}

}  // namespace cage::backend
