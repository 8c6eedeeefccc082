# Sourced (no .sh suffix: not a test) by lib.bash and the integration scripts with a Landlock-only
# half. landlock_mechanism: true unless cage refuses the Landlock-only mechanism on this kernel
# because its Landlock ABI is below 6 (cage(1), MECHANISMS; landlock_only.bash checks that refusal
# itself). Any other failure counts as "it starts", so the test's own half runs and shows it: a
# broken mechanism can never turn into a skipped half.
landlock_mechanism() {
  local err
  err=$("$CAGE" --mechanism landlock --allow-degraded pid --no-cwd -- true 2>&1 >/dev/null) && return 0
  ! grep -q "^cage: spawn_sandbox_unavailable: --mechanism landlock: without namespaces cage needs Landlock ABI" <<<"$err"
}
