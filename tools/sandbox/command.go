package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// helperArg is os.Args[1] of the helper (see Main).
const helperArg = "-runner-sandbox-helper"

// killWait is how long a command has to exit after its helper got SIGTERM
// (Landlock only) before it is killed.
const killWait = 2 * time.Second

// helperConfig is what the helper is told (JSON in os.Args[2]).
type helperConfig struct {
	Layers   []Layer    `json:"layers"`
	Writable []string   `json:"writable"`
	ReadOnly []string   `json:"read_only,omitempty"`
	Covers   []cover    `json:"covers,omitempty"`
	Read     readGrants `json:"read"` // Landlock only
	Empty    string     `json:"empty"`
	EmptyDir string     `json:"empty_dir"`
	Network  bool       `json:"network,omitempty"`
	Proxy    *proxyConf `json:"proxy,omitempty"`
	Probe    bool       `json:"probe,omitempty"`
	// Reaper (mode off): no layer at all, the helper only supervises the
	// command as a child subreaper, so what it leaves running dies with it
	// and with the runner.
	Reaper bool `json:"reaper,omitempty"`
}

// Sandbox starts commands under one Policy. It owns a scratch directory
// (the private $HOME and $TMPDIR, shared by its commands); Close removes
// it. A Sandbox is safe for concurrent use.
type Sandbox struct {
	mode    Mode
	layers  []Layer
	unavail error // auto with no layer: why commands are refused
	exe     string
	scratch string
	home    string
	tmp     string
	gitConf string
	// workTree is the policy's work tree (clean; "" with mode off).
	workTree string
	// keep are the paths never hidden (the writable and read-only ones).
	keep []string
	// watch finds the protected files that appear in the work tree
	// (Policy.Protected); nil without it.
	watch *coverWatch

	mu  sync.Mutex   // guards what follows (refresh changes it before a command)
	cfg helperConfig // what the next zygote or helper is told
	// found is every protected file the watch found, in order
	// (ProtectedFound); pending those the next refresh has not hidden
	// yet, walked why the watch last walked the tree whole
	found, pending []string
	walked         string
	// hidden is every path to hide: the policy's, the sockets', the
	// protected files found.
	hidden []string
	// gen counts the changes of cfg's covers and read grants: a zygote of
	// an older generation is stopped, not reused.
	gen int
	// landlockListed (Landlock only) holds, for each directory whose
	// children are granted one by one and that commands can write, its
	// names when the grants were computed (listedStale).
	landlockListed map[string][]string
	// perCommand starts a helper per command instead of a zygote
	// (Policy.PerCommandHelper).
	perCommand bool
	zygotes    zygotePool
	// proxyLn is the runner's forwarder to the allow list's proxy
	// (Landlock only, mode off); proxyEnv the commands' proxy variables.
	proxyLn  net.Listener
	proxyEnv []string
}

