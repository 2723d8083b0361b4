package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// Limits lists, one sentence each, what a sandbox of layers (with the
// network allowed or not, on a kernel of Landlock ABI abi, with writable
// paths outside the work tree) does not stop on this machine, and who
// catches it when someone does. run.started records it and `runner
// policy check` prints it, so that a weaker layer is never silent. Nil
// for no layer (mode off or nothing available: Describe says it).
func Limits(layers []Layer, network bool, abi int, writable []string) []string {
	if len(layers) == 0 {
		return nil
	}
	ns := slices.Contains(layers, LayerNamespaces)
	var out []string
	for _, w := range writable {
		out = append(out, fmt.Sprintf("%s is writable and shared with builds outside the run: a command can leave files there that they use (a poisoned build cache)", w))
	}
	if network {
		out = append(out, "network: allow: commands reach any host, and with Landlock only, every unix socket of the machine")
	}
	if ns {
		return append(out, "a unix socket bound after the run started is not covered")
	}
	out = append(out,
		".git is writable (Landlock cannot take rights away below the work tree): the git tripwire fails the run and puts .git back",
		"the machine's processes are listed in /proc; their environment and memory stay unreadable (no capabilities, the runner is not dumpable)")
	if abi < 3 {
		out = append(out, fmt.Sprintf("Landlock ABI %d < 3: truncate(2) of files outside the work tree is not stopped", abi))
	}
	if abi < 4 && !network {
		out = append(out, fmt.Sprintf("Landlock ABI %d < 4 has no TCP rules: the seccomp filter alone refuses inet sockets", abi))
	}
	if abi < 6 {
		out = append(out, fmt.Sprintf("Landlock ABI %d < 6: signals to processes outside the sandbox (the same user's) are not stopped", abi))
	}
	return out
}

// ProxyLimits lists, one sentence each, what the network allow list
// (Policy.Proxy) does not stop under layers (none: mode off) on a kernel
// of Landlock ABI abi: run.started and `runner policy check` add them
// to Limits when the spec has sandbox.network.allow.
func ProxyLimits(layers []Layer, abi int) []string {
	out := []string{
		"network allow list: the proxy judges the host name and port a client asks for (the CONNECT line, the URL); it does not look inside TLS, so an allowed host is reached for whatever it serves (an allowed code host takes uploads too)",
		"network allow list: only clients that honour HTTP_PROXY/HTTPS_PROXY get out, and names are resolved by the proxy (no DNS from commands)",
	}
	if len(layers) == 0 {
		return append(out, "network allow list with mode off: the proxy variables are set, nothing enforces them: commands connect anywhere directly")
	}
	if slices.Contains(layers, LayerNamespaces) {
		return out
	}
	out = append(out, "network allow list under Landlock only: TCP connect is allowed to the port of the runner's forwarder on any address "+
		"(Landlock's TCP rules know ports, not addresses): a host elsewhere that listens on that port is reached directly; UDP, raw and other ports stay refused")
	if abi < 9 {
		out = append(out, fmt.Sprintf("network allow list under Landlock only, ABI %d < 9: connect(2) cannot stay refused (TCP needs it), so the machine's unix sockets "+
			"(a session bus, Docker's) are reachable, as with network: allow; use namespaces or network: deny where that matters", abi))
	}
	return out
}

// HostSetupEnv names the environment variable through which the machine's
// set-up (the GitHub Action's AppArmor step, scripts/apparmor-userns.sh)
// says what it did for the sandbox; run.started records it.
const HostSetupEnv = "RUNNER_SANDBOX_HOST_SETUP"

// LayersEnv names the environment variable of the runner that pins the
// layers ("landlock", "namespaces" or "namespaces,landlock"), e.g. to try
// on a machine with user namespaces what GitHub's ubuntu-24.04 runners
// get (Landlock only).
const LayersEnv = "RUNNER_SANDBOX_LAYERS"

// ParseLayers reads a LayersEnv value: comma-separated layer names; ""
// is nil (every available layer). An unknown name is an error that says
// which names there are.
func ParseLayers(s string) ([]Layer, error) {
	if s == "" {
		return nil, nil
	}
	var out []Layer
	for _, name := range strings.Split(s, ",") {
		l := Layer(strings.TrimSpace(name))
		if !slices.Contains(AllLayers(), l) {
			return nil, fmt.Errorf("%s=%q: unknown layer %q (use namespaces, landlock or namespaces,landlock; unset it for every available layer)", LayersEnv, s, l)
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out, nil
}

// ChooseLayers is the layers a sandbox of mode with the pinned layers
// (nil: every available one) would use on this machine, or ErrUnavailable
// (wrapped) when required, or a pinned layer, cannot be met.
func ChooseLayers(mode Mode, pinned []Layer) ([]Layer, error) {
	return chooseLayers(mode, pinned, Probe())
}
