# fish completion for ccxctl(1); installed as
# $(PREFIX)/share/fish/vendor_completions.d/ccxctl.fish. The commands come
# from ccxctl --help, so that new ones complete too.

function __ccxctl_commands
    ccxctl --help 2>/dev/null | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 }
        on { line = $0; sub(/^  [^ ]+( [^ ]+)*  +/, "", line); print $1 "\t" line }'
end

# The socket option on the line, for asking the same daemon.
function __ccxctl_socket
    set -l words (commandline -opc)
    for i in (seq (count $words))
        switch $words[$i]
            case -s --socket
                set -l next (math $i + 1)
                test $next -le (count $words); and echo --socket=$words[$next]
            case '--socket=*'
                echo $words[$i]
        end
    end
end

function __ccxctl_ccxs
    ccxctl (__ccxctl_socket) topology 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { print $1 }'
end

function __ccxctl_placed
    ccxctl (__ccxctl_socket) status 2>/dev/null | awk '$3 == "pinned" || $3 == "dry-run" { print $1 "\t" $2 }'
end

function __ccxctl_learned
    ccxctl (__ccxctl_socket) --json=short learned 2>/dev/null | string match -rag '"programs":"([^"]*)"'
end

# Whether the command line's command is one of argv, and it has n arguments.
function __ccxctl_at
    set -l n $argv[1]
    set -l words (commandline -opc)
    set -l command
    set -l args 0
    set -l skip 0
    for w in $words[2..-1]
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $w
            case -s --socket -t --topology -c --ccx
                set skip 1
            case '-*'
            case '*'
                if test -z "$command"
                    set command $w
                else
                    set args (math $args + 1)
                end
        end
    end
    contains -- "$command" $argv[2..-1]; and test $args -eq $n
end

complete -c ccxctl -f
complete -c ccxctl -n __fish_use_subcommand -a '(__ccxctl_commands)'
complete -c ccxctl -s s -l socket -r -F -d "ccxd's socket"
complete -c ccxctl -s j -l json -d "print the daemon's JSON (=pretty or =short)"
complete -c ccxctl -s t -l topology -x -a 'system xml: synthetic:' -d 'a topology, read here'
complete -c ccxctl -s w -l watch -d 'with status: again every SECS'
complete -c ccxctl -s h -l help -d 'print the help'
complete -c ccxctl -s V -l version -d "print ccxctl's version"
complete -c ccxctl -n '__ccxctl_at 0 help' -a '(__ccxctl_commands)'
complete -c ccxctl -n '__ccxctl_at 0 pin explain' -a '(__fish_complete_pids)'
complete -c ccxctl -n '__ccxctl_at 1 pin' -a '(__ccxctl_ccxs)'
complete -c ccxctl -n '__ccxctl_at 0 unpin' -a '(__ccxctl_placed)'
complete -c ccxctl -n '__ccxctl_at 0 forget' -a '(__ccxctl_learned)'
complete -c ccxctl -n '__fish_seen_subcommand_from run' -s c -l ccx -x -a '(__ccxctl_ccxs)' -d 'the CCX'
complete -c ccxctl -n '__ccxctl_at 0 run' -a '(__fish_complete_command)'
