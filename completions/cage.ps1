# PowerShell completion for cage(1). Load it from your profile:  . /path/to/cage.ps1
# (the Scoop and winget packages ship it next to cage.exe). Every option of `cage --help` is listed
# here; tests/packaging/docs.sh checks that they agree. Not run in CI: no PowerShell on Debian.

$script:CageOptions = [ordered]@{
    '--ro'          = 'Grant PATH read-only (and executable) at the same path inside'
    '--rw'          = 'Grant PATH read-write at the same path inside'
    '--tmpfs'       = 'Mount an empty private tmpfs at PATH (PATH:size=SIZE)'
    '--hide'        = 'Mask PATH (a file or directory beneath a granted one)'
    '--no-system'   = 'Start from an empty root: no default system view'
    '--no-cwd'      = 'Do not grant the current directory read-only implicitly'
    '--chdir'       = 'Start the command in DIR'
    '--env'         = "Pass the caller's variable NAME through (globs allowed)"
    '--setenv'      = 'Set NAME to VALUE for the command'
    '--unsetenv'    = "Remove NAME (globs allowed) from the command's environment"
    '--secret'      = "Set NAME from @FILE, fd:N or env:VAR, read once at start (never on the command line)"
    '--net'         = "Allow TCP to HOST:PORT through cage's proxy"
    '--net-mode'    = 'How --net destinations are reached: proxy, transparent, or both'
    '--share-net'   = 'Escape hatch: use the host network unchanged'
    '--seccomp'     = 'Syscall filter: default, relaxed, or none'
    '--timeout'     = 'Wall-clock limit (30s, 5m, 1h)'
    '--rlimit'      = 'Set a resource limit NAME=VALUE'
    '--memory'      = 'Memory limit for the whole sandbox (512M, 2G)'
    '--tmpfs-size'  = 'Size of each private tmpfs (default 1/8 of RAM)'
    '--pids'        = 'Limit the sandbox to N processes and threads'
    '--cpu'         = 'CPU share in cores (0.5, 1.5)'
    '--max-output'  = 'Pass at most SIZE bytes of stdout and of stderr each; the rest is dropped and counted'
    '--max-stdout'  = 'The cap for stdout alone'
    '--max-stderr'  = 'The cap for stderr alone'
    '--strict-limits' = 'Refuse to run when a limit cannot be enforced by a cgroup'
    '--exec'        = 'Let the command execute only PATH: a file, or the files beneath a directory'
    '--mechanism'   = 'auto, namespaces, or landlock'
    '--allow-degraded' = 'Accept these losses where only Landlock is available: pid, hide, tmpfs, hostname, nested-ro, metadata, exec-written'
    '--hostname'    = 'Host name inside the sandbox'
    '--uid'         = 'Run as nobody, UID or UID:GID inside the user namespace'
    '--limits'      = 'Ceilings for unattended runs: memory, pids, timeout, output, tmpfs'
    '--scratch'     = 'Mount the persistent scratch directory NAME at /scratch/NAME'
    '--scratch-list' = 'List your scratch directories'
    '--scratch-remove' = 'Delete the scratch directory NAME'
    '--label'       = 'Tag the run with KEY=VALUE'
    '--run-id'      = 'Use ID as the run id'
    '--result'      = "Write the run's result as one JSON object to FILE or fd:N"
    '--audit'       = 'Append audit events as JSON lines to FILE or fd:N'
    '--audit-required' = 'If the audit log cannot be written, do not start'
    '--explain'     = 'List what the policy refused or hid, and the flag that would allow it'
    '--learn'       = 'Run a trusted command in a learning view and write the profile it used (and the limits it reached) to FILE'
    '--profile'     = 'Load a TOML profile: a FILE or a NAME'
    '--print-profile' = 'Print the given flags and profiles as one TOML profile and exit'
    '--script'      = "Run FILE as a script: [OPTIONS] [-- INTERPRETER] FILE [ARGS]"
    '--dry-run'     = 'Print a summary of the sandbox plan and exit'
    '-v'            = 'With --dry-run: print the whole plan'
    '--verbose'     = 'With --dry-run: print the whole plan'
    '--target'      = 'With --dry-run: plan for linux, macos or windows'
    '--check'       = 'Probe this host and report each mechanism'
    '--self-test'   = 'Run confined probes and report each'
    '--install-windows-network' = 'Elevated, once: WFP filters and the --net slot containers on the loopback-exemption list'
    '--uninstall-windows-network' = 'Elevated: remove what --install-windows-network added'
    '--json'        = 'Machine-readable output for --dry-run and --check'
    '--json-errors' = 'Print errors as one JSON object on stderr'
    '-q'            = 'No notes of cage''s own on stderr'
    '--quiet'       = 'No notes of cage''s own on stderr'
    '-V'            = 'Print the version and exit'
    '--version'     = 'Print the version and exit'
    '-h'            = 'Print this help and exit'
    '--help'        = 'Print this help and exit'
}

