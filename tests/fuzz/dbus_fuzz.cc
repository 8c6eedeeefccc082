// libFuzzer: the D-Bus reply parser of systemd_scope.cc, fed a byte stream as the user manager's
// socket would deliver it. A parsed message must lie within the input, within kMaxMessage and be at
// least a header long; a prefix of it must ask for more bytes, never parse differently.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "linux/systemd_scope.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cage::lx::dbus;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < 16 && !in.empty(); ++i) {
    Message m;
    long n = parse_message(in, m);
    if (n <= 0) return 0;
    if (static_cast<size_t>(n) > in.size() || static_cast<size_t>(n) > kMaxMessage || n < 16) __builtin_trap();
    if (m.type < 1 || m.type > 4 || m.serial == 0 || m.args.size() > 8) __builtin_trap();
    Message again;
    if (parse_message(in.substr(0, static_cast<size_t>(n) - 1), again) != 0) __builtin_trap();
    in.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}
