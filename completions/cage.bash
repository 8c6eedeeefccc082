# bash completion for cage(1). Installed as /usr/share/bash-completion/completions/cage; works with
# or without the bash-completion package (it only uses bash's own compgen/compopt).
# Every option of `cage --help` is listed here; tests/packaging/docs.sh checks that they agree.

_cage_profiles() {
  local d f
  printf '%s\n' npm pip cargo go git-https build shell
  for d in "${XDG_CONFIG_HOME:-$HOME/.config}/cage/profiles" /etc/cage/profiles /usr/share/cage/profiles; do
    for f in "$d"/*; do
      [ -f "$f" ] || continue
      f=${f##*/}
      printf '%s\n' "${f%.toml}"
    done
  done
}

_cage() {
  local cur prev i
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=""
  [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}
  COMPREPLY=()

  # The command starts after "--", or at the first word that is not an option or an option's value
  # (cage's prefix-command mode). From there on the words are the command's own.
  local start=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      --) start=$((i + 1)); break ;;
      --ro|--rw|--tmpfs|--hide|--chdir|--env|--setenv|--unsetenv|--secret|--net|--seccomp|--timeout|--rlimit|\
      --hostname|--target|--profile|--net-mode|--memory|--tmpfs-size|--pids|--cpu|--max-output|--max-stdout|\
      --max-stderr|--mechanism|--allow-degraded|--result|--learn|--audit|--label|--run-id|--scratch|--scratch-remove|--uid|--exec|--limits)
        i=$((i + 1)) ;;
      -*) ;;
      *) start=$i; break ;;
    esac
  done
  if [ "$start" -gt 0 ]; then
    if [ "$start" -eq "$COMP_CWORD" ]; then
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -c -- "$cur")
    elif declare -F _command_offset >/dev/null; then
      _command_offset "$start"
    else
      compopt -o default 2>/dev/null
    fi
    return 0
  fi

  case "$prev" in
    --ro|--rw|--tmpfs|--hide|--exec)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0 ;;
    --chdir)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      return 0 ;;
    --profile)
      if [[ "$cur" == */* ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -W "$(_cage_profiles)" -- "$cur")
      fi
      return 0 ;;
    --seccomp)
      mapfile -t COMPREPLY < <(compgen -W "default relaxed none" -- "$cur")
      return 0 ;;
    --target)
      mapfile -t COMPREPLY < <(compgen -W "linux macos windows" -- "$cur")
      return 0 ;;
    --env|--unsetenv)
      mapfile -t COMPREPLY < <(compgen -e -- "$cur")
      return 0 ;;
    --setenv)
      compopt -o nospace 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -e -S = -- "$cur")
      return 0 ;;
    --rlimit)
      compopt -o nospace 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -W "as= core= cpu= data= fsize= memlock= msgqueue= nice= nofile= nproc= rss= rtprio= rttime= sigpending= stack=" -- "$cur")
      return 0 ;;
    --net-mode)
      mapfile -t COMPREPLY < <(compgen -W "proxy transparent both" -- "$cur")
      return 0 ;;
    --mechanism)
      mapfile -t COMPREPLY < <(compgen -W "auto namespaces landlock" -- "$cur")
      return 0 ;;
    --allow-degraded)
      mapfile -t COMPREPLY < <(compgen -W "pid hide tmpfs hostname nested-ro metadata exec-written pid,metadata pid,exec-written pid,hide pid,tmpfs pid,hide,tmpfs" -- "$cur")
      return 0 ;;
    --result|--learn|--audit|--script)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0 ;;
    --uid)
      mapfile -t COMPREPLY < <(compgen -W "nobody" -- "$cur")
      return 0 ;;
    --limits)
      mapfile -t COMPREPLY < <(compgen -W "default" -- "$cur")
      return 0 ;;
    --secret|--net|--timeout|--hostname|--memory|--tmpfs-size|--pids|--cpu|--max-output|--max-stdout|--max-stderr|--label|--run-id|--scratch|\
    --scratch-remove)
      return 0 ;;  # free-form values: nothing sensible to offer
  esac

  if [[ "$cur" == -* ]]; then
    local opts="--ro --rw --tmpfs --hide --no-system --no-cwd --chdir --scratch --scratch-list --scratch-remove
      --env --setenv --unsetenv --secret
      --net --net-mode --share-net
      --seccomp --timeout --rlimit --memory --tmpfs-size --pids --cpu --max-output --max-stdout --max-stderr --limits --strict-limits --exec
      --mechanism --allow-degraded --hostname --uid --label --run-id --result --audit --audit-required --explain --learn --profile
      --print-profile --script
      --dry-run -v --verbose --target --check --self-test --install-windows-network --uninstall-windows-network --json --json-errors -q --quiet -V --version -h --help --"
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
    return 0
  fi
  # A word that is not an option starts the command (cage's prefix-command mode).
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen -c -- "$cur")
}

complete -F _cage cage
