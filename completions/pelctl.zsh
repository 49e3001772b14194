#compdef pelctl
# zsh completion for pelctl.
# Generated from the typer app by `make docs` (python -m pelctl.cli.reference --write); do not edit.
# Static: nothing runs Python on TAB. Completes subcommands, options and the
# choices of options that have them (stream and group names are not completed).
# Install: copy it as _pelctl into a directory of $fpath (before compinit runs),
# or source it after compinit.

_pelctl_describe_subcommands() {
    local -a entries
    case "$1" in
        "") entries=('streams:Every stream with its length, groups, pending, lag and oldest pending age' 'inspect:One stream in depth: groups, consumers, oldest pending entries and advice' 'pending:List pending entries in id order: id, consumer, idle, deliveries (and fields)' 'histogram:Distribution of a group'\''s pending entries, with exact counts; bars on a terminal' 'ghosts:PEL entries whose stream entry is gone, with their owner, idle and deliveries' 'version:Show pelctl'\''s version and, with --server, the server'\''s version and features' 'tui:Live dashboard: streams, consumers, stuck entries, idle histogram, PEL depth, D…' 'claim:Give pending entries to another consumer (XCLAIM with min-idle, JUSTID)' 'ack:Acknowledge pending entries (XACK): they leave the PEL and are not delivered ag…' 'requeue:Put pending entries back on the stream for any healthy consumer to pick up' 'apply:Run a plan saved with --plan-out, re-verifying every entry first' 'config:Config file, contexts and resolved settings' 'demo:A throwaway local redis-server seeded with a realistic incident' 'dlq:Dead-letter streams: quarantine poison entries, inspect and replay them' 'consumers:Consumers of a group: prune the dead ones' 'audit:The audit log of mutations (JSON lines, mode 0600)') ;;
        "config") entries=('path:Print the config file'\''s path (it may not exist yet)' 'show:Show the resolved settings (secrets redacted), where the URL came from, and fil…' 'contexts:List the contexts in the config file') ;;
        "demo") entries=('up:Start the demo server (if not running) and seed the incident; print its URL' 'down:Stop the demo server and delete its data' 'status:Show whether the demo is running (exit 1 if not)' 'env:Print `export PELCTL_URL=...` for the running demo (eval "$(pelctl demo env)")') ;;
        "dlq") entries=('move:Quarantine pending entries in a dead-letter stream, with an envelope') ;;
        "consumers") entries=('prune:Delete inactive consumers, never losing their pending entries') ;;
        "audit") entries=('tail:The last mutations: time, user, command, target and result counts') ;;
        *) return 1 ;;
    esac
    _describe -t commands 'pelctl command' entries
}

