package tools

import (
	"sort"
	"time"

	"github.com/seed43ef5acb/runner/tools/permission"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// Env is what the built-in tools need from their caller. The environment is
// read in cmd and passed down; tools never read os.Environ themselves.
type Env struct {
	// WorkTree is the directory tools act in (bash's working directory).
	WorkTree string
	// OutputDir receives the full output of bash commands whose output was
	// cut (empty: the full text is not kept).
	OutputDir string
	// Files makes the files of OutputDir (nil: plain files).
	Files OutputFiles
	// Environ is the base environment for bash ("NAME=value").
	Environ []string
	// PassEnv names variables the spec passes explicitly: kept even when
	// their name looks secret.
	PassEnv []string
	// BashTimeout is the default bash timeout (0: DefaultBashTimeout).
	BashTimeout time.Duration
	// MaxBashTimeout caps timeout_ms (0: MaxBashTimeout).
	MaxBashTimeout time.Duration
	// MaxOutputBytes bounds bash output kept for the model, head and tail
	// together (0: DefaultMaxOutputBytes).
	MaxOutputBytes int
	// MaxOutputFileBytes bounds the file under OutputDir that keeps a
	// command's full output (0: DefaultMaxOutputFileBytes): the runner
	// writes it outside the sandbox, so a command that prints without end
	// (yes, cat /dev/zero) would fill the runner's disk until its timeout.
	MaxOutputFileBytes int64
	// Sandbox contains every bash command (and so every check). nil runs
	// commands as plain process groups, as mode off does; the pipeline
	// always sets one.
	Sandbox *sandbox.Sandbox
	// Protected reports a file (by device and inode) that is a protected
	// file under another name: a hard link to, or a rename of, a file the
	// read rules deny, which a command made where the sandbox cannot stop
	// it (Landlock only). The tools run outside the sandbox: read, edit
	// and grep refuse such a file. nil: none.
	Protected func(dev, ino uint64) bool
}

// Defaults for Env's zero fields.
const (
	DefaultBashTimeout    = 2 * time.Minute
	MaxBashTimeout        = 10 * time.Minute
	DefaultMaxOutputBytes = 30_000
	// DefaultMaxOutputFileBytes is 64 MiB: far more than anyone reads back,
	// little against a disk.
	DefaultMaxOutputFileBytes int64 = 64 << 20
)

// Builtins returns the built-in tools (bash, edit, glob, grep, list, read,
// write), sorted by name. Wrap each with Guard before offering them.
func Builtins(env Env) []Tool {
	b := newBase(env)
	ts := []Tool{
		&bashTool{base: b}, &editTool{base: b}, &globTool{base: b}, &grepTool{base: b},
		&listTool{base: b}, &readTool{base: b}, &writeTool{base: b},
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Info().Name < ts[j].Info().Name })
	return ts
}

// NewBash returns the bash tool alone, unguarded, for commands that come
// from the spec rather than the model (the pipeline's checks).
func NewBash(env Env) Tool { return &bashTool{base: newBase(env)} }

// Named returns the tool of ts called name; ok is false when none is.
func Named(ts []Tool, name string) (Tool, bool) {
	for _, t := range ts {
		if t.Info().Name == name {
			return t, true
		}
	}
	return nil, false
}

// GuardAll wraps every tool with Guard.
func GuardAll(ts []Tool, rs permission.Ruleset, workTree string) []Tool {
	out := make([]Tool, len(ts))
	for i, t := range ts {
		out[i] = Guard(t, rs, workTree)
	}
	return out
}

// base is what every built-in tool shares.
type base struct {
	env      Env
	paths    permission.Paths
	pathsErr error
}

func newBase(env Env) base {
	p, err := permission.NewPaths(env.WorkTree)
	return base{env: env, paths: p, pathsErr: err}
}

// display is how a path appears in output: work-tree-relative when inside.
func display(t permission.Target) string { return t.Pattern() }
