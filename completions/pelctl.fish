# fish completion for pelctl.
# Generated from the typer app by `make docs` (python -m pelctl.cli.reference --write); do not edit.
# Static: nothing runs Python on TAB. Completes subcommands, options and the
# choices of options that have them (stream and group names are not completed).
# Install: copy it to ~/.config/fish/completions/pelctl.fish

# Options that take a value, per command (their next token is not a subcommand).
function __pelctl_valued --argument-names node opt
    switch "$node"
        case '' 'version' 'apply' 'config path' 'config show' 'config contexts' 'demo up' 'demo down' 'demo status' 'demo env'
            contains -- $opt --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'streams'
            contains -- $opt --match -m --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'inspect'
            contains -- $opt --group -g --oldest --dead-after --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'pending'
            contains -- $opt --consumer -c --idle --min-deliveries --limit -n --max-server-ms --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'histogram'
            contains -- $opt --by --buckets --top --max-server-ms --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'ghosts'
            contains -- $opt --consumer -c --limit -n --max-server-ms --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'tui'
            contains -- $opt --refresh --top --dead-after --theme --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'claim'
            contains -- $opt --to --consumer --from -c --idle --min-deliveries --limit -n --lock-key --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'ack'
            contains -- $opt --consumer --from -c --idle --min-deliveries --limit -n --lock-key --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'requeue'
            contains -- $opt --consumer --from -c --idle --min-deliveries --limit -n --lock-key --max-retries --dlq --reason --field-prefix --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'snapshot'
            contains -- $opt --out --url --match -m --dlq-prefix --max-server-ms --context --tls-ca --tls-cert --tls-key -o --output
        case 'analyze'
            contains -- $opt --url --match -m --master --remote --conf --html --stuck-idle --dead-after --poison-deliveries --since --top --accuracy --split-rows --context --tls-ca --tls-cert --tls-key -o --output
        case 'reclaim'
            contains -- $opt --group -g --idle --strategy --to --max-deliveries --dlq --reason --lock-key --field-prefix --interval --jitter --batch --max-backoff --metrics-port --metrics-addr --on-audit-failure --log-format --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'dlq move'
            contains -- $opt --consumer --from -c --idle --min-deliveries --limit -n --dlq --reason --lock-key --field-prefix --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'dlq list'
            contains -- $opt --source -s --reason -r --since --until --limit -n --match -m --field-prefix --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'dlq show'
            contains -- $opt --field-prefix --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'dlq stats'
            contains -- $opt --source -s --reason -r --since --until --match -m --field-prefix --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'dlq replay'
            contains -- $opt --id --source -s --reason -r --since --until --limit -n --to --rate --match -m --field-prefix --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'dlq purge'
            contains -- $opt --id --older-than --source -s --reason -r --since --until --limit -n --match -m --field-prefix --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'consumers prune'
            contains -- $opt --inactive --reassign-to --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output
        case 'audit tail'
            contains -- $opt --lines -n --url --context --tls-ca --tls-cert --tls-key -o --output
        case '*'
            return 1
    end
end

function __pelctl_subcommands --argument-names node
    switch "$node"
        case ''
            printf '%s\n' streams inspect pending histogram ghosts version tui claim ack requeue apply snapshot analyze reclaim config demo dlq consumers audit
        case 'config'
            printf '%s\n' path show contexts
        case 'demo'
            printf '%s\n' up down status env
        case 'dlq'
            printf '%s\n' move list show stats replay purge
        case 'consumers'
            printf '%s\n' prune
        case 'audit'
            printf '%s\n' tail
    end
end

# The command the cursor is in ("" for pelctl itself), cached per command line.
function __pelctl_node
    set -l line (commandline -pc)
    if test "$line" = "$__pelctl_cache_line"
        echo $__pelctl_cache_node
        return
    end
    set -l tokens (commandline -xpc 2>/dev/null; or commandline -opc)
    set -l node ""
    set -l want 0
    set -l npos 0
    set -l endopts 0
    for w in $tokens[2..-1]
        if test $want = 1
            set want 0
        else if test $endopts = 0; and test "$w" = --
            set endopts 1
        else if test $endopts = 0; and string match -q -- '-*' $w
            if not string match -q -- '*=*' $w; and __pelctl_valued "$node" $w
                set want 1
            end
        else if test $npos = 0; and contains -- $w (__pelctl_subcommands "$node")
            set node (string trim -- "$node $w")
        else
            set npos (math $npos + 1)
        end
    end
    set -g __pelctl_cache_line "$line"
    set -g __pelctl_cache_node "$node"
    echo "$node"
