# --learn's checks, shared by learn_*.sh: a private $d with a project directory ($d/proj, the
# working directory) and a home of the test's own ($d/home, with a credential store in it), so no
# test reads or hides the tester's real home. `has LINE`: the learned profile has exactly LINE.
. "$(dirname "${BASH_SOURCE[0]}")/net_lib.bash"
net_test_begin "$@"
# The learning view's /tmp is private (the host's holds other programs' sockets), so what the
# command reads outside its project must lie elsewhere: here, beneath the tester's own home.
rmdir "$d" && d=$(mktemp -d -p "$HOME" cage-learn.XXXXXX) || fail "no directory beneath $HOME"
chmod 755 "$d"
mkdir -p "$d/proj" "$d/home/.ssh"
echo 'Host *' > "$d/home/.ssh/config"
export HOME="$d/home"
P="$d/proj/cage.toml"
has() { grep -qxF -- "$1" "$P" || fail "the profile lacks the line '$1':"$'\n'"$(cat "$P")"; }
# The learned profile with the lines matching REGEX (grep -E) dropped, as $d/less.toml.
without() { grep -vE -- "$1" "$P" > "$d/less.toml"; }
