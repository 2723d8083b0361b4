package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/term"

	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

// openOutputs creates the out dir and the event sinks: the JSONL log (a
// file, or stdout with --events -), the console view on stderr (unless
// --quiet; GitHub Actions mode under Actions), all behind the redactor.
func (r *execRun) openOutputs(_ context.Context) error {
	r.runID = outdir.NewRunID(r.start)
	r.outDir = r.opts.Out
	if r.outDir == "" {
		r.outDir = outdir.Default(r.runID)
	}
	// The paths the user gave are tried before anything is made: a
	// --patch that cannot be written was found only after the whole run
	// (paid, the --isolate copy gone), and a bad --events left an empty
	// out dir.
	for _, f := range []struct{ flag, path string }{{"--events", r.opts.Events}, {"--patch", r.opts.Patch}} {
		if f.path == "" || f.path == "-" && f.flag == "--events" {
			continue
		}
		if err := tryCreate(f.path); err != nil {
			return fmt.Errorf("%w: %s %s: %w (give a file in a directory that exists or can be made)", ErrUsage, f.flag, f.path, err)
		}
	}
	if err := r.replaceEarlierOut(); err != nil {
		return err
	}
	if err := r.outFiles.MkdirAll(r.outDir); err != nil {
		if r.opts.Out != "" {
			return fmt.Errorf("%w: --out %s: %w (give a directory that exists or can be made)", ErrUsage, r.opts.Out, err)
		}
		return fmt.Errorf("%w: out dir: %w", ErrInfra, err)
	}
	if r.opts.Out == "" {
		ignoreRunnerDir(outdir.StateDir)
	}
	r.outFiles.Watch(r.outDir, r.repo)
	r.outReal = r.outDir
	if real, err := filepath.EvalSymlinks(r.outDir); err == nil {
		r.outReal = real // before any command: redactOutFiles follows no link below it
	}
	r.patchPath = cmp.Or(r.opts.Patch, filepath.Join(r.outDir, outdir.PatchFile))
	r.modes.Guard(r.outDir, filepath.Dir(r.patchPath))
	r.redactor = event.NewRedactor(r.opts.Environ, r.secretValues()...)
	if r.opts.Events == "-" {
		r.eventsCopy = &bytes.Buffer{}
		r.stdoutLog = &stdoutLog{w: r.opts.Stdout, copy: r.eventsCopy}
		r.writer = event.NewWriter(r.stdoutLog, r.runID)
	} else {
		r.eventsPath = cmp.Or(r.opts.Events, filepath.Join(r.outDir, outdir.EventsFile))
		if err := os.MkdirAll(filepath.Dir(r.eventsPath), 0o755); err != nil {
			return fmt.Errorf("%w: events: %w", ErrInfra, err)
		}
		r.modes.Guard(filepath.Dir(r.eventsPath))
		f, err := r.outFiles.Create(r.eventsPath)
		if err != nil {
			return fmt.Errorf("%w: events: create event log: %w", ErrInfra, err)
		}
		r.writer = event.Own(f, r.runID)
	}
	r.denials = &denialLog{}
	r.logGuard = &logGuard{next: r.writer, stop: r.stopMain}
	sinks := []event.Sink{r.logGuard, r.denials}
	if !r.opts.Quiet {
		tty := isTerminal(r.opts.Stderr)
		r.console = &consoleView{Console: event.NewConsole(r.opts.Stderr, event.ConsoleOptions{
			TTY: tty, Color: event.UseColor(r.opts.Color, r.getenv, tty),
			GitHubActions: r.getenv("GITHUB_ACTIONS") == "true",
			RetryAttempts: retryAttempts(r.opts.Backoff),
		})}
		sinks = append(sinks, r.console)
	}
	r.logSinks = event.Multi(sinks...)
	if r.opts.Telemetry != nil {
		r.liveSink = r.telemetryRun().Sink(r.runID)
	}
	r.sink = event.Redacting(event.Multi(r.logSinks, r.liveSink), r.redactor)
	return nil
}

// consoleView is the console as a sink of the run: a view for whoever
// reads stderr, not the record. A write that fails (the reader closed the
// pipe, as `runner exec … | head` does, or its disk is full) ends the view
// and not the run, which goes on to write events.jsonl to its end.
type consoleView struct {
	*event.Console
	failed atomic.Bool
}

// Emit implements event.Sink; after a failed write it writes nothing.
func (v *consoleView) Emit(p event.Payload) error {
	if v.failed.Load() {
		return nil
	}
	err := v.Console.Emit(p)
	if errors.Is(err, event.ErrNilPayload) {
		return err
	}
	if err != nil {
		v.failed.Store(true)
	}
	return nil
}

// Close ends the view's open blocks unless a write has already failed.
func (v *consoleView) Close() error {
	if v.failed.Load() {
		return nil
	}
	if err := v.Console.Close(); err != nil {
		v.failed.Store(true)
	}
	return nil
}

// stdoutLog is the event log's way to stdout (--events -). A write that
// fails (the reader left, as `| head` does) ends the stream and not the
// run: every line still goes to the copy, which the out dir then keeps as
// events.jsonl (writeReport).
type stdoutLog struct {
	w      io.Writer
	copy   *bytes.Buffer
	failed error // the first failed write to w
}

// Write writes p to the copy, and to w until a write there failed. The
// event writer calls it with its lock held.
func (s *stdoutLog) Write(p []byte) (int, error) {
	if s.failed == nil {
		if _, err := s.w.Write(p); err != nil {
			s.failed = err
		}
	}
	return s.copy.Write(p)
}

// tryCreate makes path's directory and checks that path can be opened
// for writing; a file it created for the check is removed again.
func tryCreate(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	_, statErr := os.Lstat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_ = f.Close()
	if errors.Is(statErr, fs.ErrNotExist) {
		_ = os.Remove(path)
	}
	return nil
}

// ignoreRunnerDir writes dir/.gitignore (outdir.StateIgnore) unless one is
// there: a user's own is left as it is. It is a convenience: when it cannot
// be written (a read-only dir), the run goes on without it.
func ignoreRunnerDir(dir string) {
	f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return // there already, or not writable: nothing to do
	}
	_, werr := f.WriteString(outdir.StateIgnore)
	if cerr := f.Close(); werr != nil || cerr != nil {
		_ = os.Remove(f.Name()) // a partial one would ignore less than it says
	}
}

// retryAttempts is how many retries of a model call the session makes
// with backoff b (runner's default for a zero Attempts).
func retryAttempts(b runner.Backoff) int {
	if b.Attempts <= 0 {
		return runner.DefaultBackoffTries
	}
	return b.Attempts
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
