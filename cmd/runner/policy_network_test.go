package main

import (
	"slices"
	"strings"
	"testing"

	taskspec "github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestSandboxLineAllowList: policy check names the allow list and what
// it does not stop under the layers pinned; Landlock only says its port
// and (below ABI 9) unix socket gaps, namespaces do not; mode off says
// nothing enforces it.
func TestSandboxLineAllowList(t *testing.T) {
	sec := taskspec.Sandbox{Allow: []string{"proxy.golang.org", "*.npmjs.org"}}
	sup := sandbox.Probe()
	for _, pin := range []string{"namespaces", "landlock"} {
		if !slices.Contains(sup.Available(), sandbox.Layer(pin)) {
			t.Logf("layer %s is not available here: %s", pin, sup.Missing())
			continue
		}
		line := sandboxFor(sec, pin).Text()
		if !strings.Contains(line, "network: allow list through the runner's proxy: proxy.golang.org, *.npmjs.org") ||
			!strings.Contains(line, "not stopped here: network allow list: the proxy judges the host name and port") {
			t.Errorf("%s: %s", pin, line)
		}
		port := strings.Contains(line, "TCP connect is allowed to the port of the runner's forwarder on any address")
		unixSockets := strings.Contains(line, "the machine's unix sockets")
		if port != (pin == "landlock") || unixSockets != (pin == "landlock" && sup.LandlockABI < 9) {
			t.Errorf("%s (ABI %d): port gap said %v, unix socket gap said %v:\n%s", pin, sup.LandlockABI, port, unixSockets, line)
		}
	}
	off := sandboxFor(taskspec.Sandbox{Mode: sandbox.ModeOff, Allow: sec.Allow}, "").Text()
	if !strings.Contains(off, "network allow list not enforced") || !strings.Contains(off, "nothing enforces them") {
		t.Errorf("off: %s", off)
	}
}