// New checks the policy against what the machine offers and prepares the
// scratch directory. Mode off never fails; required fails with
// ErrUnavailable unless every layer works; auto succeeds even with no layer
// (Command then fails with ErrUnavailable). It fails when Main was not
// called first in main() or TestMain (the helper would not start).
func New(p Policy) (*Sandbox, error) {
	if p.Mode == "" {
		p.Mode = ModeAuto
	}
	if !slices.Contains(Modes(), p.Mode) {
		return nil, fmt.Errorf("sandbox: unknown mode %q (want auto, required or off)", p.Mode)
	}
	s := &Sandbox{mode: p.Mode, perCommand: p.PerCommandHelper}
	if p.Mode == ModeOff {
		s.cfg = helperConfig{Reaper: true} // the zygote's, when Main was called
		s.exe, _ = os.Executable()
		if err := s.prepareProxy(p); err != nil {
			return nil, err
		}
		s.cfg.Proxy = nil                                     // the reaper forwards nothing: the runner does
		if p.Protected != nil && filepath.IsAbs(p.WorkTree) { // nothing to hide, but ProtectedFound still tells
			if w, found, err := startWatch(p, filepath.Clean(p.WorkTree)); err == nil {
				s.watch, s.found = w, found
			}
		}
		return s, nil
	}
	if !mainCalled.Load() {
		return nil, errors.New("sandbox: sandbox.Main() must be the first call in main() (and in TestMain of tests that sandbox commands)")
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: own executable for the helper: %w", err)
	}
	s.exe = exe
	layers, err := chooseLayers(p.Mode, p.Layers, Probe())
	if err != nil {
		return nil, err
	}
	if len(layers) == 0 {
		s.unavail = fmt.Errorf("%w: %s; or set sandbox.mode: off in the task spec to run commands unsandboxed", ErrUnavailable, Probe().Missing())
		return s, nil
	}
	s.layers = layers
	if err := s.prepare(p); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// prepare makes the scratch directory and the helper's configuration.
func (s *Sandbox) prepare(p Policy) error {
	if !filepath.IsAbs(p.WorkTree) {
		return fmt.Errorf("sandbox: work tree %q is not an absolute path", p.WorkTree)
	}
	scratch, err := os.MkdirTemp(p.ScratchDir, "runner-sandbox-")
	if err != nil {
		return fmt.Errorf("sandbox: scratch dir: %w", err)
	}
	s.scratch, s.workTree = scratch, filepath.Clean(p.WorkTree)
	s.home, s.tmp = filepath.Join(scratch, "home"), filepath.Join(scratch, "tmp")
	ro := filepath.Join(scratch, "ro")
	for _, d := range []string{s.home, s.tmp, ro, filepath.Join(ro, "emptydir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("sandbox: scratch dir: %w", err)
		}
	}
	s.gitConf = filepath.Join(ro, "gitconfig")
	for name, text := range map[string]string{"empty": "", "gitconfig": p.GitConfig} {
		if err := os.WriteFile(filepath.Join(ro, name), []byte(text), 0o444); err != nil {
			return fmt.Errorf("sandbox: scratch dir: %w", err)
		}
	}
	writable := []string{filepath.Clean(p.WorkTree), s.home, s.tmp}
	for _, w := range p.Writable {
		if !filepath.IsAbs(w) {
			return fmt.Errorf("sandbox: writable path %q is not absolute", w)
		}
		if err := os.MkdirAll(w, 0o755); err != nil {
			return fmt.Errorf("sandbox: writable path: %w", err)
		}
		writable = append(writable, filepath.Clean(w))
	}
	readOnly := []string{ro}
	for _, r := range append([]string{filepath.Join(p.WorkTree, ".git")}, p.ReadOnly...) {
		if _, err := os.Lstat(r); err == nil {
			readOnly = append(readOnly, filepath.Clean(r))
		}
	}
	s.hidden = slices.Clone(p.Hidden)
	if slices.Contains(s.layers, LayerNamespaces) {
		s.hidden = append(s.hidden, listeningSockets()...) // Landlock only: the seccomp filter refuses connect(2)
	}
	if p.Protected != nil {
		w, found, err := startWatch(p, s.workTree)
		if err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		s.watch, s.hidden, s.found = w, append(s.hidden, found...), slices.Clone(found)
	}
	s.hidden = withoutPath(s.hidden, p.Proxy) // bound before New: listed, but the one socket commands need
	s.keep = append(slices.Clone(writable), readOnly...)
	s.cfg = helperConfig{
		Layers: s.layers, Writable: writable, ReadOnly: readOnly,
		Empty: filepath.Join(ro, "empty"), EmptyDir: filepath.Join(ro, "emptydir"), Network: p.Network,
	}
	s.setCovers(computeCovers(s.hidden, s.keep))
	return s.prepareProxy(p)
}

// LayersFor is the layers a sandbox of mode would use on this machine
// (nil for off), or ErrUnavailable (wrapped) when required cannot be met.
func LayersFor(mode Mode) ([]Layer, error) { return chooseLayers(mode, nil, Probe()) }

// Err is nil when commands can start, else why not (wrapping
// ErrUnavailable: mode auto found no layer).
func (s *Sandbox) Err() error { return s.unavail }

// Mode is the sandbox's mode.
func (s *Sandbox) Mode() Mode { return s.mode }

// Layers are the layers every command runs under (nil: none).
func (s *Sandbox) Layers() []Layer { return slices.Clone(s.layers) }

// Describe is Describe(s.Mode(), s.Layers()).
func (s *Sandbox) Describe() string { return Describe(s.mode, s.layers) }

// Close stops the zygotes (killing whatever they still run) and removes
// the scratch directory.
func (s *Sandbox) Close() error {
	if s == nil {
		return nil
	}
	s.zygotes.close()
	if s.watch != nil {
		s.watch.close()
		s.watch = nil
	}
	if s.proxyLn != nil {
		_ = s.proxyLn.Close()
		s.proxyLn = nil
	}
	if s.scratch == "" {
		return nil
	}
	err := os.RemoveAll(s.scratch)
	s.scratch = ""
	return err
}

// Command returns the command that runs argv (argv[0] looked up in PATH by
// the helper) in dir with env inside the sandbox. env gets HOME, TMPDIR
// and GIT_CONFIG_GLOBAL pointed at the sandbox's own. The caller sets
// Stdin, Stdout and Stderr and must not replace SysProcAttr or Cancel: the
// command is its own process group, and cancelling ctx kills everything it
// started. With mode off it is a plain process group that gets the same
// kill. It fails with ErrUnavailable when auto found no layer.
func (s *Sandbox) Command(ctx context.Context, argv []string, dir string, env []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	if s.unavail != nil {
		return nil, s.unavail
	}
	if s.mode == ModeOff {
		return s.offCommand(ctx, argv, dir, s.offEnv(env)), nil
	}
	cfg, _ := s.config()
	conf, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	cmd := exec.CommandContext(ctx, s.exe, append([]string{helperArg, string(conf)}, argv...)...)
	cmd.Args[0] = "runner-sandbox"
	cmd.Dir = dir
	cmd.Env = s.commandEnv(env)
	attr, sig := sysProcAttr(s.layers, cfg.Network)
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid, sig) }
	cmd.WaitDelay = killWait
	return cmd, nil
}

