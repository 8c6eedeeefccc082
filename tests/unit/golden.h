// Golden files: expected text in tests/golden/NAME (a --dry-run plan or summary, an SBPL profile).
// CAGE_UPDATE_GOLDEN=1 rewrites the file from what the test got; review the diff before committing.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace cage::testing {

inline void expect_golden(const std::string& got, const std::string& name) {
  const std::string path = std::string(CAGE_SOURCE_DIR) + "/tests/golden/" + name;
  if (std::getenv("CAGE_UPDATE_GOLDEN")) std::ofstream(path) << got;
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path << " (run with CAGE_UPDATE_GOLDEN=1)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(got, want.str()) << name;
}

}  // namespace cage::testing
