# fish completion for pelctl:
#   pelctl completion fish > ~/.config/fish/completions/pelctl.fish
function _pelctl_completion
    set -l response (env _PELCTL_COMPLETE=complete_fish COMP_WORDS=(commandline -cp) \
                         COMP_CWORD=(commandline -t) pelctl 2>/dev/null)
    for completion in $response
        set -l metadata (string split -m 1 "," -- $completion)
        if test "$metadata[1]" = dir
            __fish_complete_directories $metadata[2]
        else if test "$metadata[1]" = file
            __fish_complete_path $metadata[2]
        else if test "$metadata[1]" = plain
            echo $metadata[2]
        end
    end
end

complete --no-files --command pelctl --arguments "(_pelctl_completion)"
