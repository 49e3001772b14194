# bash completion for pelctl.
# Generated from the typer app by `make docs` (python -m pelctl.cli.reference --write); do not edit.
# Static: nothing runs Python on TAB. Completes subcommands, options and the
# choices of options that have them (stream and group names are not completed).
# Install: source it from ~/.bashrc, or copy it to
# ~/.local/share/bash-completion/completions/pelctl

_pelctl_subcommands() {
    case "$1" in
        "") REPLY="streams inspect pending histogram ghosts version tui claim ack requeue apply snapshot analyze reclaim config demo dlq consumers audit" ;;
        "config") REPLY="path show contexts" ;;
        "demo") REPLY="up down status env" ;;
        "dlq") REPLY="move list show stats replay purge" ;;
        "consumers") REPLY="prune" ;;
        "audit") REPLY="tail" ;;
        *) return 1 ;;
    esac
}

_pelctl_options() {
    case "$1" in
        "") REPLY="--version --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only --dry-run -y --yes -h --help" ;;
        "streams") REPLY="--match -m --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "inspect") REPLY="--group -g --oldest --dead-after --lock-key --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "pending") REPLY="--group -g --consumer -c --idle --min-deliveries --below-deliveries --limit -n --all -A --with-payload --max-server-ms --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "histogram") REPLY="--group -g --by --buckets --top --max-server-ms --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "ghosts") REPLY="--group -g --consumer -c --full --count --limit -n --max-server-ms --fix --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only --dry-run -y --yes -h --help" ;;
        "version") REPLY="--server --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "tui") REPLY="--refresh --top --dead-after --lock-key --theme --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "claim") REPLY="--to --group -g --consumer --from -c --idle --min-deliveries --below-deliveries --limit -n --all -A --lock-key --create-consumer --plan-out --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only --dry-run -y --yes -h --help" ;;
        "ack") REPLY="--group -g --consumer --from -c --idle --min-deliveries --below-deliveries --limit -n --all -A --lock-key --plan-out --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only --dry-run -y --yes -h --help" ;;
        "requeue") REPLY="--group -g --consumer --from -c --idle --min-deliveries --below-deliveries --limit -n --all -A --lock-key --max-retries --dlq --reason --field-prefix --no-lineage --plan-out --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only --dry-run -y --yes -h --help" ;;
        "apply") REPLY="--url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only --dry-run -y --yes -h --help" ;;
        "snapshot") REPLY="--out --url --match -m --with-payload --dlq-prefix --max-server-ms --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "analyze") REPLY="--from-redis --url --match -m --master --remote --conf --html --stuck-idle --dead-after --poison-deliveries --since --top --accuracy --split-rows --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "reclaim") REPLY="--group -g --idle --strategy --to --create-consumer --max-deliveries --dlq --reason --lock-key --field-prefix --no-lineage --interval --jitter --batch --once --dry-run --max-backoff --metrics-port --metrics-addr --on-audit-failure --log-format --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "config"|"demo"|"dlq"|"consumers"|"audit") REPLY="-h --help" ;;
        "config path"|"config show"|"config contexts"|"demo down"|"demo status"|"demo env") REPLY="--url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "demo up") REPLY="--print-url --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "dlq move") REPLY="--group -g --consumer --from -c --idle --min-deliveries --below-deliveries --limit -n --all -A --dlq --reason --lock-key --field-prefix --plan-out --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only --dry-run -y --yes -h --help" ;;
        "dlq list") REPLY="--source -s --reason -r --since --until --limit -n --all -A --newest --match -m --field-prefix --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "dlq show") REPLY="--field-prefix --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "dlq stats") REPLY="--source -s --reason -r --since --until --match -m --field-prefix --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        "dlq replay") REPLY="--id --source -s --reason -r --since --until --limit -n --to --rate --strip-envelope --keep-envelope --keep-retries --all -A --match -m --field-prefix --no-lineage --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only --dry-run -y --yes -h --help" ;;
        "dlq purge") REPLY="--id --older-than --source -s --reason -r --since --until --limit -n --all -A --match -m --field-prefix --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only --dry-run -y --yes -h --help" ;;
        "consumers prune") REPLY="--inactive --group -g --reassign-to --create-consumer --assume-dead --plan-out --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only --dry-run -y --yes -h --help" ;;
        "audit tail") REPLY="--lines -n --follow -f --url --context --askpass --tls-ca --tls-cert --tls-key --tls-insecure --cluster --no-cluster -o --output --no-color -v --verbose --read-only -h --help" ;;
        *) return 1 ;;
    esac
}