end

function __pelctl_is --argument-names node
    set -l current (__pelctl_node)
    test "$current" = "$node"
end

complete -c pelctl -f

# pelctl
complete -c pelctl -n '__pelctl_is \'\'' -a streams -d 'Every stream with its length, groups, pending, lag and oldest pending age'
complete -c pelctl -n '__pelctl_is \'\'' -a inspect -d 'One stream in depth: groups, consumers, oldest pending entries and advice'
complete -c pelctl -n '__pelctl_is \'\'' -a pending -d 'List pending entries in id order: id, consumer, idle, deliveries (and fields)'
complete -c pelctl -n '__pelctl_is \'\'' -a histogram -d 'Distribution of a group\'s pending entries, with exact counts; bars on a terminal'
complete -c pelctl -n '__pelctl_is \'\'' -a ghosts -d 'PEL entries whose stream entry is gone, with their owner, idle and deliveries'
complete -c pelctl -n '__pelctl_is \'\'' -a version -d 'Show pelctl\'s version and, with --server, the server\'s version and features'
complete -c pelctl -n '__pelctl_is \'\'' -a tui -d 'Live dashboard: streams, consumers, stuck entries, idle histogram, PEL depth, D…'
complete -c pelctl -n '__pelctl_is \'\'' -a claim -d 'Give pending entries to another consumer (XCLAIM with min-idle, JUSTID)'
complete -c pelctl -n '__pelctl_is \'\'' -a ack -d 'Acknowledge pending entries (XACK): they leave the PEL and are not delivered ag…'
complete -c pelctl -n '__pelctl_is \'\'' -a requeue -d 'Put pending entries back on the stream for any healthy consumer to pick up'
complete -c pelctl -n '__pelctl_is \'\'' -a apply -d 'Run a plan saved with --plan-out, re-verifying every entry first'
complete -c pelctl -n '__pelctl_is \'\'' -a snapshot -d 'Write PELs, consumers, groups and DLQ entries as Parquet (no Spark needed)'
complete -c pelctl -n '__pelctl_is \'\'' -a analyze -d 'Fleet analysis on Spark, from snapshots or live Redis'
complete -c pelctl -n '__pelctl_is \'\'' -a reclaim -d 'Heal consumer groups: requeue idle entries across the whole PEL, pass after pass'
complete -c pelctl -n '__pelctl_is \'\'' -a config -d 'Config file, contexts and resolved settings'
complete -c pelctl -n '__pelctl_is \'\'' -a demo -d 'A throwaway local redis-server seeded with a realistic incident'
complete -c pelctl -n '__pelctl_is \'\'' -a dlq -d 'Dead-letter streams: quarantine poison entries, inspect and replay them'
complete -c pelctl -n '__pelctl_is \'\'' -a consumers -d 'Consumers of a group: prune the dead ones'
complete -c pelctl -n '__pelctl_is \'\'' -a audit -d 'The audit log of mutations (JSON lines, mode 0600)'
complete -c pelctl -n '__pelctl_is \'\'' -l version -d 'Print the version and exit'
complete -c pelctl -n '__pelctl_is \'\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'\'' -l dry-run -d 'Print the exact plan and change nothing'
complete -c pelctl -n '__pelctl_is \'\'' -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c pelctl -n '__pelctl_is \'\'' -s h -l help -d 'Show the help and exit'

# pelctl streams
complete -c pelctl -n '__pelctl_is \'streams\'' -l match -s m -x -d 'Glob on stream names (SCAN MATCH)'
complete -c pelctl -n '__pelctl_is \'streams\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'streams\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'streams\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'streams\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'streams\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'streams\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'streams\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'streams\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'streams\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'streams\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'streams\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'streams\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'streams\'' -s h -l help -d 'Show the help and exit'

