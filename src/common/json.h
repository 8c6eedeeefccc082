// JSON output for --dry-run --json, --json-errors, --check --json: built as a toml::table and printed
// by toml++'s json_formatter, so quoting and escaping come from a maintained library. Names in that
// output (paths, host names, DNS names) come from the user, the network or the workload and need not
// be UTF-8: every printer here makes them valid UTF-8 first (each byte that does not belong to a
// valid sequence becomes U+FFFD), and what goes to a terminal is made inert (printable()).
#pragma once
#include <string>
#include <string_view>

#include "common/toml.h"

namespace cage {

std::string to_json(const toml::table& t);
// The same on one line (--json-errors: one error, one line, for a caller reading stderr by lines).
std::string to_json_line(const toml::table& t);

// One code point decoded from s at i (advancing i), or -1 for a byte that starts no valid UTF-8
// sequence (overlong forms, surrogates and values past U+10FFFF included), which advances i by one.
long next_code_point(std::string_view s, size_t& i);
// s with each invalid byte replaced by U+FFFD: always valid UTF-8, so always a valid JSON string.
std::string valid_utf8(std::string_view s);
// True for what a terminal acts on rather than shows: C0 controls, DEL, C1 controls (U+0080-U+009F,
// CSI among them) and the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069).
bool is_terminal_control(long cp);
// s for a terminal (stderr): terminal controls as \xNN (\u{NNNN} above U+00FF), each invalid byte as
// \xNN; everything else unchanged. No byte a name carries can move the cursor, retitle the window or
// type into the caller's shell.
std::string printable(std::string_view s);

}  // namespace cage
