// Output caps (--max-output, --max-stdout, --max-stderr, [limits] max_*): parsing, validation, the
// profile round trip, the plan's text and JSON, the result's "output" and the marker line. The
// copying itself runs against the real kernel in tests/integration/output_cap.sh.
#include <gtest/gtest.h>

#include "cli/options.h"
#include "cli/profile.h"
#include "common/audit.h"
#include "common/sha256.h"
#include "fake_host_view.h"
#include "linux/compile.h"
#include "linux/output_cap.h"
#include "linux/result.h"

namespace cage::testing {
namespace {

Result<policy::Policy> validated(std::vector<std::string> words) {
  words.insert(words.begin(), "cage");
  auto inv = cli::parse(words, "/w");
  if (!inv) return inv.error();
  return policy::validate(inv->input, policy::Context{"/w", "/home/ann", {}});
}

TEST(OutputCap, MaxOutputCapsBothStreamsAndPerStreamFlagsOverride) {
  auto p = validated({"--max-output", "1M", "--", "true"});
  ASSERT_TRUE(p) << p.error().reason;
  EXPECT_EQ(*p->limits.max_stdout, 1u << 20);
  EXPECT_EQ(*p->limits.max_stderr, 1u << 20);
  EXPECT_EQ(p->limits.output_origin, "--max-output 1M");
  auto q = validated({"--max-stderr", "0", "--max-output", "4K", "--", "true"});
  ASSERT_TRUE(q) << q.error().reason;
  EXPECT_EQ(*q->limits.max_stdout, 4096u);
  EXPECT_EQ(*q->limits.max_stderr, 0u);  // 0: nothing passes, everything is counted and hashed
  auto r = validated({"--max-stdout", "1000", "--", "true"});
  ASSERT_TRUE(r) << r.error().reason;
  EXPECT_EQ(*r->limits.max_stdout, 1000u);
  EXPECT_FALSE(r->limits.max_stderr);
  auto none = validated({"--", "true"});
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->limits.max_stdout || none->limits.max_stderr);
}

TEST(OutputCap, BadSizesNameTheirFlag) {
  for (const char* flag : {"--max-output", "--max-stdout", "--max-stderr"})
    for (const char* bad : {"-1", "x", "12Q", "1.5.5M", "99999999T"}) {
      auto p = validated({flag, bad, "--", "true"});
      ASSERT_FALSE(p) << flag << " " << bad;
      EXPECT_EQ(p.error().cls, ErrorClass::invalid_policy);
      EXPECT_EQ(p.error().input, std::string(flag) + " " + bad);
    }
  auto missing = validated({"--", "true", "--max-output"});  // after --: the command's word
  EXPECT_TRUE(missing);
}

cli::ProfileContext profile_ctx() {
  cli::ProfileContext c;
  c.cwd = "/w";
  c.home = "/home/ann";
  c.system_dir = "/nonexistent/cage/profiles";
  return c;
}

TEST(OutputCap, ProfileKeysAndPrintProfileRoundTrip) {
  auto l = cli::load_profile_text("[limits]\nmax_output = \"1M\"\nmax_stderr = 4096\n", "/p/cage.toml", "/p",
                                  profile_ctx());
  ASSERT_TRUE(l) << l.error().reason;
  EXPECT_EQ(l->input.max_output->text, "1M");
  EXPECT_EQ(l->input.max_stderr->text, "4096");
  EXPECT_EQ(l->input.max_stderr->origin, "/p/cage.toml:3:14 limits.max_stderr");
  auto bad = cli::load_profile_text("[limits]\nmax_stdout = true\n", "/p/cage.toml", "/p", profile_ctx());
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input.rfind("/p/cage.toml:2", 0), 0u) << bad.error().input;
  auto unknown = cli::load_profile_text("[limits]\nmax_out = 1\n", "/p/cage.toml", "/p", profile_ctx());
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().remedy.find("max_output max_stdout max_stderr"), std::string::npos);

  auto inv = cli::parse({"cage", "--max-output", "2M", "--max-stdout", "10K", "--", "true"}, "/w");
  ASSERT_TRUE(inv);
  const std::string text = cli::print_profile(inv->input, "/home/ann", "/w");
  auto back = cli::load_profile_text(text, "printed.toml", "/w", profile_ctx());
  ASSERT_TRUE(back) << back.error().reason << "\n" << text;
  EXPECT_EQ(back->input.max_output->text, "2M");
  EXPECT_EQ(back->input.max_stdout->text, "10K");
  EXPECT_FALSE(back->input.max_stderr);
}

