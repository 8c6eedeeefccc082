// The environment a workload needs to find cage's proxy (pure; the core's compile step adds it).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cage::proxy {

std::vector<std::pair<std::string, std::string>> proxy_environment(uint16_t port);

}  // namespace cage::proxy
