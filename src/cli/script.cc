// Inline sandbox blocks in scripts (`cage --script FILE`), in the style of PEP 723 inline metadata:
//   # /// cage            or   // /// cage
//   # run = ["python3"]        // run = ["node"]
//   # ///                      // ///
// Pure string work, no I/O, so it is fuzzed (tests/fuzz/profile_fuzz.cc) and unit-tested directly.
// Strict on purpose: a block that is opened but never closed, or a second block, is an error rather
// than a silently different sandbox.
#include <string>
#include <string_view>

#include "cli/profile.h"

namespace cage::cli {

namespace {

std::string_view chomp(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// The comment prefix a start marker uses ("#" or "//"), or empty if `line` is no start marker.
std::string_view start_marker(std::string_view line) {
  for (std::string_view p : {std::string_view("#"), std::string_view("//")}) {
    if (line.size() == p.size() + 9 && line.substr(0, p.size()) == p && line.substr(p.size()) == " /// cage")
      return p;
  }
  return {};
}

}  // namespace

Result<std::optional<ScriptBlock>> extract_script_block(std::string_view script, const std::string& display) {
  std::optional<ScriptBlock> found;
  std::string_view prefix;  // of the open block
  int open_line = 0, line_no = 0;
  bool in_block = false;
  size_t pos = 0;
  while (pos < script.size()) {
    size_t nl = script.find('\n', pos);
    std::string_view line = chomp(script.substr(pos, nl == std::string_view::npos ? script.size() - pos : nl - pos));
    pos = nl == std::string_view::npos ? script.size() : nl + 1;
    ++line_no;
    if (!in_block) {
      std::string_view p = start_marker(line);
      if (p.empty()) continue;
      if (found)
        return invalid(display + ":" + std::to_string(line_no), "a second '" + std::string(p) + " /// cage' block",
                       "keep one cage block per script");
      in_block = true;
      prefix = p;
      open_line = line_no;
      found = ScriptBlock{"", line_no + 1, static_cast<int>(p.size()) + 1};
      continue;
    }
    if (line.size() == prefix.size() + 4 && line.substr(0, prefix.size()) == prefix &&
        line.substr(prefix.size()) == " ///") {
      in_block = false;
      continue;
    }
    if (line == prefix) {
      found->toml += "\n";
    } else if (line.size() > prefix.size() && line.substr(0, prefix.size()) == prefix && line[prefix.size()] == ' ') {
      found->toml.append(line.substr(prefix.size() + 1));
      found->toml += "\n";
    } else {
      return invalid(display + ":" + std::to_string(line_no),
                     "line inside the cage block does not start with '" + std::string(prefix) + " '",
                     "prefix every line of the block with '" + std::string(prefix) + " ' and close it with '" +
                         std::string(prefix) + " ///'");
    }
  }
  if (in_block)
    return invalid(display + ":" + std::to_string(open_line), "the cage block is never closed",
                   "end it with a line '" + std::string(prefix) + " ///'");
  return found;
}

}  // namespace cage::cli