TEST(OutputCap, DryRunShowsTheCaps) {
  FakeHostView host;
  auto plan = lx::compile(policy_of({"--max-stdout", "1M", "--max-stderr", "3000", "--", "sh"}), host, {{"PATH", "/usr/bin:/bin"}});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(*plan->limits.max_stdout, 1u << 20);
  const std::string text = lx::render_text(*plan);
  EXPECT_NE(text.find("output: stdout capped at 1 MiB, stderr capped at 3000 B"), std::string::npos) << text;
  EXPECT_NE(lx::render_summary(*plan).find("stdout capped at 1 MiB, stderr capped at 3000 B"), std::string::npos);
  const std::string json = audit::to_json_line(lx::render_table(*plan));
  EXPECT_NE(json.find(R"("max_stdout_bytes":1048576)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("max_stderr_bytes":3000)"), std::string::npos) << json;
  auto plain = lx::compile(policy_of({"--", "sh"}), host, {{"PATH", "/usr/bin:/bin"}});
  ASSERT_TRUE(plain);
  EXPECT_EQ(lx::render_text(*plain).find("output:"), std::string::npos);
}

TEST(OutputCap, ResultRecordsEachCappedStream) {
  lx::report::RunFacts f;
  f.run_id = std::string(32, 'a');
  f.outcome = lx::RunOutcome{};
  auto line = audit::to_json_line(lx::report::result_table(f));
  EXPECT_EQ(line.find(R"("output")"), std::string::npos) << "no cap, no output field: " << line;
  f.outcome->output.push_back({"stdout", 1024, 1024, 5000, sha256_hex("x"), false});
  line = audit::to_json_line(lx::report::result_table(f));
  EXPECT_NE(line.find(R"("output":{"stdout":{"cap_bytes":1024,"dropped_bytes":5000,"reader_left":false,)"
                      R"("sha256":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",)"
                      R"("written_bytes":1024}})"),
            std::string::npos)
      << line;
}

TEST(OutputCap, MarkerLineStatesTheExactCountAndTheCap) {
  EXPECT_EQ(lx::output_cap::marker_line({"stdout", 1 << 20, 1 << 20, 12345, "", false}),
            "cage: stdout truncated: 12345 bytes dropped past the 1M cap\n");
  EXPECT_EQ(lx::output_cap::marker_line({"stderr", 1000, 1000, 1, "", false}),
            "cage: stderr truncated: 1 bytes dropped past the 1000-byte cap\n");
  EXPECT_EQ(lx::output_cap::marker_line({"stderr", 0, 0, 7, "", false}),
            "cage: stderr truncated: 7 bytes dropped past the 0-byte cap\n");
}

// The stream's hash is taken in pieces of any size; it must equal the one-shot digest.
TEST(OutputCap, Sha256InPiecesEqualsTheWhole) {
  std::string data;
  for (int i = 0; i < 5000; ++i) data += static_cast<char>(i * 7);
  for (size_t piece : {1u, 3u, 63u, 64u, 65u, 1000u, 4999u}) {
    Sha256 h;
    for (size_t at = 0; at < data.size(); at += piece) h.update(data.data() + at, std::min(piece, data.size() - at));
    EXPECT_EQ(h.hex(), sha256_hex(data)) << piece;
  }
  Sha256 empty;
  EXPECT_EQ(empty.hex(), sha256_hex(""));
}

}  // namespace
}  // namespace cage::testing
