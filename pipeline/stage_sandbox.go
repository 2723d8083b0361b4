package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
	"github.com/seed43ef5acb/runner/tools/permission"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// checkSandbox checks the spec's sandbox section before anything is
// written: the section's writable paths expanded (one whose variable is
// unset is skipped, with a note when no entry of the list opened a
// directory: a list that names its fallback, [$GOCACHE,
// ~/.cache/go-build], says nothing), and mode required without every layer
// is a usage error (exit 2), and so is an unknown or missing layer pinned
// by the runner's RUNNER_SANDBOX_LAYERS (sandbox.ParseLayers); mode off is
// said on stderr. The secret values of the protected .env* files are
// read here, for the redactor the out stage builds.
func (r *execRun) checkSandbox(_ context.Context) error {
	sec := r.spec.Sandbox
	r.sandboxPolicy = sandbox.Policy{Mode: sec.ModeOrDefault(), Network: sec.Network, GitConfig: tools.GitGuard()}
	var unset []string
	for i, w := range sec.Writable {
		p, err := r.expandWritable(w)
		if errors.Is(err, spec.ErrUnset) { // harmless: nothing names that directory here
			unset = append(unset, w)
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
		if err := r.broadWritable(sec, fmt.Sprintf("sandbox.writable[%d]", i), w, p); err != nil {
			return err
		}
		if !slices.Contains(r.writable, p) { // [$GOCACHE, ~/.cache/go-build] may name one directory
			r.sandboxPolicy.Writable = append(r.sandboxPolicy.Writable, p)
			r.writable = append(r.writable, p)
		}
	}
	if len(r.writable) == 0 && !r.opts.Quiet {
		for _, w := range unset {
			fmt.Fprintf(r.opts.Stderr, "runner: note: sandbox.writable %s is skipped: it is not set in this environment\n", w)
		}
	}
	rules, err := r.spec.Ruleset()
	if err != nil {
		return err
	}
	if !r.dry { // Check has no work tree
		envFiles := r.watchEnvFiles(rules)
		r.protected.remember(envFiles)
		r.envSecrets = envFileSecrets(r.treeRoot(), envFiles)
	}
	if r.sandboxPolicy.Layers, err = sandbox.ParseLayers(r.getenv(sandbox.LayersEnv)); err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if _, err := sandbox.ChooseLayers(r.sandboxPolicy.Mode, r.sandboxPolicy.Layers); err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if r.sandboxPolicy.Mode == sandbox.ModeOff {
		fmt.Fprintln(r.opts.Stderr, "runner: WARNING: sandbox.mode is off: bash and the checks run unsandboxed, with the runner's file system and network access")
	}
	return nil
}

// expandWritable is the directory a sandbox.writable entry w opens:
// spec.ExpandPath, then sandbox.ResolveCache, so that ~/.cache/go-build
// is Go's build cache wherever GOCACHE or XDG_CACHE_HOME put it.
func (r *execRun) expandWritable(w string) (string, error) {
	p, err := spec.ExpandPath(w, r.getenv)
	if err != nil {
		return "", err
	}
	return sandbox.ResolveCache(p, r.getenv), nil
}

// broadWritable refuses a writable entry (at key path key, written w,
// expanded to p) that opens more than a build cache (spec.BroadWritable:
// /, the runner's $HOME or a directory holding it or the work tree) unless
// its section says allow_broad: true: a spec error at the entry's
// position, exit 2, saying how to fix it. The text alone is checked when
// the spec loads; here the expanded path ($XDG_CACHE_HOME=/home/u, a
// parent of the work tree).
func (r *execRun) broadWritable(sec spec.Sandbox, key, w, p string) error {
	if sec.AllowBroad {
		return nil
	}
	tree, err := filepath.Abs(r.workTree)
	switch {
	case r.dry:
		tree = "" // Check has no work tree (filepath.Abs would make "" the current directory)
	case err != nil:
		tree = r.workTree
	}
	what := spec.BroadWritable(p, r.getenv("HOME"), tree)
	if what == "" {
		return nil
	}
	e := &spec.Error{File: r.spec.Path, Line: 1, Col: 1, Hint: spec.BroadHint,
		Msg: fmt.Sprintf("%s: %q is %s here, which makes %s writable to every command", key, w, p, what)}
	if pos, ok := r.spec.Position(key); ok {
		e.Line, e.Col = pos.Line, pos.Col
	}
	return e
}

// setupSandbox builds the OS sandbox every bash command and check runs in
// on the work tree as it now is (the --isolate copy made): the work tree
// writable but for the runner's own files in it (excludes: .runner/, the
// out dir, log, patch, cassette; read-only), the .env* files the read
// rules protect (those there now and, before each later command, those
// that appeared: sandbox.Policy.Protected), the credential
// stores in the runner's $HOME and $XDG_RUNTIME_DIR hidden, the git guard as a read-only
// global config, its scratch ($HOME, $TMPDIR) in the run's temporary
// directory.
func (r *execRun) setupSandbox(ctx context.Context) error {
	pol := r.sandboxPolicy
	pol.WorkTree, pol.ScratchDir = r.workTree, r.runTemp.Path()
	rules, err := r.spec.Ruleset()
	if err != nil {
		return err
	}
	for _, rel := range r.excludes() { // the runner's own state: earlier runs' outputs too
		pol.ReadOnly = append(pol.ReadOnly, filepath.Join(r.workTree, filepath.FromSlash(rel)))
	}
	pol.Hidden = sandbox.HostSockets()
	pol.Protected = protectedEnv(r.workTree, rules) // the sandbox finds them, now and as they appear
	if home := r.getenv("HOME"); filepath.IsAbs(home) {
		pol.Hidden = append(pol.Hidden, sandbox.HomeSecrets(home)...)
	}
	if run := r.getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(run) { // the user's session bus, systemd, agents
		pol.Hidden = append(pol.Hidden, run)
	}
	pol.Hidden = append(pol.Hidden, r.snapshotStores()...)
	pol.Hidden = append(pol.Hidden, r.opts.Hidden...)
	if r.gitCreds != nil { // credential files the git config included (actions/checkout's)
		pol.Hidden = append(pol.Hidden, r.gitCreds.includes...)
	}
	if err := r.startNetProxy(ctx, &pol); err != nil {
		return err
	}
	pol.Watch, r.envWatch = r.envWatch, nil // checkSandbox's walk, when the work tree is the same
	sb, err := sandbox.New(pol)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	// A copy of the policy (an MCP server's sandbox) hides what was found
	// and watches nothing: a server starts once.
	pol.Hidden, pol.Protected, pol.Watch = sb.Hidden(), nil, nil
	r.sandbox, r.sandboxPolicy = sb, pol
	return nil
}

// snapshotStores are the directories of snapshot stores the sandbox hides:
// a store holds the blobs of every file of the trees it tracked, a
// protected .env among them (this run's, earlier runs', other
// repositories'). The one this run uses is created here when missing,
// since covers are computed when the sandbox is built and the store opens
// after it; the user cache's is hidden when it exists.
func (r *execRun) snapshotStores() []string {
	var own string
	switch {
	case r.opts.SnapshotDir != "":
		own = r.opts.SnapshotDir
	case r.isolated:
		own = filepath.Join(r.runTemp.Path(), "snapshots")
	}
	var dirs []string
	if own != "" {
		_ = os.MkdirAll(own, 0o700)
		dirs = append(dirs, own)
	}
	if c, err := os.UserCacheDir(); err == nil { // the default root of every run's store
		root := filepath.Join(c, "runner", "snapshots")
		if own == "" {
			_ = os.MkdirAll(root, 0o700)
		}
		dirs = append(dirs, root)
	}
	for i, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			dirs[i] = abs
		}
	}
	return dirs
}

