// The option table (src/cli/option_table.cc) against what describes the options elsewhere: the
// unknown-key lists of profile.cc, the four completions (each flag offered; a flag with a value
// skipped with its value when finding where the command starts; its files, directories, variables
// or choices offered), the man page's OPTIONS (.B for a flag, .BI with its value) and its PROFILES
// keys. tests/packaging/docs.sh checks the lists against `cage --help` and runs the shells.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "cli/option_table.h"

namespace cage::testing {
namespace {

using cli::Kind;
using cli::OptionSpec;

std::string read_source(const std::string& rel) {
  std::ifstream in(std::string(CAGE_SOURCE_DIR) + "/" + rel);
  EXPECT_TRUE(in) << rel;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The text from the first `from` (after it) to the next `to`; "" when either is absent.
std::string between(const std::string& text, const std::string& from, const std::string& to, size_t pos = 0) {
  size_t a = text.find(from, pos);
  if (a == std::string::npos) return "";
  a += from.size();
  size_t b = text.find(to, a);
  return b == std::string::npos ? "" : text.substr(a, b - a);
}

// `word` in `text` as a whole word: not part of a longer option name (--net in --net-mode).
bool has_word(const std::string& text, const std::string& word) {
  auto part = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !part(text[at - 1]) || (text[at - 1] == '-' && word[0] != '-');
    const bool ends = at + word.size() == text.size() || !part(text[at + word.size()]);
    if (starts && ends) return true;
  }
  return false;
}

// The line of `text` holding `needle`, or "".
std::string line_with(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  size_t a = text.rfind('\n', at), b = text.find('\n', at);
  return text.substr(a == std::string::npos ? 0 : a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool takes_value(const OptionSpec& o) { return o.kind != Kind::boolean; }
bool is_choices(const char* c) {
  return c && std::string(c) != "file" && std::string(c) != "dir" && std::string(c) != "variable";
}

std::vector<const OptionSpec*> flags() {
  std::vector<const OptionSpec*> out;
  for (const auto& o : cli::options())
    if (o.flag) out.push_back(&o);
  return out;
}

TEST(OptionTable, EachSectionListsItsKeys) {
  std::map<std::string, std::set<std::string>> keys{{"", {"version", "include", "run"}}, {"exec", {"run"}}};
  for (const auto& o : cli::options())
    if (o.section) {
      EXPECT_TRUE(keys[o.section].insert(o.key).second) << "twice: " << o.section << "." << o.key;
    }
  std::set<std::string> seen;
  for (const auto& s : cli::sections()) {
    const auto listed = words(s.keys);
    EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), keys[s.name]) << "[" << s.name << "]";
    seen.insert(s.name);
  }
  for (const auto& [name, k] : keys) { EXPECT_TRUE(seen.count(name)) << "no section " << name; }
}

TEST(OptionTable, EveryRowIsComplete) {
  for (const auto& o : cli::options()) {
    SCOPED_TRACE(o.key ? o.key : o.flag);
    EXPECT_NE(!o.list, !o.scalar) << "a list or a scalar";
    EXPECT_TRUE(o.flag || o.section) << "neither a flag nor a profile key";
    if (o.flag) { EXPECT_EQ(std::string(o.value_name).empty(), o.kind == Kind::boolean); }
    const bool pairs = o.kind == Kind::pairs || o.kind == Kind::integer_pairs;
    EXPECT_EQ(o.expected != nullptr, pairs);
    if (pairs || o.kind == Kind::paths || o.kind == Kind::words) { EXPECT_TRUE(o.list); }
    if (o.merge != cli::Merge::append) { EXPECT_TRUE(o.list); }
  }
}

TEST(OptionTable, BashCompletion) {
  const std::string text = read_source("completions/cage.bash");
  const std::string opts = between(text, "local opts=\"", "\"");
  const std::string skip = between(text, "case \"${COMP_WORDS[i]}\" in", "i=$((i + 1))");
  const std::string prev = between(text, "case \"$prev\" in", "\n  esac");
  ASSERT_FALSE(opts.empty() || skip.empty() || prev.empty());
  for (const auto* o : flags()) {
    SCOPED_TRACE(o->flag);
    EXPECT_TRUE(has_word(opts, o->flag));
    EXPECT_EQ(has_word(skip, o->flag), takes_value(*o)) << "in the list of options with a value";
    if (!takes_value(*o)) continue;
    // Its branch of `case "$prev"`: the patterns line holding the flag, up to ";;".
    size_t at = std::string::npos;
    for (size_t p = prev.find(o->flag); p != std::string::npos; p = prev.find(o->flag, p + 1)) {
      const char after = prev[p + std::string(o->flag).size()];
      if (after == '|' || after == ')') at = p;
    }
    if (at == std::string::npos) {
      ADD_FAILURE() << "no case \"$prev\" branch";
      continue;
    }
    const std::string body = prev.substr(at, prev.find(";;", at) - at);
    const std::string c = o->complete ? o->complete : "";
    if (c == "file") { EXPECT_NE(body.find("compgen -f"), std::string::npos); }
    if (c == "dir") { EXPECT_NE(body.find("compgen -d"), std::string::npos); }
    if (c == "variable") { EXPECT_NE(body.find("compgen -e"), std::string::npos); }
    if (is_choices(o->complete)) {
      for (const auto& w : words(c)) { EXPECT_TRUE(has_word(body, w)) << w; }
    }
  }
}

TEST(OptionTable, ZshCompletion) {
  const std::string text = read_source("completions/_cage");
  for (const auto* o : flags()) {
    SCOPED_TRACE(o->flag);
    const std::string line = line_with(text, std::string("'") + std::string(o->list ? "*" : "") + o->flag + "[");
    if (line.empty()) {
      ADD_FAILURE() << (o->list ? "no '*" : "no '") << o->flag << "[ line";
      continue;
    }
    EXPECT_EQ(line.find("]:") != std::string::npos, takes_value(*o)) << line;
    const std::string c = o->complete ? o->complete : "";
    if (c == "file") { EXPECT_NE(line.find(":_files"), std::string::npos) << line; }
    if (c == "dir") { EXPECT_NE(line.find(":_files -/"), std::string::npos) << line; }
    if (c == "variable") { EXPECT_NE(line.find(":_parameters"), std::string::npos) << line; }
    if (is_choices(o->complete)) {
      for (const auto& w : words(c)) { EXPECT_TRUE(has_word(line, w)) << w << " in " << line; }
    }
  }
}

TEST(OptionTable, FishCompletion) {
  const std::string text = read_source("completions/cage.fish");
  const std::string skip1 = between(text, "case --\n", "set skip 1");
  const std::string skip2 = between(text, "case --\n", "set skip 1", text.find("function __cage_complete_command"));
  ASSERT_FALSE(skip1.empty() || skip2.empty());
  for (const auto* o : flags()) {
    SCOPED_TRACE(o->flag);
    EXPECT_EQ(has_word(skip1, o->flag), takes_value(*o)) << "__cage_command_started's options with a value";
    EXPECT_EQ(has_word(skip2, o->flag), takes_value(*o)) << "__cage_complete_command's options with a value";
    const std::string line = line_with(text, std::string("-n $opt -l ") + std::string(o->flag + 2) + " ");
    if (line.empty()) {
      ADD_FAILURE() << "no complete line";
      continue;
    }
    EXPECT_EQ(has_word(line, "-x") || has_word(line, "-r"), takes_value(*o)) << line;
    const std::string c = o->complete ? o->complete : "";
    if (c == "file") { EXPECT_TRUE(has_word(line, "-F")) << line; }
    if (c == "dir") { EXPECT_NE(line.find("__fish_complete_directories"), std::string::npos) << line; }
    if (c == "variable") { EXPECT_NE(line.find("set -xn"), std::string::npos) << line; }
    if (is_choices(o->complete)) {
      for (const auto& w : words(c)) { EXPECT_TRUE(has_word(line, w)) << w << " in " << line; }
    }
  }
}

TEST(OptionTable, PowerShellCompletion) {
  const std::string text = read_source("completions/cage.ps1");
  const std::string all = between(text, "$script:CageOptions = [ordered]@{", "\n}");
  const std::string values = between(text, "$script:CageValues = @{", "\n}");
  const std::string paths = line_with(text, "$script:CagePathOptions = @(");
  const std::string with_value = between(text, "$script:CageValueOptions = @(", ")");
  ASSERT_FALSE(all.empty() || values.empty() || paths.empty() || with_value.empty());
  for (const auto* o : flags()) {
    SCOPED_TRACE(o->flag);
    const std::string quoted = std::string("'") + std::string(o->flag) + "'";
    EXPECT_NE(all.find(quoted), std::string::npos);
    EXPECT_EQ(with_value.find(quoted) != std::string::npos, takes_value(*o)) << "in $CageValueOptions";
    const std::string c = o->complete ? o->complete : "";
    EXPECT_EQ(paths.find(quoted) != std::string::npos, c == "file" || c == "dir") << "in $CagePathOptions";
    if (is_choices(o->complete)) {
      const std::string line = line_with(values, quoted);
      for (const auto& w : words(c)) {
        EXPECT_NE(line.find(std::string("'") + w + "'"), std::string::npos) << w << " in " << line;
      }
    }
  }
}

// A flag as roff spells it: every '-' escaped.
std::string roff(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

TEST(OptionTable, ManPageOptions) {
  const std::string options = between(read_source("man/cage.1.in"), "\n.SH OPTIONS\n", "\n.SH ");
  ASSERT_FALSE(options.empty());
  for (const auto* o : flags()) {
    SCOPED_TRACE(o->flag);
    if (takes_value(*o))
      EXPECT_NE(options.find(std::string("\n.BI ") + roff(o->flag) + " "), std::string::npos) << ".BI " << roff(o->flag);
    else
      EXPECT_NE(options.find(std::string("\n.B ") + roff(o->flag) + "\n"), std::string::npos) << ".B " << roff(o->flag);
  }
}

// Each key has a tag in PROFILES, Keys: ".B key = ..." at the top level, ".B [table] key key2 ..." or
// ".B [table] key = ..." in a table.
TEST(OptionTable, ManPageProfileKeys) {
  const std::string keys = between(read_source("man/sections/profiles.roff"), "\n.SS Keys\n", "\n.SS ");
  ASSERT_FALSE(keys.empty());
  std::set<std::string> documented;
  std::istringstream in(keys);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(".B ", 0) != 0) continue;
    auto w = words(line.substr(3));
    std::string table;
    size_t i = 0;
    if (!w.empty() && w[0].front() == '[') table = w[i++].substr(1, w[0].size() - 2) + ".";
    for (; i < w.size() && w[i] != "="; ++i) documented.insert(table + w[i]);
  }
  for (const auto& o : cli::options()) {
    if (!o.section) continue;
    const std::string key = std::string(o.section) + (*o.section ? "." : "") + o.key;
    EXPECT_TRUE(documented.count(key)) << key << " has no tag in man/sections/profiles.roff, Keys";
  }
}

}  // namespace
}  // namespace cage::testing
