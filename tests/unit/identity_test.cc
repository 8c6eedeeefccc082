// --label, --run-id, --scratch and --uid: validation (each bad value names its input), profile round
// trip, and the Linux plans (ids, passwd, the scratch mount, the Landlock-only refusal and grant).
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/options.h"
#include "cli/profile.h"
#include "fake_host_view.h"
#include "linux/compile.h"
#include "policy/policy.h"

namespace cage::testing {
namespace {

Result<policy::Policy> validated(std::vector<std::string> words,
                                 std::vector<std::pair<std::string, std::string>> env = {}) {
  words.insert(words.begin(), "cage");
  auto inv = cli::parse(words, "/home/ann/proj");
  if (!inv) return inv.error();
  return policy::validate(inv->input, policy::Context{"/home/ann/proj", "/home/ann", std::move(env)});
}

void expect_refused(std::vector<std::string> words, ErrorClass cls, const std::string& input) {
  auto p = validated(words);
  ASSERT_FALSE(p) << input;
  EXPECT_EQ(p.error().cls, cls);
  EXPECT_EQ(p.error().input, input);
}

TEST(Identity, LabelsKeepTheirOrder) {
  auto p = validated({"--label", "team=infra", "--label", "ticket=OPS-1 two words", "--", "make"});
  ASSERT_TRUE(p) << p.error().reason;
  ASSERT_EQ(p->labels.size(), 2u);
  EXPECT_EQ(p->labels[0], (std::pair<std::string, std::string>{"team", "infra"}));
  EXPECT_EQ(p->labels[1].second, "OPS-1 two words");
}

TEST(Identity, BadLabelsNameTheirInput) {
  expect_refused({"--label", "novalue", "--", "make"}, ErrorClass::invalid_policy, "--label novalue");
  expect_refused({"--label", "a b=1", "--", "make"}, ErrorClass::invalid_policy, "--label a b=1");
  expect_refused({"--label", "-x=1", "--", "make"}, ErrorClass::invalid_policy, "--label -x=1");
  expect_refused({"--label", "=1", "--", "make"}, ErrorClass::invalid_policy, "--label =1");
  expect_refused({"--label", "a=x\ny", "--", "make"}, ErrorClass::invalid_policy, "--label a=x\ny");
  expect_refused({"--label", "a=1", "--label", "a=2", "--", "make"}, ErrorClass::invalid_policy, "--label a=2");
  expect_refused({"--label", "a=" + std::string(257, 'v'), "--", "make"}, ErrorClass::invalid_policy,
                 "--label a=" + std::string(257, 'v'));
  expect_refused({"--label", std::string(64, 'k') + "=1", "--", "make"}, ErrorClass::invalid_policy,
                 "--label " + std::string(64, 'k') + "=1");
  EXPECT_TRUE(validated({"--label", std::string(63, 'k') + "=", "--", "make"}));
}

TEST(Identity, RunIdIsCheckedWhenParsed) {
  auto ok = validated({"--run-id", "build-42.a_b", "--", "make"});
  ASSERT_TRUE(ok) << ok.error().reason;
  EXPECT_EQ(ok->run_id, "build-42.a_b");
  expect_refused({"--run-id", "../x", "--", "make"}, ErrorClass::usage_error, "--run-id ../x");
  expect_refused({"--run-id", "a b", "--", "make"}, ErrorClass::usage_error, "--run-id a b");
  expect_refused({"--run-id", std::string(65, 'a'), "--", "make"}, ErrorClass::usage_error,
                 "--run-id " + std::string(65, 'a'));
  EXPECT_TRUE(policy::valid_run_id(std::string(64, 'a')));
}

TEST(Identity, ScratchLivesInTheStateDirectory) {
  auto p = validated({"--scratch", "cache", "--", "make"});
  ASSERT_TRUE(p) << p.error().reason;
  EXPECT_EQ(p->scratch->host_dir, "/home/ann/.local/state/cage/scratch/cache");
  auto x = validated({"--scratch", "cache", "--", "make"}, {{"XDG_STATE_HOME", "/srv/state"}});
  ASSERT_TRUE(x);
  EXPECT_EQ(x->scratch->host_dir, "/srv/state/cage/scratch/cache");
  auto rel = validated({"--scratch", "cache", "--", "make"}, {{"XDG_STATE_HOME", "state"}});  // XDG: relative ignored
  ASSERT_TRUE(rel);
  EXPECT_EQ(rel->scratch->host_dir, "/home/ann/.local/state/cage/scratch/cache");
  for (const char* bad : {"..", ".", "a/b", "", ".hidden", "a b"})
    expect_refused({"--scratch", bad, "--", "make"}, ErrorClass::invalid_policy, std::string("--scratch ") + bad);
}

TEST(Identity, UidForms) {
  auto nobody = validated({"--uid", "nobody", "--", "make"});
  ASSERT_TRUE(nobody);
  EXPECT_EQ(nobody->run_as->uid, 65534u);
  EXPECT_EQ(nobody->run_as->gid, 65534u);
  auto pair = validated({"--uid", "1234:99", "--", "make"});
  ASSERT_TRUE(pair);
  EXPECT_EQ(pair->run_as->uid, 1234u);
  EXPECT_EQ(pair->run_as->gid, 99u);
  EXPECT_EQ(validated({"--uid", "77", "--", "make"})->run_as->gid, 77u);
  for (const char* bad : {"0", "5:0", "root", "-1", "4294967295", "1:", "x:1", "99999999999"})
    expect_refused({"--uid", bad, "--", "make"}, ErrorClass::invalid_policy, std::string("--uid ") + bad);
}

TEST(Identity, ProfileKeysRoundTrip) {
  cli::ProfileContext c;
  c.cwd = "/w";
  c.home = "/home/ann";
  auto r = cli::load_profile_text("uid = \"nobody\"\n[fs]\nscratch = \"cache\"\n[audit]\nlabels = { team = \"infra\" }\n",
                                  "/p/cage.toml", "/p", c);
  ASSERT_TRUE(r) << r.error().reason;
  std::string text = cli::print_profile(r->input, "/home/ann", "/w");
  auto back = cli::load_profile_text(text, "/p/printed.toml", "/p", c);
  ASSERT_TRUE(back) << back.error().reason << "\n" << text;
  ASSERT_EQ(back->input.labels.size(), 1u);
  EXPECT_EQ(back->input.labels[0].text, "team=infra");
  EXPECT_EQ(back->input.scratch->text, "cache");
  EXPECT_EQ(back->input.uid->text, "nobody");
  auto bad = cli::load_profile_text("[audit]\nlabels = [\"a\"]\n", "/p/cage.toml", "/p", c);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().input, "/p/cage.toml:2:10 audit.labels");
}

// A flag replaces a profile's label of the same key; two in one source are an error (above).
TEST(Identity, FlagLabelReplacesProfileLabel) {
  policy::PolicyInput into, later;
  into.labels = {{"team=a", "/p/cage.toml:3:1 audit.labels.team", ""}, {"env=ci", "/p/cage.toml:3:1 audit.labels.env", ""}};
  later.labels = {{"team=b", "--label", ""}};
  cli::merge_into(into, later, "/home/ann");
  ASSERT_EQ(into.labels.size(), 2u);
  EXPECT_EQ(into.labels[0].text, "env=ci");
  EXPECT_EQ(into.labels[1].text, "team=b");
}

Result<lx::Plan> plan_of(std::vector<std::string> words, const FakeHostView& host = FakeHostView()) {
  auto p = validated(std::move(words));
  if (!p) return p.error();
  return lx::compile(*p, host, {{"PATH", "/usr/bin:/bin"}});
}

const lx::MountStep* file_at(const lx::Plan& plan, const std::string& target) {
  for (const auto& m : plan.mounts)
    if (m.target == target) return &m;
  return nullptr;
}

bool has_env(const lx::Plan& plan, const std::string& e) {
  return std::find(plan.env.begin(), plan.env.end(), e) != plan.env.end();
}

TEST(IdentityPlan, UidNobodyMapsToTheCaller) {
  auto plan = plan_of({"--uid", "nobody", "--run-id", "r1", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  EXPECT_EQ(plan->ids.outer_uid, 1000u);
  EXPECT_EQ(plan->ids.inner_uid, 65534u);
  EXPECT_EQ(plan->ids.inner_gid, 65534u);
  const auto* pw = file_at(*plan, "/etc/passwd");
  ASSERT_TRUE(pw);
  EXPECT_NE(pw->content.find("nobody:x:65534:65534:nobody:/home/ann:/bin/bash\n"), std::string::npos) << pw->content;
  EXPECT_EQ(pw->content.find("\nann:"), std::string::npos) << pw->content;  // one entry for the inside id
  EXPECT_TRUE(has_env(*plan, "USER=nobody"));
  EXPECT_TRUE(has_env(*plan, "CAGE_RUN_ID=r1"));
  auto plain = plan_of({"--", "make"});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->ids.inner_uid, 1000u);
  EXPECT_NE(file_at(*plain, "/etc/passwd")->content.find("ann:x:1000:1000::/home/ann:/bin/bash\n"), std::string::npos);
  EXPECT_TRUE(std::none_of(plain->env.begin(), plain->env.end(),
                           [](const std::string& e) { return e.rfind("CAGE_RUN_ID=", 0) == 0; }));
}

TEST(IdentityPlan, LandlockOnlyRefusesAnotherUid) {
  FakeHostView host;
  host.set_user_namespaces(false);
  auto refused = plan_of({"--mechanism", "landlock", "--allow-degraded", "pid", "--uid", "nobody", "--", "make"}, host);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().cls, ErrorClass::spawn_sandbox_unavailable);
  EXPECT_EQ(refused.error().input, "--uid nobody");
  // The caller's own ids change nothing: allowed.
  EXPECT_TRUE(plan_of({"--mechanism", "landlock", "--allow-degraded", "pid", "--uid", "1000", "--", "make"}, host));
}

TEST(IdentityPlan, ScratchIsBoundAtAFixedPath) {
  auto plan = plan_of({"--scratch", "cache", "--", "make"});
  ASSERT_TRUE(plan) << plan.error().reason;
  const auto* m = file_at(*plan, "/scratch/cache");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, lx::MountKind::bind_rw);
  EXPECT_EQ(m->source, "/home/ann/.local/state/cage/scratch/cache");
  ASSERT_TRUE(plan->scratch);
  EXPECT_EQ(plan->scratch->base, "/home/ann");
  EXPECT_EQ(plan->scratch->below, (std::vector<std::string>{".local", "state", "cage", "scratch", "cache"}));
  EXPECT_TRUE(has_env(*plan, "CAGE_SCRATCH=/scratch/cache"));
  EXPECT_EQ(file_at(*plan_of({"--", "make"}), "/scratch/cache"), nullptr);
}

TEST(IdentityPlan, ScratchUnderLandlockAloneIsAGrantAtItsHostPath) {
  FakeHostView host;
  host.set_user_namespaces(false);
  auto plan = plan_of({"--mechanism", "landlock", "--allow-degraded", "pid", "--scratch", "cache", "--", "make"}, host);
  ASSERT_TRUE(plan) << plan.error().reason;
  const std::string path = "/home/ann/.local/state/cage/scratch/cache";
  EXPECT_TRUE(std::any_of(plan->landlock.rules.begin(), plan->landlock.rules.end(), [&](const lx::LandlockRule& r) {
    return r.path == path && r.access == lx::Access::write;
  }));
  EXPECT_TRUE(has_env(*plan, "CAGE_SCRATCH=" + path));
}

}  // namespace
}  // namespace cage::testing
