package sandbox

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestChooseLayers: what each mode does with what a machine offers,
// including machines this one is not (no user namespaces, no Landlock).
func TestChooseLayers(t *testing.T) {
	noNS := errors.New("setting up uid map: permission denied")
	noLL := errors.New("the kernel has no Landlock")
	all := Support{}
	landlockOnly := Support{Namespaces: noNS}
	none := Support{Namespaces: noNS, Landlock: noLL}
	tests := []struct {
		name   string
		mode   Mode
		pinned []Layer
		sup    Support
		want   []Layer
		err    string
	}{
		{"auto all", ModeAuto, nil, all, []Layer{LayerNamespaces, LayerLandlock}, ""},
		{"auto github ubuntu", ModeAuto, nil, landlockOnly, []Layer{LayerLandlock}, ""},
		{"auto none", ModeAuto, nil, none, nil, ""},
		{"required all", ModeRequired, nil, all, []Layer{LayerNamespaces, LayerLandlock}, ""},
		{"required landlock only", ModeRequired, nil, landlockOnly, nil, "uid map: permission denied"},
		{"off", ModeOff, nil, none, nil, ""},
		{"pinned missing", ModeAuto, []Layer{LayerNamespaces}, landlockOnly, nil, "layer namespaces was asked for"},
	}
	for _, tt := range tests {
		got, err := chooseLayers(tt.mode, tt.pinned, tt.sup)
		if tt.err != "" {
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err = %v, want ErrUnavailable mentioning %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

// TestComputeCovers: a hidden directory holding a kept path is replaced by
// its other children; a hidden path equal to a kept one is not hidden.
func TestComputeCovers(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".ssh", ".cache/go-build", ".cache/pip", "work/tree"} {
		mkdirAll(t, home+"/"+d)
	}
	got := computeCovers([]string{home, home + "/work/tree", home + "/missing"}, []string{home + "/.cache/go-build", home + "/work/tree"})
	var paths []string
	for _, c := range got {
		paths = append(paths, strings.TrimPrefix(c.Path, home))
	}
	want := []string{"/.cache/pip", "/.ssh"}
	if !slices.Equal(paths, want) {
		t.Errorf("covers %v, want %v", paths, want)
	}
}

func mkdirAll(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestLimits: what each layer set does not stop is said, and what the
// kernel's Landlock ABI lacks is said only where it lacks it.
func TestLimits(t *testing.T) {
	has := func(ls []string, prefix string) bool {
		return slices.ContainsFunc(ls, func(s string) bool { return strings.HasPrefix(s, prefix) })
	}
	ll := []Layer{LayerLandlock}
	if got := Limits(nil, false, 7, []string{"/c"}); got != nil {
		t.Errorf("no layer: %q, want nil (Describe says it)", got)
	}
	got := Limits(ll, false, 3, []string{"/cache"})
	for _, want := range []string{"/cache is writable and shared", ".git is writable", "the machine's processes", "Landlock ABI 3 < 4", "Landlock ABI 3 < 6"} {
		if !has(got, want) {
			t.Errorf("landlock ABI 3: %q lacks %q", got, want)
		}
	}
	if has(got, "Landlock ABI 3 < 3") {
		t.Errorf("landlock ABI 3: %q says truncate is missing", got)
	}
	if got := Limits(ll, false, 7, nil); has(got, "Landlock ABI") {
		t.Errorf("landlock ABI 7: %q names an ABI gap", got)
	}
	if got := Limits(ll, false, 2, nil); !has(got, "Landlock ABI 2 < 3: truncate") {
		t.Errorf("landlock ABI 2: %q does not say truncate", got)
	}
	ns := Limits([]Layer{LayerNamespaces, LayerLandlock}, true, 1, nil)
	if has(ns, ".git") || has(ns, "Landlock ABI") || !has(ns, "network: allow") || !has(ns, "a unix socket bound after") {
		t.Errorf("namespaces+landlock with network: %q", ns)
	}
}

// TestParseLayers: the pin's names, and the error for an unknown one.
func TestParseLayers(t *testing.T) {
	if got, err := ParseLayers(" landlock , namespaces,landlock"); err != nil || !slices.Equal(got, []Layer{LayerLandlock, LayerNamespaces}) {
		t.Errorf("ParseLayers = %v, %v", got, err)
	}
	if got, err := ParseLayers(""); got != nil || err != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
	if _, err := ParseLayers("bwrap"); err == nil || !strings.Contains(err.Error(), `unknown layer "bwrap"`) {
		t.Errorf("bwrap: %v", err)
	}
}
