// Package bashcheck judges a bash command line against a task's
// permission rules (tools/permission) before the bash tool runs it. It is
// the static half of the bash guard: it decides which programs run with
// which arguments, and explains why for `runner policy check`; the OS
// sandbox contains what an allowed program then does.
//
// # Model
//
// The line is parsed with mvdan.cc/sh/v3/syntax (bash dialect) and walked.
// What the walk understands:
//
//   - Lists (; & && || newline), pipelines (| |&), negation, subshells,
//     brace groups, if/while/until/for/select/case, time, coproc.
//   - Simple commands: quote removal ('…' "…" \x, $'…' for paths), the
//     normalised command "prog arg …" a rule pattern is matched against,
//     assignment prefixes (NAME=v prog), and deny rules tried on every
//     spelling (basename, without git's global options, each tail of a
//     wrapper's words).
//   - Expansions: brace expansions are expanded first (every alternative
//     is a word, at most 256); $v ${v…} $(…) `…` <(…) >(…) $((…)) and globs
//     are holes (parts only known at run time) in the word; the commands in
//     substitutions are judged on their own. A hole is covered only by a
//     '*' in an allow rule, and may be anything for a deny rule. A $NAME
//     the line sets from static words (for f in *.go) stands for each of
//     them; any other argument only known at run time ($F, $(…), xargs'
//     input, find's {}) is denied unless dynamic_args allows the command.
//     Globs are matched in the work tree, as bash would.
//   - Arithmetic contexts ((( )), $(( )), $[ ], let, subscripts,
//     ${v:o:l}, [[ -eq ]], declare -i values): only numbers and variables
//     set to static text, since bash evaluates a value such as a[$(cmd)].
//   - Option grammars of the programs the default rules cover: go (flag
//     package: -exec, -toolexec, -vettool, -o, -overlay, go env -w), git
//     (clustered and abbreviated options, REV:PATH blobs, pathspecs), GNU
//     grep, sed (its script: e, w, r) and awk (their pattern or program is
//     not a path), gofmt -w, sort -o/--compress-program, tee, rg --pre,
//     awk's system(), pipes, @ and -f, tar's options that run a program
//     (runners.go).
//   - Wrappers that run their operands (env, timeout, nice, nohup, xargs,
//     find -exec, sudo, watch, su -c, ssh-agent, valgrind, git rebase
//     --exec, …) and shells given -c SCRIPT, whose script is parsed and
//     judged recursively. Programs that run commands named in options or
//     input (vim -c, ed, gdb -ex, tmux, zip -TT, ssh ProxyCommand, man
//     -P) are denied, and so is interpreter code (python -c, perl -e,
//     node -e, ruby -e, or a program on standard input) that can run a
//     command (interpreters.go).
//   - Redirections: output is an edit of its target (edit rules), input a
//     read of its file; >&N and /dev/null-like sinks write nothing. So
//     are the files that touch, mkdir, rm, cp, mv, ln, install, truncate,
//     dd of= and tar -c -f write (fileops.go).
//   - The directories each command may run in (cd, pushd, popd through
//     lists, &&, ||, subshells and loops): relative argument paths are
//     placed there, and checked against external_directory when they
//     leave the work tree and against the read protection of .git and
//     .env* inside it.
//   - Directory walks (grep -r, tar -c, cp -r…) where the sandbox does not
//     hide protected files, paths through a directory an earlier command
//     may create as a symlink, and files named inside option clusters,
//     awk program text and go.mod replacements.
//   - Variables that make bash or programs run code (BASH_ENV, PS4,
//     GIT_CONFIG_*, LD_PRELOAD, PAGER, …) however they are assigned, and
//     builtins that evaluate their operands as names or arithmetic.
//
// Anything else, or anything whose meaning depends on values only known
// at run time in a way that could run a program or reach a protected or
// outside path, is denied with a reason naming the construct: eval,
// source, trap, function definitions, a program name that is not static,
// a shell reading its script from standard input, a parse error, input
// beyond the analysis bounds. Check's doc lists the decisions in detail.
//
// Imports: tools/permission and mvdan.cc/sh.
package bashcheck
