// Package sandbox contains the processes the runner starts for the agent
// (the bash tool, checks, MCP stdio servers) with what the Linux kernel
// gives an unprivileged user, so that what an allowed program does at run
// time (go test runs the agent's code) is bounded by the OS, not by the
// text of its command line.
//
// Two layers, each on its own or both:
//
//   - namespaces: a re-exec of the current binary (the helper, see Main)
//     starts in new user, mount, PID, network, IPC and UTS namespaces. It
//     makes every mount read-only, binds the work tree and the declared
//     writable paths read-write, .git read-only, covers hidden paths
//     (protected .env*, credential stores in $HOME) with empty read-only files or
//     directories, mounts a fresh /proc (only the sandbox's processes),
//     brings up loopback in an empty network namespace, drops every
//     capability and execs the command as PID 2 under its own init. When
//     the helper dies (the runner was killed: PR_SET_PDEATHSIG) the
//     kernel kills everything in the PID namespace.
//   - landlock: the helper restricts itself and everything it starts with
//     Landlock (github.com/landlock-lsm/go-landlock): writes only to the
//     writable paths, reads everywhere but the hidden paths, signals and
//     abstract unix sockets only inside the sandbox; without the network
//     namespace also TCP bind/connect denied by Landlock (ABI ≥ 4) and
//     AF_INET/AF_INET6 sockets and io_uring refused by a seccomp filter
//     (Landlock ABI < 10 does not cover UDP, and no ABI covers MPTCP).
//
// The layers used are the strongest available (Probe), unless the Policy
// pins them. Main must be the first call of main() in every binary that
// builds a Sandbox (the runner and test binaries, through TestMain).
//
// Imports: the standard library, golang.org/x/sys and go-landlock; nothing
// of this module (tools sits above it).
package sandbox

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Mode says how hard the runner insists on a sandbox (the spec's
// sandbox.mode).
type Mode string

// Modes.
const (
	// ModeAuto (the default) uses the strongest layers available; when
	// there are none, starting a command fails with ErrUnavailable.
	ModeAuto Mode = "auto"
	// ModeRequired refuses to build a Sandbox unless every layer
	// (namespaces and landlock) is available.
	ModeRequired Mode = "required"
	// ModeOff runs commands unsandboxed, as a plain process group.
	ModeOff Mode = "off"
)

// Modes lists the valid modes, default first.
func Modes() []Mode { return []Mode{ModeAuto, ModeRequired, ModeOff} }

// Layer is one mechanism of the sandbox.
type Layer string

// Layers.
const (
	// LayerNamespaces: user, mount, PID, network, IPC, UTS namespaces.
	LayerNamespaces Layer = "namespaces"
	// LayerLandlock: Landlock file system, network and scope rules, plus
	// a seccomp filter on inet sockets where there is no network namespace.
	LayerLandlock Layer = "landlock"
)

// AllLayers is every layer, strongest first.
func AllLayers() []Layer { return []Layer{LayerNamespaces, LayerLandlock} }

// ErrUnavailable is returned (wrapped, with what is missing and how to fix
// it) when the sandbox the mode asks for cannot be set up.
var ErrUnavailable = errors.New("no OS sandbox is available")

// Policy is what a sandboxed command may do. Paths are absolute; New
// cleans them.
type Policy struct {
	// Mode is auto when empty.
	Mode Mode
	// WorkTree is read-write, except ReadOnly paths in it (WorkTree/.git
	// is always added).
	WorkTree string
	// Writable are more read-write directories (build caches: GOCACHE,
	// npm's cache). Missing ones are created.
	Writable []string
	// ReadOnly are paths inside WorkTree or Writable kept read-only.
	ReadOnly []string
	// Hidden are files and directories whose content the command must not
	// see (protected .env*, HomeSecrets): they appear empty (with
	// namespaces) or unreadable (Landlock only). A hidden directory that
	// holds WorkTree or a Writable path is hidden except for that path.
	Hidden []string
	// Protected, when set, reports whether a file in WorkTree (absolute
	// path) must be hidden like Hidden (the .env* files the read rules
	// protect). New walks the work tree for them (.git directories
	// excepted) and watches every directory of it (inotify: entries
	// created or moved in); before each command Start hides the ones that
	// appeared since (a command, a check or a git checkout made them),
	// starting a new zygote with the new covers (Process.Refresh says
	// so). A protected file is hidden whoever made it, the agent's own
	// command too. Commands running at that moment, and MCP servers
	// started before, keep the covers they started with.
	Protected func(path string) bool `json:"-"`
	// Watch, when set, is a watch WatchProtected started on WorkTree:
	// New takes it over instead of walking the tree again (and closes it
	// when it cannot). Files that appeared since it started are found.
	Watch *Watch `json:"-"`
	// Network allows the network: no network namespace and no socket
	// rules.
	Network bool
	// Proxy is the path of the unix socket where the network allow
	// list's HTTP proxy (tools/sandbox/netproxy) listens, outside the
	// sandbox ("" : none; Network must be false). Commands get
	// HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (and the lower-case names)
	// pointing at http://127.0.0.1:PORT: with namespaces a forwarder in
	// the empty network namespace (ProxyPort, in the zygote or helper)
	// relays to the socket; with Landlock only (ABI ≥ 4, else New fails)
	// a forwarder in the runner on an ephemeral port is the one TCP port
	// commands may connect to; with mode off the variables are set and
	// nothing enforces them. The socket is never covered.
	Proxy string
	// NoProxy are the hosts commands reach without the proxy (NO_PROXY,
	// no_proxy), e.g. localhost inside the namespace.
	NoProxy []string
	// GitConfig is the text of a git configuration file the sandbox
	// provides, read-only, as the global config (GIT_CONFIG_GLOBAL).
	GitConfig string
	// Layers pins the layers to use (tests); nil means every available one.
	Layers []Layer
	// PerCommandHelper starts a helper of its own for each command (the
	// sandbox set up anew every time) instead of the zygote, the one
	// helper per Sandbox that sets it up once and forks each command
	// (benchmarks and tests of the fallback).
	PerCommandHelper bool
	// ScratchDir is where the per-sandbox private $HOME and $TMPDIR are
	// made ("" : os.TempDir()).
	ScratchDir string
}

// Support is what this machine offers (Probe).
type Support struct {
	// Namespaces is nil when user namespaces work, else why not.
	Namespaces error
	// LandlockABI is the kernel's Landlock ABI version (0: none).
	LandlockABI int
	// Landlock is nil when Landlock can be used, else why not.
	Landlock error
}

// Available lists the layers that can be used, strongest first.
func (s Support) Available() []Layer {
	var out []Layer
	if s.Namespaces == nil {
		out = append(out, LayerNamespaces)
	}
	if s.Landlock == nil {
		out = append(out, LayerLandlock)
	}
	return out
}

// Missing explains the layers that cannot be used, with how to enable
// them, one sentence each.
func (s Support) Missing() string {
	var parts []string
	if s.Namespaces != nil {
		parts = append(parts, fmt.Sprintf("user namespaces: %v (enable them: sysctl kernel.unprivileged_userns_clone=1, "+
			"or on Ubuntu load an AppArmor profile granting userns to the runner binary, "+
			"or sysctl kernel.apparmor_restrict_unprivileged_userns=0)", s.Namespaces))
	}
	if s.Landlock != nil {
		parts = append(parts, fmt.Sprintf("landlock: %v (needs Linux ≥ 5.13 with landlock in the lsm= boot list)", s.Landlock))
	}
	return strings.Join(parts, "; ")
}

// chooseLayers picks the layers for mode from what is available and what
// the policy pins. It returns ErrUnavailable (wrapped) for required when a
// layer is missing, and for a pinned layer that is missing.
func chooseLayers(mode Mode, pinned []Layer, sup Support) ([]Layer, error) {
	if mode == ModeOff {
		return nil, nil
	}
	avail := sup.Available()
	if pinned != nil {
		for _, l := range pinned {
			if !slices.Contains(avail, l) {
				return nil, fmt.Errorf("%w: layer %s was asked for: %s", ErrUnavailable, l, sup.Missing())
			}
		}
		return slices.Clone(pinned), nil
	}
	if mode == ModeRequired && len(avail) < len(AllLayers()) {
		return nil, fmt.Errorf("%w: sandbox.mode required needs every layer (%s); missing %s; "+
			"use mode: auto to run with what is there", ErrUnavailable, joinLayers(AllLayers()), sup.Missing())
	}
	return avail, nil
}

func joinLayers(ls []Layer) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = string(l)
	}
	return strings.Join(s, "+")
}

