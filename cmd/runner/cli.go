package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/seed43ef5acb/runner/internal/workflowcmd"
	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/event"
)

// Streams are the process's standard streams, injected so tests use buffers.
// Stdout carries data; Stderr carries progress and messages.
type Streams struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Environ is the process environment as "KEY=VALUE" entries, read in main.
type Environ []string

// Map returns the environment as a map; a later entry for a key wins.
func (e Environ) Map() map[string]string {
	m := make(map[string]string, len(e))
	for _, kv := range e {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// Get returns the value of key, or "".
func (e Environ) Get(key string) string {
	for _, kv := range e {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// CLI is the root command.
type CLI struct {
	VersionFlag kong.VersionFlag `name:"version" help:"Print the runner's version and exit."`
	LogLevel    string           `name:"log-level" help:"Diagnostic log level on stderr: debug, info, warn or error." enum:"debug,info,warn,error" default:"warn" env:"RUNNER_LOG_LEVEL"`
	LogFormat   string           `name:"log-format" help:"Diagnostic log format on stderr: text or json." enum:"text,json" default:"text" env:"RUNNER_LOG_FORMAT"`
	Color       string           `name:"color" help:"Colour on stderr: auto (a terminal, unless NO_COLOR, TERM=dumb or CLICOLOR=0; CLICOLOR_FORCE=1 forces it), always or never." enum:"auto,always,never" default:"auto" placeholder:"WHEN"`

	Exec       ExecCmd       `cmd:"" help:"Run a task spec against a work tree."`
	Batch      BatchCmd      `cmd:"" help:"Run one task over many repositories; merge shards; publish pull requests."`
	Report     ReportCmd     `cmd:"" help:"Summarise event logs as Markdown or JSON."`
	Policy     PolicyCmd     `cmd:"" help:"Explain the task spec's permission decisions."`
	GitHub     GitHubCmd     `cmd:"" name:"github" help:"GitHub Actions helpers."`
	Validate   ValidateCmd   `cmd:"" help:"Check task specs (and batch specs) and report every problem."`
	Schema     SchemaCmd     `cmd:"" help:"Print the JSON Schema of the task spec."`
	Version    VersionCmd    `cmd:"" help:"Print the runner's version."`
	Completion CompletionCmd `cmd:"" help:"Print a shell completion script: bash, zsh or fish."`
	Help       HelpCmd       `cmd:"" help:"Show the help of a command, as COMMAND --help does."`
	Man        ManCmd        `cmd:"" hidden:"" help:"Print the man page (roff) of every command."`
}

const description = `A headless runner for AI coding agents.

Exit codes: 0 success, 1 task failed, 2 bad usage or invalid spec, 3 provider or infrastructure error, 130 cancelled.`

// exitRequest is how kong's Exit (after --help) unwinds out of Parse.
type exitRequest int

// newParser builds the kong parser with the dependencies commands bind.
func newParser(ctx context.Context, cli *CLI, streams Streams, env Environ) (*kong.Kong, error) {
	return kong.New(cli,
		kong.Name("runner"),
		kong.Description(description),
		kong.Writers(streams.Stdout, streams.Stderr),
		kong.Exit(func(code int) { panic(exitRequest(code)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, WrapUpperBound: 100}),
		kong.Vars{"version": "runner " + pipeline.Version()},
		kong.BindTo(ctx, (*context.Context)(nil)),
		kong.Bind(streams, env),
	)
}

// runCLI parses args, runs the command and returns the exit code. No
// arguments at all print the help (stdout, exit 0), as `runner --help`.
func runCLI(ctx context.Context, args []string, streams Streams, environ []string) (code int) {
	if len(args) == 0 {
		args = []string{"--help"}
	}
	var cli CLI
	parser, err := newParser(ctx, &cli, streams, Environ(environ))
	if err != nil {
		fmt.Fprintf(streams.Stderr, "runner: %v\n", err)
		return pipeline.ExitInfra
	}
	defer func() {
		if r := recover(); r != nil {
			req, ok := r.(exitRequest)
			if !ok {
				panic(r)
			}
			code = int(req)
		}
	}()
	if Environ(environ).Get("COMP_LINE") != "" {
		complete(parser)
	}
	stderr := redactingWriter{w: streams.Stderr, r: event.NewRedactor(environ)}
	kctx, err := parser.Parse(args)
	if readerLeft(err) {
		return 0
	}
	if err != nil {
		msg := err.Error()
		if m := missingArgument(err); m != "" {
			msg = m
		}
		if m := missingValue(err); m != "" {
			msg = m
		}
		fmt.Fprintf(stderr, "runner: %v: %s\n", pipeline.ErrUsage, msg)
		fmt.Fprintf(stderr, "run %q for usage\n", usageCommand(err))
		return pipeline.ExitUsage
	}
	kctx.Bind(newLogger(cli.LogLevel, cli.LogFormat, stderr), event.ColorMode(cli.Color))
	err = kctx.Run()
	if readerLeft(err) {
		return 0
	}
	if Environ(environ).Get("GITHUB_ACTIONS") == "true" {
		// The error may quote a model, a tool or a server: under
		// Actions it must not run workflow commands.
		var b strings.Builder
		report(&b, err)
		_, _ = io.WriteString(stderr, workflowcmd.Fence(b.String(), workflowcmd.StopToken()))
	} else {
		report(stderr, err)
	}
	return pipeline.ExitCode(err)
}

// readerLeft reports an error that is only the reader of our output
// going away (`runner exec --help | head -3`): the output was for it, so
// the command ends quietly with 0, as ripgrep does, not as a usage error.
// A run is not ended by it: its console and stdout log are views.
func readerLeft(err error) bool {
	return errors.Is(err, syscall.EPIPE)
}

// redactingWriter writes through the redactor of the runner's
// environment (secret-looking variables' values, token shapes): the last
// error line names paths, inputs and URLs the user typed, which may hold
// a secret. Each Write is one whole message (report's Fprintln calls).
type redactingWriter struct {
	w io.Writer
	r *event.Redactor
}

func (rw redactingWriter) Write(p []byte) (int, error) {
	if _, err := rw.w.Write(rw.r.RedactBytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// usageCommand names the help command for the command a parse error is
// about ("runner batch run --help"), without the command's arguments.
func usageCommand(err error) string {
	var perr *kong.ParseError
	if !errors.As(err, &perr) || perr.Context == nil || perr.Context.Command() == "" {
		return "runner --help"
	}
	words := []string{"runner"}
	for _, f := range strings.Fields(perr.Context.Command()) {
		if strings.HasPrefix(f, "<") {
			break
		}
		words = append(words, f)
	}
	return strings.Join(append(words, "--help"), " ")
}

// missingArgument rewrites kong's error for a command run without its
// argument: "missing <SHELL>: the shell: bash, zsh or fish; usage:
// runner completion <SHELL> [flags]". It returns "" otherwise.
//
// Kong checks required flags before positionals, so `runner batch run`
// alone would name only --out; the spec is named first, then the flags.
func missingArgument(err error) string {
	var perr *kong.ParseError
	if !errors.As(err, &perr) || perr.Context == nil {
		return ""
	}
	flags := ""
	switch msg := err.Error(); {
	case strings.HasPrefix(msg, `expected "<`):
	case strings.HasPrefix(msg, "missing flags: "):
		flags = "; " + msg
	default:
		return ""
	}
	node := perr.Context.Selected()
	if node == nil {
		return ""
	}
	for _, p := range node.Positional {
		if !p.Required || p.Set {
			continue
		}
		help := strings.TrimSuffix(p.Help, ".")
		if help != "" {
			help = ": " + strings.ToLower(help[:1]) + help[1:]
		}
		return fmt.Sprintf("missing %s%s%s; usage: runner %s", p.Summary(), help, flags, node.Summary())
	}
	return ""
}

// flagWithoutValue matches kong's error for a flag given no value: at the
// end of the line, or followed by another flag.
var flagWithoutValue = regexp.MustCompile(`^--([\w-]+): expected \w+ value but got "[^"]*" \((<EOL>|long flag|short flag)\)(; perhaps try .*)?$`)

// missingValue rewrites kong's error for a flag given no value ("--continue:
// expected string value but got "EOL" (<EOL>)") into what the flag takes:
// "--continue needs a value, DIR: continue the conversation…". It
// returns "" for any other error.
func missingValue(err error) string {
	var perr *kong.ParseError
	if !errors.As(err, &perr) || perr.Context == nil {
		return ""
	}
	m := flagWithoutValue.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	for _, f := range perr.Context.Flags() {
		if f.Name != m[1] {
			continue
		}
		help := strings.TrimSuffix(f.Help, ".")
		if help != "" {
			help = ": " + strings.ToLower(help[:1]) + help[1:]
		}
		return fmt.Sprintf("--%s needs a value, --%s=%s%s", f.Name, f.Name, f.FormatPlaceHolder(), help)
	}
	return ""
}

// joinedErrors returns the errors of an errors.Join, whose text is theirs
// one per line; nil for anything else, such as fmt.Errorf("%w: %w", …),
// whose parts only make sense together.
func joinedErrors(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	parts := j.Unwrap()
	msgs := make([]string, 0, len(parts))
	for _, e := range parts {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	if strings.Join(msgs, "\n") != err.Error() {
		return nil
	}
	return parts
}

// quietError is an exit code whose reason the command already printed on
// stdout (a denied `policy check`): report prints nothing for it.
type quietError struct{ *pipeline.ExitError }

// Unwrap returns the *pipeline.ExitError, which carries the exit code.
func (e *quietError) Unwrap() error { return e.ExitError }

// positioned matches an error text that starts with file:line:col.
var positioned = regexp.MustCompile(`^\S+:\d+:\d+: `)

// report writes err to stderr: spec errors one per line starting with
// file:line:col (without the stage prefixes wrapped around them), each error
// of a join on its own, anything else prefixed with "runner: ".
func report(w io.Writer, err error) {
	var quiet *quietError
	var exit *pipeline.ExitError
	if err == nil || errors.As(err, &quiet) || (errors.As(err, &exit) && exit.Reported) {
		return
	}
	var specErrs spec.Errors
	if _, isSpec := err.(spec.Errors); !isSpec {
		if parts := joinedErrors(err); parts != nil {
			for _, e := range parts {
				report(w, e)
			}
			return
		}
	}
	switch msg := err.Error(); {
	case errors.As(err, &specErrs):
		fmt.Fprintln(w, specErrs)
	case positioned.MatchString(msg):
		fmt.Fprintln(w, msg)
	default:
		fmt.Fprintf(w, "runner: %s\n", msg)
	}
}