$script:CageValues = @{
    '--seccomp' = @('default', 'relaxed', 'none')
    '--target'  = @('linux', 'macos', 'windows')
    '--rlimit'  = @('as=', 'core=', 'cpu=', 'data=', 'fsize=', 'memlock=', 'msgqueue=', 'nice=', 'nofile=',
                    'nproc=', 'rss=', 'rtprio=', 'rttime=', 'sigpending=', 'stack=')
    '--profile' = @('npm', 'pip', 'cargo', 'go', 'git-https', 'build', 'shell')
    '--mechanism' = @('auto', 'namespaces', 'landlock')
    '--net-mode' = @('proxy', 'transparent', 'both')
    '--allow-degraded' = @('pid', 'hide', 'tmpfs', 'hostname', 'nested-ro', 'metadata', 'exec-written', 'pid,metadata', 'pid,exec-written', 'pid,hide', 'pid,tmpfs', 'pid,hide,tmpfs')
    '--uid'         = @('nobody')
    '--limits'      = @('default')
}
$script:CagePathOptions = @('--ro', '--rw', '--tmpfs', '--hide', '--chdir', '--result', '--learn', '--audit', '--script', '--exec')
$script:CageValueOptions = @('--ro', '--rw', '--tmpfs', '--hide', '--chdir', '--env', '--setenv', '--unsetenv', '--secret',
                             '--net', '--seccomp', '--timeout', '--rlimit', '--hostname', '--target', '--profile',
                             '--net-mode', '--memory', '--tmpfs-size', '--pids', '--cpu', '--max-output', '--max-stdout', '--max-stderr', '--mechanism', '--allow-degraded', '--result', '--learn',
                             '--audit', '--script', '--label', '--run-id', '--scratch', '--scratch-remove', '--uid', '--exec', '--limits')

function script:CageProfileNames {
    $names = [System.Collections.Generic.List[string]]::new()
    $script:CageValues['--profile'] | ForEach-Object { $names.Add($_) }
    $dirs = @()
    if ($env:APPDATA) { $dirs += Join-Path $env:APPDATA 'cage\profiles' }
    if ($HOME) { $dirs += Join-Path $HOME '.config/cage/profiles' }
    foreach ($d in $dirs) {
        if (Test-Path $d) {
            Get-ChildItem -File $d | ForEach-Object { $names.Add(($_.Name -replace '\.toml$', '')) }
        }
    }
    $names
}

Register-ArgumentCompleter -Native -CommandName cage, cage.exe -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $words = @($commandAst.CommandElements | ForEach-Object { $_.Extent.Text })
    # Words typed before the one being completed (the command name is $words[0]).
    $before = @($words | Select-Object -Skip 1)
    if ($wordToComplete -ne '' -and $before.Count -gt 0) { $before = @($before | Select-Object -SkipLast 1) }
    # After "--", or after the first non-option word, the words are the command's own: leave them
    # to PowerShell's default (file) completion.
    $skip = $false
    foreach ($w in $before) {
        if ($skip) { $skip = $false; continue }
        if ($w -eq '--') { return }
        if ($script:CageValueOptions -contains $w) { $skip = $true; continue }
        if (-not $w.StartsWith('-')) { return }
    }
    $prev = if ($before.Count -gt 0) { $before[-1] } else { '' }
    if ($script:CagePathOptions -contains $prev) { return }  # default completion: paths
    if ($prev -eq '--profile') {
        return script:CageProfileNames | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {
            [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
        }
    }
    if ($script:CageValues.ContainsKey($prev)) {
        return $script:CageValues[$prev] | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {
            [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
        }
    }
    if ($script:CageValueOptions -contains $prev) { return @() }
    $script:CageOptions.Keys | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {
        [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterName', $script:CageOptions[$_])
    }
}
