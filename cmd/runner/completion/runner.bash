# bash completion for runner. Load it with: source <(runner completion bash)
# The runner itself answers: bash passes the line in COMP_LINE.
_runner_complete() {
	local IFS=$'\n'
	COMPREPLY=($(COMP_LINE="$COMP_LINE" COMP_POINT="$COMP_POINT" command runner 2>/dev/null))
}
complete -o default -F _runner_complete runner