_pelctl_describe_options() {
    local -a entries
    case "$1" in
        "") entries=('--version:Print the version and exit' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '--dry-run:Print the exact plan and change nothing' '-y:Do not ask for confirmation (needed without a terminal)' '--yes:Do not ask for confirmation (needed without a terminal)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "streams") entries=('--match:Glob on stream names (SCAN MATCH)' '-m:Glob on stream names (SCAN MATCH)' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "inspect") entries=('--group:Only this group (default: all, or the context'\''s group)' '-g:Only this group (default: all, or the context'\''s group)' '--oldest:Oldest entries per group' '--dead-after:A consumer holding entries and unseen this long is a dead suspect' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "pending") entries=('--consumer:Only entries held by this consumer' '-c:Only entries held by this consumer' '--idle:Only entries idle at least this long (30s, 5m, 1h)' '--min-deliveries:Only entries delivered at least N times' '--limit:At most N entries (default 100)' '-n:At most N entries (default 100)' '--all:Every matching entry, streamed' '-A:Every matching entry, streamed' '--with-payload:Fetch each entry'\''s fields' '--max-server-ms:Bound on each server call'\''s time (page size adapts)' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "histogram") entries=('--by:What to count: idle time, delivery count, owner, or age (now minus the id'\''s tim…' '--buckets:Bucket edges, comma-separated: durations for idle/age (1s,10s,1m,1h), whole num…' '--top:--by consumer: the N largest owners, the rest in one bucket' '--max-server-ms:Bound on each server call'\''s time (page size adapts)' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "ghosts") entries=('--consumer:Only entries held by this consumer' '-c:Only entries held by this consumer' '--full:Check every entry against the stream, not only ids up to the stream'\''s max-delet…' '--count:Only the counts (trimmed, deleted, total)' '--limit:At most N ghosts' '-n:At most N ghosts' '--max-server-ms:Bound on each server call'\''s time (page size adapts)' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "version") entries=('--server:Also connect and show the server'\''s features' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "tui") entries=('--refresh:Poll interval (1500ms 2s 1m; 0 turns polling off)' '--top:Stuck entries shown: the N most idle matching the filter' '--dead-after:A consumer holding entries and unseen this long is a dead suspect' '--theme:dark, light or a Textual theme name (default: PELCTL_THEME, else the terminal'\''s…' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "claim") entries=('--to:Consumer that receives the entries (a live one)' '--consumer:Only entries held by this consumer' '--from:Only entries held by this consumer' '-c:Only entries held by this consumer' '--idle:Only entries idle at least this long (30s, 5m, 1h); re-checked when applied' '--min-deliveries:Only entries delivered at least N times' '--limit:At most N entries (in id order)' '-n:At most N entries (in id order)' '--all:Every pending entry (needed when no id or filter is given)' '-A:Every pending entry (needed when no id or filter is given)' '--lock-key:Skip entries whose lock key exists (a slow but alive consumer), e.g' '--plan-out:Save the plan as JSON to FILE and change nothing (run it later with `pelctl app…' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '--dry-run:Print the exact plan and change nothing' '-y:Do not ask for confirmation (needed without a terminal)' '--yes:Do not ask for confirmation (needed without a terminal)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "ack") entries=('--consumer:Only entries held by this consumer' '--from:Only entries held by this consumer' '-c:Only entries held by this consumer' '--idle:Only entries idle at least this long (30s, 5m, 1h); re-checked when applied' '--min-deliveries:Only entries delivered at least N times' '--limit:At most N entries (in id order)' '-n:At most N entries (in id order)' '--all:Every pending entry (needed when no id or filter is given)' '-A:Every pending entry (needed when no id or filter is given)' '--lock-key:Skip entries whose lock key exists (a slow but alive consumer), e.g' '--plan-out:Save the plan as JSON to FILE and change nothing (run it later with `pelctl app…' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '--dry-run:Print the exact plan and change nothing' '-y:Do not ask for confirmation (needed without a terminal)' '--yes:Do not ask for confirmation (needed without a terminal)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "requeue") entries=('--consumer:Only entries held by this consumer' '--from:Only entries held by this consumer' '-c:Only entries held by this consumer' '--idle:Only entries idle at least this long (30s, 5m, 1h); re-checked when applied' '--min-deliveries:Only entries delivered at least N times' '--limit:At most N entries (in id order)' '-n:At most N entries (in id order)' '--all:Every pending entry (needed when no id or filter is given)' '-A:Every pending entry (needed when no id or filter is given)' '--lock-key:Skip entries whose lock key exists (a slow but alive consumer), e.g' '--max-retries:Entries already requeued N times go to the dead-letter stream instead' '--dlq:Dead-letter stream for --max-retries (default: STREAM:dlq)' '--reason:_dlq_reason of entries past --max-retries' '--field-prefix:Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*)' '--plan-out:Save the plan as JSON to FILE and change nothing (run it later with `pelctl app…' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '--dry-run:Print the exact plan and change nothing' '-y:Do not ask for confirmation (needed without a terminal)' '--yes:Do not ask for confirmation (needed without a terminal)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "apply") entries=('--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '--dry-run:Print the exact plan and change nothing' '-y:Do not ask for confirmation (needed without a terminal)' '--yes:Do not ask for confirmation (needed without a terminal)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "config"|"demo"|"dlq"|"consumers"|"audit") entries=('-h:Show the help and exit' '--help:Show the help and exit') ;;
        "config path"|"config show"|"config contexts"|"demo down"|"demo status"|"demo env") entries=('--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "demo up") entries=('--print-url:Print only the URL (for scripts)' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "dlq move") entries=('--consumer:Only entries held by this consumer' '--from:Only entries held by this consumer' '-c:Only entries held by this consumer' '--idle:Only entries idle at least this long (30s, 5m, 1h); re-checked when applied' '--min-deliveries:Only entries delivered at least N times' '--limit:At most N entries (in id order)' '-n:At most N entries (in id order)' '--all:Every pending entry (needed when no id or filter is given)' '-A:Every pending entry (needed when no id or filter is given)' '--dlq:Dead-letter stream (default: STREAM:dlq)' '--reason:Why (saved as _dlq_reason)' '--lock-key:Skip entries whose lock key exists (a slow but alive consumer), e.g' '--field-prefix:Prefix of the fields pelctl adds (_retry_count, _original_id, _dlq_*)' '--plan-out:Save the plan as JSON to FILE and change nothing (run it later with `pelctl app…' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '--dry-run:Print the exact plan and change nothing' '-y:Do not ask for confirmation (needed without a terminal)' '--yes:Do not ask for confirmation (needed without a terminal)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "consumers prune") entries=('--inactive:Delete consumers that have not even tried to read for this long (XINFO CONSUMER…' '--reassign-to:First claim the entries a consumer holds to this consumer, then delete it' '--plan-out:Save the plan as JSON to FILE and change nothing (run it later with `pelctl app…' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '--dry-run:Print the exact plan and change nothing' '-y:Do not ask for confirmation (needed without a terminal)' '--yes:Do not ask for confirmation (needed without a terminal)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        "audit tail") entries=('--lines:How many records' '-n:How many records' '--follow:Keep printing new records as they come' '-f:Keep printing new records as they come' '--url:Redis URL (redis://, rediss://, unix://, redis+sentinel://)' '--context:Named context from the config file (env: PELCTL_CONTEXT)' '--askpass:Prompt for the password (read from stdin without a terminal)' '--tls-ca:CA bundle for rediss://' '--tls-cert:Client certificate for rediss://' '--tls-key:Client key for rediss://' '--tls-insecure:Skip TLS certificate verification (prints a warning)' '--cluster:Force Redis Cluster mode on or off (default: detect)' '--no-cluster:Force Redis Cluster mode on or off (default: detect)' '-o:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--output:Output format (default: table on a terminal; in pipes plain, or ndjson for comm…' '--no-color:No colours (also NO_COLOR)' '-v:More detail; tracebacks on errors' '--verbose:More detail; tracebacks on errors' '--read-only:Refuse every mutation (also PELCTL_READ_ONLY=1 or the context)' '-h:Show the help and exit' '--help:Show the help and exit') ;;
        *) return 1 ;;
    esac
    _describe -t options 'option' entries
}

_pelctl_subcommand_names() {
    case "$1" in
        "") REPLY="streams inspect pending histogram ghosts version tui claim ack requeue apply config demo dlq consumers audit" ;;
        "config") REPLY="path show contexts" ;;
        "demo") REPLY="up down status env" ;;
        "dlq") REPLY="move" ;;
        "consumers") REPLY="prune" ;;
        "audit") REPLY="tail" ;;
        *) return 1 ;;
    esac
}