# pelctl inspect
complete -c pelctl -n '__pelctl_is \'inspect\'' -l group -s g -x -d 'Only this group (default: all, or the context\'s group)'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l oldest -x -d 'Oldest entries per group'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l dead-after -x -d 'A consumer holding entries and unseen this long is a dead suspect'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'inspect\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'inspect\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'inspect\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'inspect\'' -s h -l help -d 'Show the help and exit'

# pelctl pending
complete -c pelctl -n '__pelctl_is \'pending\'' -l consumer -s c -x -d 'Only entries held by this consumer'
complete -c pelctl -n '__pelctl_is \'pending\'' -l idle -x -d 'Only entries idle at least this long (30s, 5m, 1h)'
complete -c pelctl -n '__pelctl_is \'pending\'' -l min-deliveries -x -d 'Only entries delivered at least N times'
complete -c pelctl -n '__pelctl_is \'pending\'' -l limit -s n -x -d 'At most N entries (default 100)'
complete -c pelctl -n '__pelctl_is \'pending\'' -l all -s A -d 'Every matching entry, streamed'
complete -c pelctl -n '__pelctl_is \'pending\'' -l with-payload -d 'Fetch each entry\'s fields'
complete -c pelctl -n '__pelctl_is \'pending\'' -l max-server-ms -x -d 'Bound on each server call\'s time (page size adapts)'
complete -c pelctl -n '__pelctl_is \'pending\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'pending\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'pending\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'pending\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'pending\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'pending\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'pending\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'pending\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'pending\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'pending\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'pending\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'pending\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'pending\'' -s h -l help -d 'Show the help and exit'

# pelctl histogram
complete -c pelctl -n '__pelctl_is \'histogram\'' -l by -x -a 'idle deliveries consumer age' -d 'What to count: idle time, delivery count, owner, or age (now minus the id\'s tim…'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l buckets -x -d 'Bucket edges, comma-separated: durations for idle/age (1s,10s,1m,1h), whole num…'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l top -x -d '--by consumer: the N largest owners, the rest in one bucket'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l max-server-ms -x -d 'Bound on each server call\'s time (page size adapts)'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'histogram\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'histogram\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'histogram\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'histogram\'' -s h -l help -d 'Show the help and exit'

# pelctl ghosts
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l consumer -s c -x -d 'Only entries held by this consumer'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l full -d 'Check every entry against the stream, not only ids up to the stream\'s max-delet…'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l count -d 'Only the counts (trimmed, deleted, total)'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l limit -s n -x -d 'At most N ghosts'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l max-server-ms -x -d 'Bound on each server call\'s time (page size adapts)'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l fix -d 'Clear the ghosts from the PEL (a repair: confirmation, --dry-run, --yes, audit…'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -l dry-run -d 'Print the exact plan and change nothing'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c pelctl -n '__pelctl_is \'ghosts\'' -s h -l help -d 'Show the help and exit'

# pelctl version
complete -c pelctl -n '__pelctl_is \'version\'' -l server -d 'Also connect and show the server\'s features'
complete -c pelctl -n '__pelctl_is \'version\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'version\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'version\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'version\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'version\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'version\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'version\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'version\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'version\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'version\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'version\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'version\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'version\'' -s h -l help -d 'Show the help and exit'

# pelctl tui
complete -c pelctl -n '__pelctl_is \'tui\'' -l refresh -x -d 'Poll interval (1500ms 2s 1m; 0 turns polling off)'
complete -c pelctl -n '__pelctl_is \'tui\'' -l top -x -d 'Stuck entries shown: the N most idle matching the filter'
complete -c pelctl -n '__pelctl_is \'tui\'' -l dead-after -x -d 'A consumer holding entries and unseen this long is a dead suspect'
complete -c pelctl -n '__pelctl_is \'tui\'' -l theme -x -d 'dark, light or a Textual theme name (default: PELCTL_THEME, else the terminal\'s…'
complete -c pelctl -n '__pelctl_is \'tui\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'tui\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'tui\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'tui\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'tui\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'tui\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'tui\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'tui\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'tui\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'tui\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'tui\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'tui\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'tui\'' -s h -l help -d 'Show the help and exit'

