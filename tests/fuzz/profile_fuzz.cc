// libFuzzer target for the profile loader and the inline script-block extractor (src/cli/profile.cc,
// src/cli/script.cc): arbitrary bytes as a profile and as a script must give a Layer or an Error,
// never a crash, a hang or undefined behaviour (toml++ 3.3.0's TOML_UNREACHABLE was one: #190).
// Built by tests/fuzz/run.sh against the patched toml++ headers, with no built-in profiles linked.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cli/profile.h"

namespace cage::cli {
const BuiltinProfile kBuiltinProfiles[] = {{"fuzz", "hostname = \"fuzz\"\n"}, {nullptr, nullptr}};
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cage::cli;
  static const ProfileContext ctx = [] {
    ProfileContext c;
    c.cwd = "/nonexistent-fuzz/cwd";
    c.home = "/nonexistent-fuzz/home";
    c.environ = {{"HOME", c.home}, {"A", "a"}, {"EMPTY", ""}};
    c.system_dir = "/nonexistent-fuzz/etc";
    return c;
  }();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto layer = load_profile_text(text, "fuzz.toml", "/nonexistent-fuzz/p", ctx);
  if (layer) {
    // Whatever loads must print and load back.
    layer->input.argv = layer->run.value_or(std::vector<std::string>{});
    auto again = load_profile_text(print_profile(layer->input, ctx.home, ctx.cwd), "printed.toml", ctx.cwd, ctx);
    if (!again) __builtin_trap();
  }
  auto block = extract_script_block(text, "fuzz.py");
  if (block && *block) (void)load_profile_text((*block)->toml, "fuzz.py", "/nonexistent-fuzz", ctx, (*block)->first_line - 1,
                                              (*block)->prefix);
  return 0;
}
