# fish completion for runner. Load it with: runner completion fish | source
# or save it as ~/.config/fish/completions/runner.fish.
# The runner itself answers: the line goes to it in COMP_LINE.
function __runner_complete
    set -l cands (env COMP_LINE=(commandline -cp) runner 2>/dev/null)
    if test (count $cands) -gt 0
        printf '%s\n' $cands
    else
        __fish_complete_path (commandline -ct)
    end
end
complete -c runner -f -a '(__runner_complete)'
