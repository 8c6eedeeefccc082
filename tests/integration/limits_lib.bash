# Helpers for the limits_*.sh tests: JSON field access and schema validation with python3 alone.
# Sourced; expects $CAGE and $CAGE_SOURCE_DIR, and defines fail, json, valid_result, valid_audit.
fail() { echo "FAIL: $*" >&2; exit 1; }
CAGE=${CAGE:?}
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
schemas=${CAGE_SOURCE_DIR:-$here/../..}/docs/schema
work=$(mktemp -d); chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
# json FILE EXPR: prints the python expression EXPR over the document `d` (first line for JSON lines).
json() { python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); v=eval(sys.argv[2]); print(json.dumps(v) if isinstance(v,(dict,list,bool)) or v is None else v)' "$1" "$2"; }
# events FILE TYPE: the audit events of TYPE, one JSON object per line.
events() { python3 -c 'import json,sys; [print(l.strip()) for l in open(sys.argv[1]) if l.strip() and json.loads(l)["type"]==sys.argv[2]]' "$1" "$2" 2>/dev/null; }
valid_result() { python3 "$here/limits_schema.py" "$schemas/result.schema.json" "$1" || fail "result does not match the schema: $(cat "$1")"; }
valid_audit() { python3 "$here/limits_schema.py" "$schemas/audit-event.schema.json" "$1" --lines || fail "audit log does not match the schema"; }
is_root() { [ "$(id -u)" -eq 0 ]; }
# True when cage can use a cgroup for CONTROLLER here (what the dry-run plan says).
cgroup_usable() { "$CAGE" --"$1" "$2" --dry-run --json -- true 2>/dev/null | python3 -c 'import json,sys; p=json.load(sys.stdin); sys.exit(0 if p["limits"]["cgroup"]["version"] and not p["limits"]["cgroup"]["not_enforced"] else 1)'; }
# cage makes "cage-<pid>" beneath the cgroup it runs in, so this test's runs leave theirs beneath this
# shell's cgroups (/proc/self/cgroup); other sessions' cgroups on the machine are not this test's, and a
# directory whose cage is alive belongs to a run in progress (the root and user variants run at once).
no_stale_cgroups() {
  local mine left="" d parent p
  mine=$(cut -d: -f3- /proc/self/cgroup | sort -u)
  while IFS= read -r d; do
    [ -d "/proc/${d##*/cage-}" ] && continue
    parent=${d%/cage-*}
    while IFS= read -r p; do
      if [ "$p" = / ]; then
        [[ $parent =~ ^/sys/fs/cgroup(/[^/]+)?$ ]] && left+="$d "
      else
        [[ $parent == *"$p" ]] && left+="$d "
      fi
    done <<<"$mine"
  done < <(find /sys/fs/cgroup -maxdepth 5 -type d -name 'cage-*' 2>/dev/null)
  [ -z "$left" ] || fail "cgroup directories left behind: $left"
}