# Options that take a value (the next word is that value).
_pelctl_valued() {
    local REPLY
    _pelctl_valued_list "$1" || return 1
    [[ " $REPLY " == *" $2 "* ]]
}

_pelctl_valued_list() {
    case "$1" in
        ""|"version"|"apply"|"config path"|"config show"|"config contexts"|"demo up"|"demo down"|"demo status"|"demo env") REPLY="--url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "streams") REPLY="--match -m --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "inspect") REPLY="--group -g --oldest --dead-after --lock-key --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "pending") REPLY="--group -g --consumer -c --idle --min-deliveries --below-deliveries --limit -n --max-server-ms --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "histogram") REPLY="--group -g --by --buckets --top --max-server-ms --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "ghosts") REPLY="--group -g --consumer -c --limit -n --max-server-ms --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "tui") REPLY="--refresh --top --dead-after --lock-key --theme --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "claim") REPLY="--to --group -g --consumer --from -c --idle --min-deliveries --below-deliveries --limit -n --lock-key --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "ack") REPLY="--group -g --consumer --from -c --idle --min-deliveries --below-deliveries --limit -n --lock-key --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "requeue") REPLY="--group -g --consumer --from -c --idle --min-deliveries --below-deliveries --limit -n --lock-key --max-retries --dlq --reason --field-prefix --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "snapshot") REPLY="--out --url --match -m --dlq-prefix --max-server-ms --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "analyze") REPLY="--url --match -m --master --remote --conf --html --stuck-idle --dead-after --poison-deliveries --since --top --accuracy --split-rows --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "reclaim") REPLY="--group -g --idle --strategy --to --max-deliveries --dlq --reason --lock-key --field-prefix --interval --jitter --batch --max-backoff --metrics-port --metrics-addr --on-audit-failure --log-format --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "dlq move") REPLY="--group -g --consumer --from -c --idle --min-deliveries --below-deliveries --limit -n --dlq --reason --lock-key --field-prefix --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "dlq list") REPLY="--source -s --reason -r --since --until --limit -n --match -m --field-prefix --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "dlq show") REPLY="--field-prefix --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "dlq stats") REPLY="--source -s --reason -r --since --until --match -m --field-prefix --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "dlq replay") REPLY="--id --source -s --reason -r --since --until --limit -n --to --rate --match -m --field-prefix --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "dlq purge") REPLY="--id --older-than --source -s --reason -r --since --until --limit -n --match -m --field-prefix --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "consumers prune") REPLY="--inactive --group -g --reassign-to --plan-out --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        "audit tail") REPLY="--lines -n --url --context --tls-ca --tls-cert --tls-key -o --output" ;;
        *) return 1 ;;
    esac
}

_pelctl_choices() {
    case "$1|$2" in
        *"|-o"|*"|--output") REPLY="table json ndjson csv tsv markdown plain" ;;
        *"|--by") REPLY="idle deliveries consumer age" ;;
        *"|--strategy") REPLY="requeue claim autoclaim xreadgroup-claim auto" ;;
        *"|--on-audit-failure") REPLY="stop continue" ;;
        *"|--log-format") REPLY="json text" ;;
        *) return 1 ;;
    esac
}

_pelctl_path_option() {
    case "$1|$2" in
        *"|--plan-out") return 0 ;;
        *) return 1 ;;
    esac
}

