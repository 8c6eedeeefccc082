# fish completion for cage(1). Installed as /usr/share/fish/vendor_completions.d/cage.fish.
# Every option of `cage --help` is listed here; tests/packaging/docs.sh checks that they agree.

# True once the command has started: after "--", or after the first word that is not an option or
# an option's value (cage's prefix-command mode).
function __cage_command_started
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l skip 0
    for t in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $t
            case --
                return 0
            case --ro --rw --tmpfs --hide --chdir --env --setenv --unsetenv --secret --net --seccomp --timeout \
                --rlimit --hostname --target --profile --net-mode --memory --tmpfs-size --pids --cpu --max-output --max-stdout --max-stderr --mechanism \
                --allow-degraded --result --learn --audit --label --run-id --scratch --scratch-remove --uid --exec --limits
                set skip 1
            case '-*'
            case '*'
                return 0
        end
    end
    return 1
end

# The command's own words, for completing them as a command line of their own.
function __cage_complete_command
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l skip 0
    while set -q tokens[1]
        set -l t $tokens[1]
        if test $skip -eq 1
            set skip 0
            set -e tokens[1]
            continue
        end
        switch $t
            case --
                set -e tokens[1]
                break
            case --ro --rw --tmpfs --hide --chdir --env --setenv --unsetenv --secret --net --seccomp --timeout \
                --rlimit --hostname --target --profile --net-mode --memory --tmpfs-size --pids --cpu --max-output --max-stdout --max-stderr --mechanism \
                --allow-degraded --result --learn --audit --label --run-id --scratch --scratch-remove --uid --exec --limits
                set skip 1
            case '-*'
            case '*'
                break
        end
        set -e tokens[1]
    end
    __fish_complete_subcommand --commandline $tokens (commandline -ct)
end

