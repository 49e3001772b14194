# bash completion for pelctl: eval "$(pelctl completion bash)" in ~/.bashrc
_pelctl_completion() {
    local item
    local -a response
    mapfile -t response < <(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD="$COMP_CWORD" \
                                COMP_LINE="$COMP_LINE" COMP_POINT="$COMP_POINT" \
                                COMP_WORDBREAKS="$COMP_WORDBREAKS" \
                                _PELCTL_COMPLETE=complete_bash "$1" 2>/dev/null)
    COMPREPLY=()
    for item in "${response[@]}"; do
        case ${item%%,*} in
            dir) COMPREPLY=(); compopt -o dirnames; return 0 ;;
            file) COMPREPLY=(); compopt -o default; return 0 ;;
            plain) COMPREPLY+=("${item#*,}") ;;
        esac
    done
    return 0
}

complete -o nosort -F _pelctl_completion pelctl
