// The --net slot claim (src/windows/net_slot_lock.cc) run for real: built for Windows with cage_core
// and run under Wine by tests/cross/wine_smoke.sh. The lock files live in a scratch "ProgramData";
// each claim binds the real proxy (LoopbackProxy) to its slot's port, as cage.exe does. Shown: one
// run per slot (a held file is busy), a port another program holds moves the run on, a released slot
// is taken again, a crashed holder's slot (a child process killed while holding it) is reclaimable
// once its journal is gone and skipped while it remains, another user's crashed slot is skipped, and
// with every slot taken the claim is a structured refusal. Exit status: the number of failures, or 77
// (skipped, the reason printed) when no run of kNetSlots free loopback ports can be found.
//
// The ports: cage's own (47300..47315) may be taken on a build machine, which would read as a failed
// claim. The test picks a run of free ports itself (the first from 47300 up, in steps of kNetSlots)
// and each claim binds slot k's proxy to base + k; that claim_net_slot asks for net_slot_port(k) is
// checked on every call, and the mapping itself by tests/unit/windows_net_slots_test.cc.
#include <winsock2.h>
#include <ws2tcpip.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "proxy/loopback.h"
#include "windows/mechanisms.h"
#include "windows/net_slots.h"

using namespace cage;
using namespace cage::win;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

const std::string kUser = "S-1-5-21-1-2-3-1001";
uint16_t g_base = kNetSlotBasePort;  // where slot k's proxy is bound: g_base + k (see the header)

bool port_free(uint16_t port) {
  SOCKET s = ::socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  if (s == INVALID_SOCKET) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  // SO_EXCLUSIVEADDRUSE: a port another program holds (even with SO_REUSEADDR) is not taken for free.
  BOOL one = TRUE;
  ::setsockopt(s, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, reinterpret_cast<const char*>(&one), sizeof one);
  const bool ok = ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::closesocket(s);
  return ok;
}

// The first base from cage's own up (in steps of kNetSlots) whose kNetSlots ports are all free, or 0.
uint16_t free_base() {
  for (unsigned base = kNetSlotBasePort; base + kNetSlots <= 65535; base += kNetSlots) {
    bool all = true;
    for (int k = 0; all && k < kNetSlots; ++k) all = port_free(static_cast<uint16_t>(base + k));
    if (all) return static_cast<uint16_t>(base);
  }
  return 0;
}

struct Held {
  std::unique_ptr<NetSlotClaim> claim;
  std::unique_ptr<proxy::LoopbackProxy> proxy;
  std::vector<SlotAttempt> attempts;
  Error error;
  bool ok = false;
};

Held claim(const std::string& root, const std::string& run) {
  Held h;
  NetSlotRequest req{root, root + "\\journals", kUser, run};
  auto c = claim_net_slot(
      req,
      [&](int slot, uint16_t port, std::string& why) {
        if (port != net_slot_port(slot))
          check(false, "slot " + std::to_string(slot) + " asked for port " + std::to_string(port) + ", not its own " +
                           std::to_string(net_slot_port(slot)));
        const auto bound = static_cast<uint16_t>(g_base + slot);
        auto p = proxy::LoopbackProxy::start(
            proxy::Allowlist(), [](const proxy::NetEvent&) {}, {}, bound);
        if (!p) {
          why = p.error().reason;
          return false;
        }
        h.proxy = std::move(*p);
        return true;
      },
      h.attempts);
  if (c) {
    h.claim = std::move(*c);
    h.ok = true;
  } else {
    h.error = c.error();
  }
  return h;
}

std::string read_file(const std::string& path) {
  std::string out;
  if (FILE* f = _wfopen(wide(path).c_str(), L"rb")) {
    char buf[512];
    size_t n = std::fread(buf, 1, sizeof buf, f);
    out.assign(buf, n);
    std::fclose(f);
  }
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  if (FILE* f = _wfopen(wide(path).c_str(), L"wb")) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
}

// The child: claims a slot and dies holding it, as a crashed cage would (Windows closes its handle).
int child(const std::string& root) {
  Held h = claim(root, "77-crashed");
  std::printf("child slot %d\n", h.ok ? h.claim->slot() : -1);
  std::fflush(stdout);
  ::TerminateProcess(::GetCurrentProcess(), 9);
  return 0;
}

int run_child(const std::string& root) {
  wchar_t self[MAX_PATH];
  ::GetModuleFileNameW(nullptr, self, MAX_PATH);
  std::wstring cmd = L"\"" + std::wstring(self) + L"\" child \"" + wide(root) + L"\" " + std::to_wstring(g_base);
  STARTUPINFOW si{};
  si.cb = sizeof si;
  PROCESS_INFORMATION pi{};
  if (!::CreateProcessW(self, cmd.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si, &pi)) return -1;
  ::WaitForSingleObject(pi.hProcess, 60000);
  DWORD code = 0;
  ::GetExitCodeProcess(pi.hProcess, &code);
  ::CloseHandle(pi.hProcess);
  ::CloseHandle(pi.hThread);
  return static_cast<int>(code);
}

}  // namespace