function __cage_profiles
    printf '%s\n' npm pip cargo go git-https build shell
    set -l config $HOME/.config
    set -q XDG_CONFIG_HOME; and set config $XDG_CONFIG_HOME
    for d in $config/cage/profiles /etc/cage/profiles /usr/share/cage/profiles
        for f in $d/*
            test -f $f; and string replace -r '\.toml$' '' -- (basename $f)
        end
    end
end

complete -c cage -f
complete -c cage -n __cage_command_started -x -a '(__cage_complete_command)'

set -l opt 'not __cage_command_started'
# Filesystem
complete -c cage -n $opt -l ro -r -F -d 'Grant PATH read-only (and executable)'
complete -c cage -n $opt -l rw -r -F -d 'Grant PATH read-write'
complete -c cage -n $opt -l tmpfs -r -F -d 'Mount an empty private tmpfs at PATH (PATH:size=SIZE)'
complete -c cage -n $opt -l hide -r -F -d 'Mask PATH beneath a granted one'
complete -c cage -n $opt -l no-system -d 'Start from an empty root'
complete -c cage -n $opt -l no-cwd -d 'Do not grant the current directory'
complete -c cage -n $opt -l chdir -x -a '(__fish_complete_directories)' -d 'Start the command in DIR'
# Environment
complete -c cage -n $opt -l env -x -a '(set -xn)' -d 'Pass the caller\'s variable NAME through'
complete -c cage -n $opt -l setenv -x -a '(set -xn | string replace -r \'$\' =)' -d 'Set NAME=VALUE'
complete -c cage -n $opt -l unsetenv -x -a '(set -xn)' -d 'Remove NAME from the environment'
complete -c cage -n $opt -l secret -x -d 'Set NAME from @FILE, fd:N or env:VAR (never on the command line)'
# Network
complete -c cage -n $opt -l net -x -d 'Allow TCP to HOST:PORT through the proxy'
complete -c cage -n $opt -l net-mode -x -a 'proxy transparent both' -d 'How --net destinations are reached'
complete -c cage -n $opt -l share-net -d 'Escape hatch: the host network unchanged'
# Process and limits
complete -c cage -n $opt -l seccomp -x -a 'default relaxed none' -d 'Syscall filter'
complete -c cage -n $opt -l timeout -x -d 'Wall-clock limit (30s, 5m, 1h)'
complete -c cage -n $opt -l rlimit -x -a 'as= core= cpu= data= fsize= memlock= msgqueue= nice= nofile= nproc= rss= rtprio= rttime= sigpending= stack=' -d 'Set a resource limit'
complete -c cage -n $opt -l memory -x -d 'Memory limit for the sandbox (512M, 2G)'
complete -c cage -n $opt -l tmpfs-size -x -d 'Size of each private tmpfs (default 1/8 of RAM)'
complete -c cage -n $opt -l pids -x -d 'Limit the sandbox to N processes'
complete -c cage -n $opt -l cpu -x -d 'CPU share in cores (0.5, 1.5)'
complete -c cage -n $opt -l max-output -x -d 'Cap stdout and stderr at SIZE bytes each'
complete -c cage -n $opt -l max-stdout -x -d 'Cap stdout alone at SIZE bytes'
complete -c cage -n $opt -l max-stderr -x -d 'Cap stderr alone at SIZE bytes'
complete -c cage -n $opt -l strict-limits -d 'Refuse to run when a limit cannot be enforced'
complete -c cage -n $opt -l exec -r -F -d 'Execute only PATH (a file, or the files beneath a directory)'
complete -c cage -n $opt -l mechanism -x -a 'auto namespaces landlock' -d 'Confinement mechanism'
complete -c cage -n $opt -l allow-degraded -x -a 'pid hide tmpfs hostname nested-ro metadata exec-written pid,metadata pid,exec-written pid,hide pid,tmpfs pid,hide,tmpfs' -d 'Accept losses under Landlock only'
complete -c cage -n $opt -l hostname -x -d 'Host name inside the sandbox'
complete -c cage -n $opt -l uid -x -a 'nobody' -d 'Run as nobody, UID or UID:GID inside'
complete -c cage -n $opt -l limits -x -a 'default' -d 'Ceilings for unattended runs (memory, pids, timeout, output, tmpfs)'
complete -c cage -n $opt -l scratch -x -d 'Mount the persistent scratch directory NAME at /scratch/NAME'
complete -c cage -n $opt -l scratch-list -d 'List your scratch directories'
complete -c cage -n $opt -l scratch-remove -x -d 'Delete the scratch directory NAME'
complete -c cage -n $opt -l label -x -d 'Tag the run with KEY=VALUE'
complete -c cage -n $opt -l run-id -x -d 'Use ID as the run id'
# Result and audit
complete -c cage -n $opt -l result -r -F -d 'Write the result as JSON to FILE or fd:N'
complete -c cage -n $opt -l audit -r -F -d 'Append audit events to FILE or fd:N'
complete -c cage -n $opt -l audit-required -d 'Do not run without the audit log'
complete -c cage -n $opt -l explain -d 'List what the policy refused or hid, and the flag that allows it'
complete -c cage -n $opt -l learn -r -F -d 'Run a trusted command in a learning view and write the profile it used (and the limits it reached) to FILE'
# Profiles
complete -c cage -n $opt -l profile -x -a '(__cage_profiles; __fish_complete_path (commandline -ct))' -d 'Load a TOML profile'
complete -c cage -n $opt -l print-profile -d 'Print flags and profiles as one TOML profile'
complete -c cage -n $opt -l script -r -F -d "Run FILE as a script: [OPTIONS] [-- INTERPRETER] FILE"
# Modes
complete -c cage -n $opt -l dry-run -d 'Print a summary of the sandbox plan and exit'
complete -c cage -n $opt -s v -l verbose -d 'With --dry-run: print the whole plan'
complete -c cage -n $opt -l target -x -a 'linux macos windows' -d 'With --dry-run: plan for OS'
complete -c cage -n $opt -l check -d 'Probe this host and report each mechanism'
complete -c cage -n $opt -l self-test -d 'Run confined probes and report each'
complete -c cage -n $opt -l install-windows-network -d 'Windows, elevated: WFP filters and --net slot containers on the loopback-exemption list'
complete -c cage -n $opt -l uninstall-windows-network -d 'Windows, elevated: remove what --install-windows-network added'
complete -c cage -n $opt -l json -d 'Machine-readable output'
complete -c cage -n $opt -l json-errors -d 'Print errors as JSON'
complete -c cage -n $opt -s q -l quiet -d 'No notes of cage\'s own on stderr'
complete -c cage -n $opt -s V -l version -d 'Print the version and exit'
complete -c cage -n $opt -s h -l help -d 'Print the help and exit'