_pelctl_valued() {
    case "$1" in
        ""|"version"|"apply"|"config path"|"config show"|"config contexts"|"demo up"|"demo down"|"demo status"|"demo env") [[ " --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "streams") [[ " --match -m --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "inspect") [[ " --group -g --oldest --dead-after --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "pending") [[ " --consumer -c --idle --min-deliveries --limit -n --max-server-ms --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "histogram") [[ " --by --buckets --top --max-server-ms --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "ghosts") [[ " --consumer -c --limit -n --max-server-ms --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "tui") [[ " --refresh --top --dead-after --theme --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "claim") [[ " --to --consumer --from -c --idle --min-deliveries --limit -n --lock-key --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "ack") [[ " --consumer --from -c --idle --min-deliveries --limit -n --lock-key --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "requeue") [[ " --consumer --from -c --idle --min-deliveries --limit -n --lock-key --max-retries --dlq --reason --field-prefix --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "dlq move") [[ " --consumer --from -c --idle --min-deliveries --limit -n --dlq --reason --lock-key --field-prefix --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "consumers prune") [[ " --inactive --reassign-to --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        "audit tail") [[ " --lines -n --url --context --tls-ca --tls-cert --tls-key -o --output " == *" $2 "* ]] ;;
        *) return 1 ;;
    esac
}

_pelctl_choices() {
    case "$1|$2" in
        *"|-o"|*"|--output") reply=(table json ndjson csv tsv markdown plain) ;;
        *"|--by") reply=(idle deliveries consumer age) ;;
        *) return 1 ;;
    esac
}

_pelctl_path_option() {
    case "$1|$2" in
        *"|--plan-out") return 0 ;;
        *) return 1 ;;
    esac
}