# pelctl claim
complete -c pelctl -n '__pelctl_is \'claim\'' -l to -x -d 'Consumer that receives the entries (a live one)'
complete -c pelctl -n '__pelctl_is \'claim\'' -l consumer -l from -s c -x -d 'Only entries held by this consumer'
complete -c pelctl -n '__pelctl_is \'claim\'' -l idle -x -d 'Only entries idle at least this long (30s, 5m, 1h); re-checked when applied'
complete -c pelctl -n '__pelctl_is \'claim\'' -l min-deliveries -x -d 'Only entries delivered at least N times'
complete -c pelctl -n '__pelctl_is \'claim\'' -l limit -s n -x -d 'At most N entries (in id order)'
complete -c pelctl -n '__pelctl_is \'claim\'' -l all -s A -d 'Every pending entry (needed when no id or filter is given)'
complete -c pelctl -n '__pelctl_is \'claim\'' -l lock-key -x -d 'Skip entries whose lock key exists (a slow but alive consumer), e.g'
complete -c pelctl -n '__pelctl_is \'claim\'' -l plan-out -r -F -d 'Save the plan as JSON to FILE and change nothing (run it later with `pelctl app…'
complete -c pelctl -n '__pelctl_is \'claim\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'claim\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'claim\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'claim\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'claim\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'claim\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'claim\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'claim\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'claim\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'claim\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'claim\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'claim\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'claim\'' -l dry-run -d 'Print the exact plan and change nothing'
complete -c pelctl -n '__pelctl_is \'claim\'' -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c pelctl -n '__pelctl_is \'claim\'' -s h -l help -d 'Show the help and exit'

# pelctl ack
complete -c pelctl -n '__pelctl_is \'ack\'' -l consumer -l from -s c -x -d 'Only entries held by this consumer'
complete -c pelctl -n '__pelctl_is \'ack\'' -l idle -x -d 'Only entries idle at least this long (30s, 5m, 1h); re-checked when applied'
complete -c pelctl -n '__pelctl_is \'ack\'' -l min-deliveries -x -d 'Only entries delivered at least N times'
complete -c pelctl -n '__pelctl_is \'ack\'' -l limit -s n -x -d 'At most N entries (in id order)'
complete -c pelctl -n '__pelctl_is \'ack\'' -l all -s A -d 'Every pending entry (needed when no id or filter is given)'
complete -c pelctl -n '__pelctl_is \'ack\'' -l lock-key -x -d 'Skip entries whose lock key exists (a slow but alive consumer), e.g'
complete -c pelctl -n '__pelctl_is \'ack\'' -l plan-out -r -F -d 'Save the plan as JSON to FILE and change nothing (run it later with `pelctl app…'
complete -c pelctl -n '__pelctl_is \'ack\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'ack\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'ack\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'ack\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'ack\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'ack\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'ack\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'ack\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'ack\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'ack\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'ack\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'ack\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'ack\'' -l dry-run -d 'Print the exact plan and change nothing'
complete -c pelctl -n '__pelctl_is \'ack\'' -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c pelctl -n '__pelctl_is \'ack\'' -s h -l help -d 'Show the help and exit'

# pelctl requeue
complete -c pelctl -n '__pelctl_is \'requeue\'' -l consumer -l from -s c -x -d 'Only entries held by this consumer'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l idle -x -d 'Only entries idle at least this long (30s, 5m, 1h); re-checked when applied'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l min-deliveries -x -d 'Only entries delivered at least N times'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l limit -s n -x -d 'At most N entries (in id order)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l all -s A -d 'Every pending entry (needed when no id or filter is given)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l lock-key -x -d 'Skip entries whose lock key exists (a slow but alive consumer), e.g'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l max-retries -x -d 'Entries already requeued N times go to the dead-letter stream instead'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l dlq -x -d 'Dead-letter stream for --max-retries (default: STREAM:dlq)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l reason -x -d '_dlq_reason of entries past --max-retries'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l field-prefix -x -d 'Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l no-lineage -d 'Copies carry exactly the entry\'s own fields, no _retry_count, _prior_deliveries…'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l plan-out -r -F -d 'Save the plan as JSON to FILE and change nothing (run it later with `pelctl app…'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -l dry-run -d 'Print the exact plan and change nothing'
complete -c pelctl -n '__pelctl_is \'requeue\'' -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c pelctl -n '__pelctl_is \'requeue\'' -s h -l help -d 'Show the help and exit'

