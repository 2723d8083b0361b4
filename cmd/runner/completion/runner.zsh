#compdef runner
# zsh completion for runner. Load it with: source <(runner completion zsh)
# after compinit, or save it as _runner in a directory of $fpath.
# The runner itself answers: the line goes to it in COMP_LINE.
_runner() {
	local line=${(j: :)words[1,CURRENT]}
	local -a cands
	cands=(${(f)"$(COMP_LINE=$line COMP_POINT=${#line} command runner 2>/dev/null)"})
	if (( ${#cands} )); then
		compadd -Q -- $cands
	else
		_files
	fi
}
if [[ $funcstack[1] == _runner ]]; then
	_runner "$@"
else
	compdef _runner runner
fi