int main(int argc, char** argv) {
  WSADATA wsa;
  ::WSAStartup(MAKEWORD(2, 2), &wsa);
  if (argc == 4 && std::string(argv[1]) == "child") {
    g_base = static_cast<uint16_t>(std::stoi(argv[3]));
    return child(argv[2]);
  }
  g_base = free_base();
  if (g_base == 0) {
    std::printf("SKIP no run of %d free loopback ports from %u up (the slot claim binds one per slot)\n", kNetSlots,
                static_cast<unsigned>(kNetSlotBasePort));
    return 77;
  }
  std::printf("NOTE ports %u-%u stand for the slots' %u-%u\n", static_cast<unsigned>(g_base),
              static_cast<unsigned>(g_base + kNetSlots - 1), static_cast<unsigned>(kNetSlotBasePort),
              static_cast<unsigned>(kNetSlotBasePort + kNetSlots - 1));
  std::fflush(stdout);
  wchar_t tmp[MAX_PATH];
  ::GetTempPathW(MAX_PATH, tmp);
  const std::string root = narrow(tmp) + "cage-slot-test-" + std::to_string(::GetCurrentProcessId());
  ::CreateDirectoryW(wide(root).c_str(), nullptr);
  ::CreateDirectoryW(wide(root + "\\cage").c_str(), nullptr);
  ::CreateDirectoryW(wide(net_slot_dir(root)).c_str(), nullptr);
  ::CreateDirectoryW(wide(root + "\\journals").c_str(), nullptr);
  for (int k = 0; k < kNetSlots; ++k)
    write_file(net_slot_lock_path(root, k), "");  // as the install leaves them

  Held a = claim(root, "1-a");
  check(a.ok && a.claim->slot() == 0 && a.proxy && a.proxy->port() == g_base,
        "first run: slot 0, its proxy on 127.0.0.1:" + std::to_string(g_base));
  Held b = claim(root, "2-b");
  check(b.ok && b.claim->slot() == 1 && b.attempts.size() == 2 && b.attempts[0].verdict == SlotVerdict::busy,
        "second run at once: slot 0 busy (held unshared), slot 1 claimed");
  // Another program holds slot 2's port: the run moves on to slot 3, and says why.
  SOCKET squat = ::socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(g_base + 2));
  const bool squatted =
      ::bind(squat, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(squat, 4) == 0;
  Held c = claim(root, "3-c");
  check(squatted && c.ok && c.claim->slot() == 3 && c.attempts.size() == 4 && c.attempts[2].port_taken,
        "port " + std::to_string(g_base + 2) + " held by another program: slot 2 skipped (" +
            (c.attempts.size() > 2 ? describe_attempt(c.attempts[2], g_base) : std::string("?")) +
            "), slot 3 claimed");
  check(parse_slot_record(read_file(net_slot_lock_path(root, 2))).state != "held",
        "the skipped slot's record is not left claimed");
  ::closesocket(squat);

  HANDLE peek = ::CreateFileW(wide(net_slot_lock_path(root, 1)).c_str(), GENERIC_READ,
                              FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr, OPEN_EXISTING, 0, nullptr);
  const DWORD peek_err = ::GetLastError();
  check(peek == INVALID_HANDLE_VALUE && peek_err == ERROR_SHARING_VIOLATION,
        "a held slot's lock file cannot be opened by anyone else (share mode 0)");
  if (peek != INVALID_HANDLE_VALUE) ::CloseHandle(peek);
  a.proxy.reset();
  a.claim->release();
  check(parse_slot_record(read_file(net_slot_lock_path(root, 0))).state == "released",
        "release: record 'released'");
  Held d = claim(root, "4-d");
  check(d.ok && d.claim->slot() == 0, "a released slot is taken again");

  // A crashed run: a child process claims the next free slot (2) and is killed while holding it.
  int code = run_child(root);
  SlotRecord crashed = parse_slot_record(read_file(net_slot_lock_path(root, 2)));
  check(code == 9 && crashed.state == "held" && crashed.run == "77-crashed",
        "a killed holder leaves its slot 'held' (exit " + std::to_string(code) + ")");
  write_file(root + "\\journals\\run-77-crashed.journal", "cage-restore-journal 1\n");
  Held e = claim(root, "5-e");
  check(e.ok && e.claim->slot() == 4 && e.attempts[2].verdict == SlotVerdict::dirty_own,
        "its slot is openable again, but skipped while its restore journal remains");
  ::DeleteFileW(wide(root + "\\journals\\run-77-crashed.journal").c_str());
  e.proxy.reset();
  e.claim->release();
  Held f = claim(root, "6-f");
  check(f.ok && f.claim->slot() == 2, "journal replayed (gone): the crashed run's slot is reclaimed");
  write_file(net_slot_lock_path(root, 4), format_slot_record({"held", "S-1-5-21-1-2-3-1002", "9-x"}));
  Held g = claim(root, "7-g");
  check(g.ok && g.claim->slot() == 5 && g.attempts[4].verdict == SlotVerdict::dirty_other,
        "another user's crashed slot is skipped");

  std::vector<Held> rest;
  for (int i = 0; i < kNetSlots; ++i) {
    Held h = claim(root, "8-" + std::to_string(i));
    if (!h.ok) {
      check(rest.size() == 10 && h.error.cls == ErrorClass::spawn_sandbox_unavailable &&
                h.error.reason.find("no --net slot is free") != std::string::npos &&
                h.error.reason.find("left by crashed runs: 4") != std::string::npos,
            "every slot taken: refused (" + h.error.reason + ")");
      break;
    }
    rest.push_back(std::move(h));
  }
  rest.clear();
  for (Held* h : {&b, &c, &d, &e, &f, &g}) *h = Held{};
  for (int k = 0; k < kNetSlots; ++k) ::DeleteFileW(wide(net_slot_lock_path(root, k)).c_str());
  ::RemoveDirectoryW(wide(net_slot_dir(root)).c_str());
  ::RemoveDirectoryW(wide(root + "\\cage").c_str());
  ::RemoveDirectoryW(wide(root + "\\journals").c_str());
  ::RemoveDirectoryW(wide(root).c_str());
  std::printf("%d failed\n", failures);
  return failures;
}