# pelctl apply
complete -c pelctl -n '__pelctl_is \'apply\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'apply\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'apply\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'apply\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'apply\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'apply\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'apply\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'apply\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'apply\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'apply\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'apply\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'apply\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'apply\'' -l dry-run -d 'Print the exact plan and change nothing'
complete -c pelctl -n '__pelctl_is \'apply\'' -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c pelctl -n '__pelctl_is \'apply\'' -s h -l help -d 'Show the help and exit'
complete -c pelctl -n '__pelctl_is \'apply\'' -F

# pelctl snapshot
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l out -x -d 'Directory to write into (created; snapshots accumulate there)'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l url -x -d 'Redis URL; repeat for several servers (default: PELCTL_URL, REDIS_URL, the cont…'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l match -s m -x -d 'Glob on stream names (SCAN MATCH)'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l with-payload -d 'Also store each pending entry\'s fields (payload column)'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l dlq-prefix -x -d 'Field prefix of dead-letter envelopes'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l max-server-ms -x -d 'Bound on each server call of the PEL scan'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'snapshot\'' -s h -l help -d 'Show the help and exit'

# pelctl analyze
complete -c pelctl -n '__pelctl_is \'analyze\'' -l from-redis -d 'Read live Redis through the `pel` data source instead'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l url -x -d 'With --from-redis: Redis URL; repeat for several servers'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l match -s m -x -d 'With --from-redis: glob on stream names'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l master -x -d 'Spark master: local[*] (default), spark://host:7077, yarn, k8s://https://'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l remote -x -d 'Spark Connect server, sc://host:15002 (or local[N] for an in-process Connect se…'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l conf -x -d 'Extra Spark setting KEY=VALUE (repeatable)'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l html -x -d 'Also write a self-contained HTML report with charts to FILE'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l stuck-idle -x -d 'An entry idle this long is stuck'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l dead-after -x -d 'A consumer holding entries and unseen this long is dead'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l poison-deliveries -x -d 'Delivered this many times: a poison candidate'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l since -x -d 'Trends: only snapshots this recent (e.g'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l top -x -d 'Rows in the top-N lists'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l accuracy -x -d 'percentile_approx accuracy: rank error at most N/ACCURACY'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l split-rows -x -d 'With --from-redis: PEL entries per Spark partition'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'analyze\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'analyze\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'analyze\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'analyze\'' -s h -l help -d 'Show the help and exit'
complete -c pelctl -n '__pelctl_is \'analyze\'' -F

