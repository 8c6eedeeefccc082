# Shared by tests/integration/recipe_*.sh (sourced): the README's recipe lines are the commands the
# tests run, so the README cannot drift from what works.
#   readme_line NEEDLE   prints the first README line that is a whole cage command (leading spaces
#                        dropped; the summary lines at the top, which end in a comment, are not)
#                        holding NEEDLE, or fails the test when there is none
. "$(dirname "${BASH_SOURCE[0]}")/../escape/lib.bash"
readme_line() {
  local l
  l=$(grep -F -- "$1" "$CAGE_SOURCE_DIR/README.md" | sed 's/^ *//' | grep '^cage ' | grep -v ' # ' | head -n1)
  if [ -z "$l" ]; then fail "README has no recipe line with: $1"; finish; fi
  printf '%s\n' "$l"
}
# as_cage LINE: the README line with its leading "cage" as the binary under test
as_cage() { printf '%s\n' "\"\$CAGE\"${1#cage}"; }