// Describe is a one-line account of a sandbox: its mode and layers, e.g.
// "auto: namespaces+landlock" or "off: commands run unsandboxed".
func Describe(mode Mode, layers []Layer) string {
	switch {
	case mode == ModeOff:
		return "off: commands run unsandboxed"
	case len(layers) == 0:
		return string(mode) + ": no layer available, bash and checks are refused"
	}
	return string(mode) + ": " + joinLayers(layers)
}

// HomeSecrets are the credential stores below home that the sandbox hides
// by default (the rest of $HOME stays readable: toolchains and module
// caches live there): SSH and GnuPG keys, cloud and cluster credentials,
// forge and registry tokens, git credentials (both of git's stores),
// database client passwords, AI agents' logins, shell histories.
func HomeSecrets(home string) []string {
	rel := []string{".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json",
		".config/gh", ".config/hub", ".git-credentials", ".netrc", ".npmrc", ".yarnrc", ".pypirc",
		".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".terraform.d/credentials.tfrc.json",
		".config/op", ".password-store", ".local/share/keyrings", ".bash_history", ".zsh_history",
		".python_history", ".psql_history", ".mysql_history", ".node_repl_history", ".config/runner",
		".config/git/credentials", ".pgpass", ".my.cnf", ".vault-token", ".config/containers/auth.json",
		".boto", ".s3cfg", ".config/rclone", ".pulumi/credentials.json", ".composer/auth.json",
		".config/composer/auth.json", ".huggingface/token", ".cache/huggingface/token", ".codex/auth.json",
		".claude/.credentials.json", ".config/github-copilot", ".oci", ".databrickscfg", ".terraformrc",
		".m2/settings-security.xml", ".gradle/gradle.properties", ".sbt/credentials", ".ivy2/.credentials"}
	out := make([]string, len(rel))
	for i, r := range rel {
		out[i] = home + "/" + r
	}
	return out
}

// HostSockets are the unix sockets of the machine's daemons that the
// sandbox hides by default: connecting to the container engine's socket
// is root on the host, and the system bus and init reach services. With
// namespaces an empty file covers them; Landlock below ABI 9 cannot stop
// connect(2) to a path socket.
func HostSockets() []string {
	return []string{"/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
		"/run/podman/podman.sock", "/run/crio/crio.sock", "/run/dbus/system_bus_socket",
		"/var/run/dbus/system_bus_socket", "/run/systemd/private", "/run/snapd.socket"}
}