// sandboxInfo is what run.started records of the sandbox.
func (r *execRun) sandboxInfo() *event.Sandbox {
	if r.sandbox == nil {
		return nil
	}
	rec := &event.Sandbox{Mode: string(r.sandbox.Mode()), Network: r.spec.Sandbox.Network, NetworkAllow: r.spec.Sandbox.Allow, Layers: []string{}}
	for _, l := range r.sandbox.Layers() {
		rec.Layers = append(rec.Layers, string(l))
	}
	rec.Writable = r.writable
	if slices.Contains(r.sandbox.Layers(), sandbox.LayerLandlock) {
		rec.LandlockABI = sandbox.Probe().LandlockABI
	}
	rec.Limits = sandbox.Limits(r.sandbox.Layers(), r.spec.Sandbox.Network, sandbox.Probe().LandlockABI, r.writable)
	if len(r.spec.Sandbox.Allow) > 0 {
		rec.Limits = append(rec.Limits, sandbox.ProxyLimits(r.sandbox.Layers(), sandbox.Probe().LandlockABI)...)
	}
	if h := strings.Join(strings.Fields(r.getenv(sandbox.HostSetupEnv)), " "); h != "" {
		rec.HostSetup = h[:min(len(h), 500)]
	}
	if g := r.gitCreds; g != nil && len(r.sandbox.Layers()) == 0 {
		l := "git credentials: taken out of .git/config for the run, but with mode off nothing hides the runner's environment"
		if len(g.includes) > 0 {
			l += " or the files the config included (" + strings.Join(g.includes, ", ") + ")"
		}
		rec.Limits = append(rec.Limits, l)
	}
	return rec
}

// closeSandbox removes the sandbox's scratch directory.
func (r *execRun) closeSandbox() {
	r.envWatch.Close() // the sandbox was never built
	r.envWatch = nil
	if r.sandbox != nil {
		_ = r.sandbox.Close()
	}
	r.stopNetProxy()
}

// watchEnvFiles lists the protected .env* files of the work tree
// (protectedEnvFiles) and keeps the walk's inotify watch in r.envWatch:
// setupSandbox hands it to sandbox.New, which then does not walk the tree
// again. Off Linux it walks.
func (r *execRun) watchEnvFiles(rules permission.Ruleset) []string {
	w, found, err := sandbox.WatchProtected(r.workTree, protectedEnv(r.workTree, rules))
	if err != nil {
		return protectedEnvFiles(r.workTree, rules)
	}
	r.envWatch = w
	return found
}

// protectedEnvFiles lists the .env* files below root (absolute paths) that
// rules do not allow reading (protectedEnv): the sandbox hides them. .git
// directories are not walked.
func protectedEnvFiles(root string, rules permission.Ruleset) []string {
	protected := protectedEnv(root, rules)
	var out []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // an unreadable directory hides nothing
		}
		if d.IsDir() && strings.EqualFold(d.Name(), ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && protected(p) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// protectedEnv reports whether the file at p (absolute, below root) is an
// .env* file, or lies in an .env* directory, that rules do not allow
// reading (permission.ProtectedKind).
func protectedEnv(root string, rules permission.Ruleset) func(p string) bool {
	return func(p string) bool {
		if !strings.Contains(strings.ToLower(p), ".env") {
			return false
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return false
		}
		rel = filepath.ToSlash(rel)
		if permission.ProtectedKind(rel) != ".env" {
			return false
		}
		return !rules.CheckProtected(permission.Read, rel, ".env").Allowed
	}
}
