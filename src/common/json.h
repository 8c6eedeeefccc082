// JSON output for --dry-run --json, --json-errors, --check --json: built as a toml::table and printed
// by toml++'s json_formatter, so quoting and escaping come from a maintained library.
#pragma once
#include <string>

#include "common/toml.h"

namespace cage {

std::string to_json(const toml::table& t);

}  // namespace cage
