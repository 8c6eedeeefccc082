#!/usr/bin/env bash
# Real jobs in a --rw project directory, with namespaces and with the Landlock-only mechanism: a C
# program built with make and cc and then run (the linker's chmod +x must work), git init, commit and
# clone, a Python venv with a package installed by pip from a local wheel directory (venv and pip
# chmod their scripts), and npm installing a local package offline (it sets modes and timestamps).
# Each job's result is checked on the host as well.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
for tool in cc make git; do command -v "$tool" >/dev/null || { echo "skip: no $tool" >&2; exit 77; }; done
"$py" -c 'import venv, ensurepip' 2>/dev/null || { echo "skip: $py has no venv/ensurepip" >&2; exit 77; }

# The project: a two-file C program, a wheel made by hand (no build backend needed), an npm package.
src="$work/src"
mkdir -p "$src/npm/bin"
printf '#include <stdio.h>\nint add(int, int);\nint main(void) { printf("sum=%%d\\n", add(2, 3)); return 0; }\n' >"$src/main.c"
printf 'int add(int a, int b) { return a + b; }\n' >"$src/add.c"
printf 'app: main.o add.o\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) -O2 -c $< -o $@\n' >"$src/Makefile"
"$py" - "$src/wheels" <<'EOF'
import os, sys, zipfile
os.makedirs(sys.argv[1])
files = {
    "hello_cage/__init__.py": "def main():\n    print('hello from a wheel')\n",
    "hello_cage-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: hello-cage\nVersion: 1.0\n",
    "hello_cage-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: cage-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    "hello_cage-1.0.dist-info/entry_points.txt": "[console_scripts]\nhello-cage = hello_cage:main\n",
}
files["hello_cage-1.0.dist-info/RECORD"] = "".join(f"{n},,\n" for n in files) + "hello_cage-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(os.path.join(sys.argv[1], "hello_cage-1.0-py3-none-any.whl"), "w") as z:
    for name, text in files.items():
        z.writestr(name, text)
EOF
have_npm=0
if command -v npm >/dev/null; then
  printf '{"name":"cage-hello","version":"1.0.0","bin":{"cage-hello":"bin/hello.js"}}\n' >"$src/npm/package.json"
  printf '#!/usr/bin/env node\nconsole.log("hello from npm")\n' >"$src/npm/bin/hello.js"
  (cd "$src/npm" && npm pack --silent >/dev/null 2>&1) && have_npm=1
fi
[ "$have_npm" = 1 ] || echo "note: npm absent or npm pack failed: the npm job is not run"

job='set -e
cd "$1"
make -s CC=cc && ./app
git init -q repo && cd repo && git config user.email t@example.invalid && git config user.name t
echo hi >f && git add f && git commit -qm init && cd .. && git clone -q repo clone && cat clone/f
'"$py"' -m venv venv && ./venv/bin/pip install -q --no-index --find-links "$2/wheels" hello-cage && ./venv/bin/hello-cage
if [ "$3" = 1 ]; then mkdir js && cd js && echo "{}" >package.json &&
  npm install --offline --no-audit --no-fund --silent "$2/npm/cage-hello-1.0.0.tgz" >/dev/null && ./node_modules/.bin/cage-hello; fi'
# Under CAGE_LANDLOCK_ONLY=1 (a host without user namespaces, e.g. a container) only the Landlock-only job runs.
mechanisms=(namespaces landlock)
landlock_only && mechanisms=(landlock)
if ! landlock_only && ! landlock_mechanism; then
  echo "note: the Landlock-only mechanism does not start on this kernel: only the namespaces job runs"
  mechanisms=(namespaces)
fi
for m in "${mechanisms[@]}"; do
  args=(--mechanism "$m")
  [ "$m" = landlock ] && args+=(--allow-degraded pid)
  proj="$work/proj-$m"
  mkdir "$proj" && cp "$src"/*.c "$src/Makefile" "$proj/"
  cage_run "${args[@]}" --rw "$proj" --ro "$src" -- bash -c "$job" job "$proj" "$src" "$have_npm"
  expect_rc 0 "$m: make, git, venv + pip$([ "$have_npm" = 1 ] && echo ", npm")"
  want="sum=5 hi hello from a wheel$([ "$have_npm" = 1 ] && echo " hello from npm")"
  [ "$(echo $out)" = "$want" ] || fail "$m: output '$(echo $out)', want '$want'; stderr: $err"
  [ -x "$proj/app" ] && [ "$("$proj/app")" = sum=5 ] && pass "$m: the program built inside runs on the host" ||
    fail "$m: the built program is missing or not executable on the host"
  [ "$(git -C "$proj/clone" log --format=%s 2>/dev/null)" = init ] && pass "$m: the clone has the commit" ||
    fail "$m: the clone lacks the commit"
  [ -x "$proj/venv/bin/hello-cage" ] && pass "$m: pip's console script is executable" ||
    fail "$m: pip's console script is missing or not executable"
done
finish
