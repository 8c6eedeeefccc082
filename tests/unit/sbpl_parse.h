// A strict reader for the SBPL cage generates (tests and fuzzer only): lists, atoms, "strings" with
// \\ and \" escapes, #"regex" literals, ; comments. Anything unbalanced or unterminated fails, so a
// path that broke out of its string literal shows up as a parse error or as an unexpected form.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace cage::testing {

struct Sexp {
  enum class Kind { list, atom, string, regex } kind = Kind::list;
  std::string text;  // atom name, or the decoded string
  std::vector<Sexp> kids;
};

class SbplReader {
 public:
  explicit SbplReader(const std::string& s) : s_(s) {}
  // The top-level forms, or nullopt on any syntax error.
  std::optional<std::vector<Sexp>> read_all() {
    std::vector<Sexp> out;
    for (;;) {
      skip();
      if (i_ >= s_.size()) return out;
      auto e = read();
      if (!e) return std::nullopt;
      out.push_back(std::move(*e));
    }
  }

 private:
  void skip() {
    while (i_ < s_.size()) {
      if (s_[i_] == ';') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t') {
        ++i_;
      } else {
        return;
      }
    }
  }
  std::optional<std::string> string_body() {  // at the opening quote
    std::string out;
    for (++i_; i_ < s_.size(); ++i_) {
      char c = s_[i_];
      if (c == '"') {
        ++i_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) return std::nullopt;  // raw control character
      if (c == '\\') {
        if (++i_ >= s_.size() || (s_[i_] != '\\' && s_[i_] != '"')) return std::nullopt;
        c = s_[i_];
      }
      out += c;
    }
    return std::nullopt;
  }
  std::optional<Sexp> read() {
    skip();
    if (i_ >= s_.size()) return std::nullopt;
    char c = s_[i_];
    if (c == ')') return std::nullopt;
    if (c == '(') {
      ++i_;
      Sexp list;
      for (;;) {
        skip();
        if (i_ >= s_.size()) return std::nullopt;
        if (s_[i_] == ')') {
          ++i_;
          return list;
        }
        auto kid = read();
        if (!kid) return std::nullopt;
        list.kids.push_back(std::move(*kid));
      }
    }
    if (c == '"' || (c == '#' && i_ + 1 < s_.size() && s_[i_ + 1] == '"')) {
      bool regex = c == '#';
      if (regex) ++i_;
      auto body = string_body();
      if (!body) return std::nullopt;
      return Sexp{regex ? Sexp::Kind::regex : Sexp::Kind::string, *body, {}};
    }
    Sexp atom{Sexp::Kind::atom, "", {}};
    while (i_ < s_.size() && s_[i_] != ' ' && s_[i_] != '\n' && s_[i_] != '(' && s_[i_] != ')' && s_[i_] != '"' &&
           s_[i_] != ';')
      atom.text += s_[i_++];
    if (atom.text.empty()) return std::nullopt;
    return atom;
  }

  const std::string& s_;
  size_t i_ = 0;
};

// Every (literal "...") / (subpath "...") filter in a form list, with the rule it sits in:
// {"allow" or "deny", operations..., filter head, path}.
struct PathFilter {
  std::string action, ops, head, path;
};
inline void collect_filters(const std::vector<Sexp>& forms, std::vector<PathFilter>& out) {
  for (const auto& f : forms) {
    if (f.kind != Sexp::Kind::list || f.kids.empty()) continue;
    const std::string& action = f.kids[0].text;
    std::string ops;
    for (size_t k = 1; k < f.kids.size(); ++k) {
      const Sexp& kid = f.kids[k];
      if (kid.kind == Sexp::Kind::atom) ops += (ops.empty() ? "" : " ") + kid.text;
      if (kid.kind == Sexp::Kind::list && kid.kids.size() == 2 && kid.kids[1].kind == Sexp::Kind::string &&
          (kid.kids[0].text == "literal" || kid.kids[0].text == "subpath"))
        out.push_back(PathFilter{action, ops, kid.kids[0].text, kid.kids[1].text});
    }
  }
}

}  // namespace cage::testing