# pelctl reclaim
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l group -s g -x -d 'Consumer group (default: the context\'s default group)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l idle -x -d 'Recover entries idle at least this long (30s, 5m)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l strategy -x -a 'requeue claim autoclaim xreadgroup-claim auto' -d 'requeue: re-add for any healthy consumer; claim: give to --to; autoclaim: XAUTO…'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l to -x -d 'Live consumer that receives the entries (claim strategy; optional with autoclai…'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l max-deliveries -x -d 'Hand a message out at most N times: an idle entry already delivered N times goe…'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l dlq -x -d 'Dead-letter stream (default: STREAM:dlq)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l reason -x -d '_dlq_reason of dead-lettered entries (default: max deliveries exceeded (N))'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l lock-key -x -d 'Skip entries whose lock key exists (slow but alive consumer), e.g'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l field-prefix -x -d 'Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l no-lineage -d 'Requeued copies carry exactly the entry\'s own fields, no _retry_count, _prior_d…'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l interval -x -d 'Pause between passes'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l jitter -x -d 'Random +/- fraction of --interval, so runners do not pass in lockstep'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l batch -x -d 'Entries settled per batch (a stop waits for the batch in flight)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l once -d 'One pass, print a summary, exit'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l dry-run -d 'Report what the passes would do, change nothing (same as --read-only)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l max-backoff -x -d 'Longest wait between retries while Redis is unreachable'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l metrics-port -x -d 'Serve Prometheus metrics on this port (/metrics)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l metrics-addr -x -d 'Address the metrics endpoint binds; 0.0.0.0 exposes it beyond this host (for a…'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l on-audit-failure -x -a 'stop continue' -d 'When a pass changed entries but its audit line cannot be written: stop (no furt…'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l log-format -x -a 'json text' -d 'Log lines on stderr: json (one object a line) or text (default: text on a termi…'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'reclaim\'' -s h -l help -d 'Show the help and exit'

# pelctl config
complete -c pelctl -n '__pelctl_is \'config\'' -a path -d 'Print the config file\'s path (it may not exist yet)'
complete -c pelctl -n '__pelctl_is \'config\'' -a show -d 'Show the resolved settings (secrets redacted), where the URL came from, and fil…'
complete -c pelctl -n '__pelctl_is \'config\'' -a contexts -d 'List the contexts in the config file'
complete -c pelctl -n '__pelctl_is \'config\'' -s h -l help -d 'Show the help and exit'

# pelctl config path
complete -c pelctl -n '__pelctl_is \'config path\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'config path\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'config path\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'config path\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'config path\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'config path\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'config path\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'config path\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'config path\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'config path\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'config path\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'config path\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'config path\'' -s h -l help -d 'Show the help and exit'

# pelctl config show
complete -c pelctl -n '__pelctl_is \'config show\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'config show\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'config show\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'config show\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'config show\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'config show\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'config show\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'config show\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'config show\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'config show\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'config show\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'config show\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'config show\'' -s h -l help -d 'Show the help and exit'

# pelctl config contexts
complete -c pelctl -n '__pelctl_is \'config contexts\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'config contexts\'' -s h -l help -d 'Show the help and exit'

# pelctl demo
complete -c pelctl -n '__pelctl_is \'demo\'' -a up -d 'Start the demo server (if not running) and seed the incident; print its URL'
complete -c pelctl -n '__pelctl_is \'demo\'' -a down -d 'Stop the demo server and delete its data'
complete -c pelctl -n '__pelctl_is \'demo\'' -a status -d 'Show whether the demo is running (exit 1 if not)'
complete -c pelctl -n '__pelctl_is \'demo\'' -a env -d 'Print `export PELCTL_URL=...` for the running demo (eval "$(pelctl demo env)")'
complete -c pelctl -n '__pelctl_is \'demo\'' -s h -l help -d 'Show the help and exit'

# pelctl demo up
complete -c pelctl -n '__pelctl_is \'demo up\'' -l print-url -d 'Print only the URL (for scripts)'
complete -c pelctl -n '__pelctl_is \'demo up\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'demo up\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'demo up\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'demo up\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'demo up\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'demo up\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'demo up\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'demo up\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'demo up\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'demo up\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'demo up\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'demo up\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'demo up\'' -s h -l help -d 'Show the help and exit'

# pelctl demo down
complete -c pelctl -n '__pelctl_is \'demo down\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'demo down\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'demo down\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'demo down\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'demo down\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'demo down\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'demo down\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'demo down\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'demo down\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'demo down\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'demo down\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'demo down\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'demo down\'' -s h -l help -d 'Show the help and exit'

# pelctl demo status
complete -c pelctl -n '__pelctl_is \'demo status\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'demo status\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'demo status\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'demo status\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'demo status\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'demo status\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'demo status\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'demo status\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'demo status\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'demo status\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'demo status\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'demo status\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'demo status\'' -s h -l help -d 'Show the help and exit'

# pelctl demo env
complete -c pelctl -n '__pelctl_is \'demo env\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'demo env\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'demo env\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'demo env\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'demo env\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'demo env\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'demo env\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'demo env\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'demo env\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'demo env\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'demo env\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'demo env\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'demo env\'' -s h -l help -d 'Show the help and exit'

# pelctl dlq
complete -c pelctl -n '__pelctl_is \'dlq\'' -a move -d 'Quarantine pending entries in a dead-letter stream, with an envelope'
complete -c pelctl -n '__pelctl_is \'dlq\'' -a list -d 'List dead-letter entries: source, original id, owner, deliveries, reason, age,…'
complete -c pelctl -n '__pelctl_is \'dlq\'' -a show -d 'Everything about one dead-letter entry: envelope, decoded payload, every field'
complete -c pelctl -n '__pelctl_is \'dlq\'' -a stats -d 'Counts of dead-letter entries by source, reason, hour and DLQ (one streamed pas…'
complete -c pelctl -n '__pelctl_is \'dlq\'' -a replay -d 'Put dead-letter entries back on their source stream (or --to), each exactly once'
complete -c pelctl -n '__pelctl_is \'dlq\'' -a purge -d 'Delete dead-letter entries for good (XDEL), selected by id, filters or --all'
complete -c pelctl -n '__pelctl_is \'dlq\'' -s h -l help -d 'Show the help and exit'

# pelctl dlq move
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l consumer -l from -s c -x -d 'Only entries held by this consumer'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l idle -x -d 'Only entries idle at least this long (30s, 5m, 1h); re-checked when applied'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l min-deliveries -x -d 'Only entries delivered at least N times'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l limit -s n -x -d 'At most N entries (in id order)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l all -s A -d 'Every pending entry (needed when no id or filter is given)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l dlq -x -d 'Dead-letter stream (default: STREAM:dlq)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l reason -x -d 'Why (saved as _dlq_reason)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l lock-key -x -d 'Skip entries whose lock key exists (a slow but alive consumer), e.g'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l field-prefix -x -d 'Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l plan-out -r -F -d 'Save the plan as JSON to FILE and change nothing (run it later with `pelctl app…'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -l dry-run -d 'Print the exact plan and change nothing'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c pelctl -n '__pelctl_is \'dlq move\'' -s h -l help -d 'Show the help and exit'

# pelctl dlq list
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l source -s s -x -d 'Only entries from this source stream (_dlq_source; a glob with * ?'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l reason -s r -x -d 'Only entries whose _dlq_reason contains TEXT (case-insensitive)'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l since -x -d 'Only entries dead-lettered since then: a duration ago (2h), an ISO time (2025-0…'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l until -x -d 'Only entries dead-lettered until then (same forms as --since)'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l limit -s n -x -d 'At most N entries'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l all -s A -d 'Every matching entry, streamed'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l newest -d 'Newest first (XREVRANGE) instead of id order'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l match -s m -x -d 'Without DLQ: only dead-letter streams matching this glob'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l field-prefix -x -d 'Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*)'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'dlq list\'' -s h -l help -d 'Show the help and exit'

# pelctl dlq show
complete -c pelctl -n '__pelctl_is \'dlq show\'' -l field-prefix -x -d 'Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*)'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'dlq show\'' -s h -l help -d 'Show the help and exit'

# pelctl dlq stats
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l source -s s -x -d 'Only entries from this source stream (_dlq_source; a glob with * ?'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l reason -s r -x -d 'Only entries whose _dlq_reason contains TEXT (case-insensitive)'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l since -x -d 'Only entries dead-lettered since then: a duration ago (2h), an ISO time (2025-0…'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l until -x -d 'Only entries dead-lettered until then (same forms as --since)'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l match -s m -x -d 'Without DLQ: only dead-letter streams matching this glob'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l field-prefix -x -d 'Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*)'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'dlq stats\'' -s h -l help -d 'Show the help and exit'

# pelctl dlq replay
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l id -x -d 'Only this DLQ entry id (repeatable)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l source -s s -x -d 'Only entries from this source stream (_dlq_source; a glob with * ?'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l reason -s r -x -d 'Only entries whose _dlq_reason contains TEXT (case-insensitive)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l since -x -d 'Only entries dead-lettered since then: a duration ago (2h), an ISO time (2025-0…'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l until -x -d 'Only entries dead-lettered until then (same forms as --since)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l limit -s n -x -d 'At most N entries'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l to -x -d 'Replay into this stream instead of each entry\'s _dlq_source (created if missing)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l rate -x -d 'At most this many entries per second (200/s, 1000/m, 50/h); default: as fast as…'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l strip-envelope -l keep-envelope -d 'Remove the _dlq_* envelope from the replayed copy (default), or keep it'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l keep-retries -d 'Keep _retry_count on the copy (default: removed, the count restarts)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l match -s m -x -d 'Without DLQ: only dead-letter streams matching this glob'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l field-prefix -x -d 'Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l no-lineage -d 'Copies carry exactly the entry\'s own fields, no _retry_count, _prior_deliveries…'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -l dry-run -d 'Print the exact plan and change nothing'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c pelctl -n '__pelctl_is \'dlq replay\'' -s h -l help -d 'Show the help and exit'

# pelctl dlq purge
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l id -x -d 'Only this DLQ entry id (repeatable)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l older-than -x -d 'Only entries dead-lettered more than this long ago (7d)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l source -s s -x -d 'Only entries from this source stream (_dlq_source; a glob with * ?'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l reason -s r -x -d 'Only entries whose _dlq_reason contains TEXT (case-insensitive)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l since -x -d 'Only entries dead-lettered since then: a duration ago (2h), an ISO time (2025-0…'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l until -x -d 'Only entries dead-lettered until then (same forms as --since)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l limit -s n -x -d 'At most N entries'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l all -s A -d 'Every entry (needed when no id or filter is given)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l match -s m -x -d 'Without DLQ: only dead-letter streams matching this glob'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l field-prefix -x -d 'Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -l dry-run -d 'Print the exact plan and change nothing'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c pelctl -n '__pelctl_is \'dlq purge\'' -s h -l help -d 'Show the help and exit'

# pelctl consumers
complete -c pelctl -n '__pelctl_is \'consumers\'' -a prune -d 'Delete inactive consumers, never losing their pending entries'
complete -c pelctl -n '__pelctl_is \'consumers\'' -s h -l help -d 'Show the help and exit'

# pelctl consumers prune
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l inactive -x -d 'Delete consumers that have not even tried to read for this long (XINFO CONSUMER…'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l reassign-to -x -d 'First claim the entries a consumer holds to this consumer, then delete it'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l plan-out -r -F -d 'Save the plan as JSON to FILE and change nothing (run it later with `pelctl app…'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -l dry-run -d 'Print the exact plan and change nothing'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c pelctl -n '__pelctl_is \'consumers prune\'' -s h -l help -d 'Show the help and exit'

# pelctl audit
complete -c pelctl -n '__pelctl_is \'audit\'' -a tail -d 'The last mutations: time, user, command, target and result counts'
complete -c pelctl -n '__pelctl_is \'audit\'' -s h -l help -d 'Show the help and exit'

# pelctl audit tail
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l lines -s n -x -d 'How many records'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l follow -s f -d 'Keep printing new records as they come'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l url -x -d 'Redis URL (redis://, rediss://, unix://, redis+sentinel://)'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l context -x -d 'Named context from the config file (env: PELCTL_CONTEXT)'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l askpass -d 'Prompt for the password (read from stdin without a terminal)'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l tls-ca -x -d 'CA bundle for rediss://'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l tls-cert -x -d 'Client certificate for rediss://'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l tls-key -x -d 'Client key for rediss://'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l tls-insecure -d 'Skip TLS certificate verification (prints a warning)'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l cluster -l no-cluster -d 'Force Redis Cluster mode on or off (default: detect)'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -s o -l output -x -a 'table json ndjson csv tsv markdown plain' -d 'Output format (default: table on a terminal; in pipes plain, or ndjson for comm…'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l no-color -d 'No colours (also NO_COLOR)'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -s v -l verbose -d 'More detail; tracebacks on errors'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -l read-only -d 'Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)'
complete -c pelctl -n '__pelctl_is \'audit tail\'' -s h -l help -d 'Show the help and exit'
