#compdef pelctl
# zsh completion for pelctl: pelctl completion zsh > "${fpath[1]}/_pelctl"
compdef _pelctl pelctl

_pelctl() {
    local -a completions completions_with_descriptions response
    (( ! $+commands[pelctl] )) && return 1
    response=("${(@f)$(env COMP_WORDS="${words[*]}" COMP_CWORD=$((CURRENT-1)) \
                           _PELCTL_COMPLETE=complete_zsh pelctl 2>/dev/null)}")
    local type key descr
    for type key descr in ${response}; do
        if [[ "$type" == "plain" ]]; then
            if [[ "$descr" == "_" ]]; then
                completions+=("$key")
            else
                completions_with_descriptions+=("$key":"$descr")
            fi
        elif [[ "$type" == "dir" ]]; then
            _path_files -/
        elif [[ "$type" == "file" ]]; then
            _path_files -f
        fi
    done
    if [ -n "$completions_with_descriptions" ]; then
        _describe -V unsorted completions_with_descriptions -U
    fi
    if [ -n "$completions" ]; then
        compadd -U -V unsorted -a completions
    fi
}

# Autoloaded from $fpath, this file is the first call of the completion function: it
# defines it (for every later TAB) and completes. Sourced or eval'ed it only defines it.
if [ "$funcstack[1]" = "_pelctl" ]; then
    _pelctl "$@"
fi