_pelctl_args() {
    case "$1" in
        "inspect") REPLY="t" ;;
        "pending"|"histogram"|"ghosts"|"tui"|"consumers prune") REPLY="tt" ;;
        "claim"|"ack"|"requeue"|"dlq move") REPLY="ttt*" ;;
        "apply") REPLY="p" ;;
        *) return 1 ;;
    esac
}

_pelctl() {
    local node="" w REPLY want="" opt="" cur="${words[CURRENT]}"
    local -i i=2 npos=0 endopts=0
    local -a reply
    while (( i < CURRENT )); do
        w="${words[i]}"
        if [[ -n $want ]]; then
            want=""
        elif (( ! endopts )) && [[ $w == -- ]]; then
            endopts=1
        elif (( ! endopts )) && [[ $w == -* ]]; then
            [[ $w == *=* ]] || { _pelctl_valued "$node" "$w" && want="$w"; }
        elif (( npos == 0 )) && _pelctl_subcommand_names "$node" &&
                [[ " $REPLY " == *" $w "* ]]; then
            node="${node:+$node }$w"
        else
            (( npos++ ))
        fi
        (( i++ ))
    done
    if [[ -n $want ]]; then
        opt="$want"
    elif (( ! endopts )) && [[ $cur == -*=* ]]; then
        opt="${cur%%=*}"
        compset -P '*='
    fi
    if [[ -n $opt ]]; then
        if _pelctl_choices "$node" "$opt"; then
            compadd -a reply
        elif _pelctl_path_option "$node" "$opt"; then
            _files
        else
            _message 'value'
        fi
        return
    fi
    if (( ! endopts )) && [[ $cur == -* ]]; then
        _pelctl_describe_options "$node"
        return
    fi
    if _pelctl_subcommand_names "$node"; then
        (( npos == 0 )) && _pelctl_describe_subcommands "$node"
        return
    fi
    local spec="" kinds="" kind=""
    _pelctl_args "$node" && spec="$REPLY"
    kinds="${spec//\*/}"
    if (( npos < ${#kinds} )); then
        kind="${kinds[npos+1]}"
    elif [[ $spec == *"*" ]]; then
        kind="${kinds[-1]}"
    fi
    if [[ $kind == p ]]; then
        _files
    elif [[ -z $kind ]] && (( ! endopts )); then
        _pelctl_describe_options "$node"
    else
        _message 'argument'
    fi
}

if [[ "${funcstack[1]}" == _pelctl ]]; then
    _pelctl "$@"
else
    compdef _pelctl pelctl
fi