// reaperName is argv[0] of a mode-off command's helper.
const reaperName = "runner-reaper"

// offCommand is a mode-off command: unsandboxed, with the runner's
// environment, but (on Linux, once Main was called) started under the
// helper as a reaper: a child subreaper that gets SIGTERM when the runner
// dies (PR_SET_PDEATHSIG) and then kills everything the command left,
// background jobs that left its process group (setsid) included. Without
// the helper it is a plain process group.
func (s *Sandbox) offCommand(ctx context.Context, argv []string, dir string, env []string) *exec.Cmd {
	exe, err := os.Executable()
	if !reaperAvailable() || !mainCalled.Load() || err != nil {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return killGroup(cmd.Process.Pid, syscall.SIGKILL) }
		return cmd
	}
	conf, _ := json.Marshal(helperConfig{Reaper: true}) // plain fields: cannot fail
	cmd := exec.CommandContext(ctx, exe, append([]string{helperArg, string(conf)}, argv...)...)
	cmd.Args[0] = reaperName
	cmd.Dir, cmd.Env = dir, env
	attr, sig := sysProcAttr(nil, true)
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid, sig) }
	cmd.WaitDelay = killWait
	return cmd
}

// commandEnv is env with the sandbox's HOME, TMPDIR and GIT_CONFIG_GLOBAL
// and the tool caches' variables (toolCaches).
func (s *Sandbox) commandEnv(env []string) []string {
	set := append(toolCaches(env, s.cfg.Writable), "HOME="+s.home, "TMPDIR="+s.tmp, "GIT_CONFIG_GLOBAL="+s.gitConf)
	return withEnv(env, append(set, s.proxyEnv...)...)
}

// offEnv is a mode-off command's env: as given (nil: the runner's), with
// the proxy's variables when there is an allow list.
func (s *Sandbox) offEnv(env []string) []string {
	if len(s.proxyEnv) == 0 {
		return env
	}
	if env == nil {
		env = os.Environ()
	}
	return withEnv(env, s.proxyEnv...)
}

// withEnv returns env with each "NAME=value" of set replacing any entry of
// the same name.
func withEnv(env []string, set ...string) []string {
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(set, func(s string) bool { return strings.HasPrefix(s, name+"=") }) {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// killGroup sends sig to the process group led by pid.
func killGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
