#include "common/json.h"

#include <sstream>

namespace cage {

std::string to_json(const toml::table& t) {
  std::ostringstream out;
  out << toml::json_formatter{t, toml::format_flags::quote_dates_and_times};
  return out.str();
}

}  // namespace cage
