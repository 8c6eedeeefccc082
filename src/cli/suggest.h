// The remedy for an option cage does not have (suggest.cc): cage's way of doing what a bubblewrap,
// firejail or docker-run flag does, "did you mean" for a near miss of one of cage's own, or --help.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace cage::cli {

// "--private=/x" -> "--private": the option a word names.
std::string option_name(std::string_view word);
// known: cage's own long options ("--timeout", ...).
std::string unknown_option_remedy(std::string_view word, const std::vector<std::string>& known);

}  // namespace cage::cli
