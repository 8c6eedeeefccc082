#!/usr/bin/env bash
# Attack: read a secret from the caller's environment: `env`, /proc/self/environ, /proc/1/environ (cage's
# init, which was forked from the supervisor with the caller's environment), /proc/*/environ of every
# sandbox process, and /proc/*/cmdline.
# Policy: the caller exports CAGE_ESCAPE_SECRET; no --env. Expected: the secret appears nowhere inside.
# Twin: --env CAGE_ESCAPE_PASSED passes that variable through and it is seen.
. "$(dirname "$0")/lib.bash"
require_sandbox
export CAGE_ESCAPE_SECRET=s3cr3t-$$-value
export CAGE_ESCAPE_PASSED=passed-$$-value
cage_run --env CAGE_ESCAPE_PASSED -- sh -c 'env; for f in /proc/[0-9]*/environ /proc/self/environ /proc/[0-9]*/cmdline; do
  echo "== $f"; tr "\0" "\n" <"$f" 2>&1; done; sleep 0.2 & cat /proc/$!/environ 2>&1; wait'
expect_rc 0 "scan of env and /proc/*/environ ran"
grep -q "CAGE_ESCAPE_PASSED=passed-$$-value" <<<"$out" && pass "twin: --env passes a named variable" ||
  fail "twin: --env CAGE_ESCAPE_PASSED not seen inside"
if grep -q "s3cr3t-$$" <<<"$out$err"; then
  fail "the caller's secret is readable inside: $(grep "s3cr3t-$$" <<<"$out$err" | head -3)"
else
  pass "secret absent from env and every /proc/*/environ"
fi
# cage's init: its environ must not be readable at all (non-dumpable), or be wiped.
cage_run -- sh -c 'tr "\0" "\n" </proc/1/environ'
grep -q "s3cr3t-$$" <<<"$out" && fail "/proc/1/environ shows the secret" || pass "/proc/1/environ: no secret (exit $rc)"
finish