# Positional arguments: t text, p path; * marks a variadic one.
_pelctl_args() {
    case "$1" in
        "inspect"|"pending"|"histogram"|"ghosts"|"tui"|"dlq show"|"consumers prune") REPLY="tt" ;;
        "claim"|"ack"|"requeue"|"dlq move") REPLY="ttt*" ;;
        "apply"|"analyze") REPLY="p" ;;
        "reclaim") REPLY="t*" ;;
        "dlq list"|"dlq stats"|"dlq replay"|"dlq purge") REPLY="t" ;;
        *) return 1 ;;
    esac
}

# Bash splits words at COMP_WORDBREAKS (":" in URLs, "=" in --opt=value); join them back
# using COMP_LINE. Sets _pelctl_w (words) and _pelctl_c (index of the cursor's word).
_pelctl_join_words() {
    local line="${COMP_LINE-}" pos=0 k w rest trimmed gap
    _pelctl_w=() _pelctl_c=0
    if [[ -z $line ]]; then
        _pelctl_w=("${COMP_WORDS[@]}") _pelctl_c=$COMP_CWORD
        return
    fi
    for (( k = 0; k < ${#COMP_WORDS[@]}; k++ )); do
        w="${COMP_WORDS[k]}"
        rest="${line:pos}"
        trimmed="${rest#"${rest%%[![:space:]]*}"}"
        gap=$(( ${#rest} - ${#trimmed} ))
        pos=$(( pos + gap + ${#w} ))
        if (( k > 0 && gap == 0 )); then
            _pelctl_w[${#_pelctl_w[@]}-1]+="$w"
        else
            _pelctl_w+=("$w")
        fi
        (( k == COMP_CWORD )) && _pelctl_c=$(( ${#_pelctl_w[@]} - 1 ))
    done
}

_pelctl() {
    local -a _pelctl_w
    local _pelctl_c
    _pelctl_join_words
    local cur="${_pelctl_w[_pelctl_c]}" node="" w REPLY want="" opt="" prefix=""
    local i=1 npos=0 endopts=0
    COMPREPLY=()
    # Walk the words before the cursor: descend into subcommands, skip option values.
    while (( i < _pelctl_c )); do
        w="${_pelctl_w[i]}"
        if [[ -n $want ]]; then
            want=""
        elif (( ! endopts )) && [[ $w == -- ]]; then
            endopts=1
        elif (( ! endopts )) && [[ $w == -* ]]; then
            [[ $w == *=* ]] || { _pelctl_valued "$node" "$w" && want="$w"; }
        elif (( npos == 0 )) && _pelctl_subcommands "$node" &&
                [[ " $REPLY " == *" $w "* ]]; then
            node="${node:+$node }$w"
        else
            npos=$(( npos + 1 ))
        fi
        i=$(( i + 1 ))
    done
    if [[ -n $want ]]; then
        opt="$want"
    elif (( ! endopts )) && [[ $cur == -*=* ]]; then
        opt="${cur%%=*}"
        cur="${cur#*=}"
        # Readline replaces only the text after the last word break: keep "--opt=" when
        # bash did not split the word there.
        [[ ${COMP_WORDS[COMP_CWORD]} == -*=* ]] && prefix="$opt="
    fi
    if [[ -n $opt ]]; then
        if _pelctl_choices "$node" "$opt"; then
            COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
        elif _pelctl_path_option "$node" "$opt"; then
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
        [[ -n $prefix ]] && COMPREPLY=("${COMPREPLY[@]/#/$prefix}")
        return 0
    fi
    if (( ! endopts )) && [[ $cur == -* ]]; then
        _pelctl_options "$node"
        COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
        return 0
    fi
    if _pelctl_subcommands "$node"; then
        (( npos == 0 )) && COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
        return 0
    fi
    local spec="" kinds="" kind=""
    _pelctl_args "$node" && spec="$REPLY"
    kinds="${spec//\*/}"
    if (( npos < ${#kinds} )); then
        kind="${kinds:npos:1}"
    elif [[ $spec == *"*" ]]; then
        kind="${kinds: -1}"
    fi
    if [[ $kind == p ]]; then
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
    elif [[ -z $kind && -z $cur ]] && (( ! endopts )); then
        # every argument is given: offer the options
        _pelctl_options "$node"
        COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
    fi
    return 0
}

complete -F _pelctl pelctl
