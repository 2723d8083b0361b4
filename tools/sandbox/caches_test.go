package sandbox

import (
	"slices"
	"testing"
)

// TestToolCaches: Go's caches keep their places outside the sandbox's
// private $HOME when the environment does not name them, GOCACHE only
// where the sandbox lets commands write it; a value the environment gives
// is left alone.
func TestToolCaches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		env      []string
		writable []string
		want     []string
	}{
		{"defaults under HOME", []string{"HOME=/home/u"}, []string{"/home/u/.cache/go-build"},
			[]string{"GOCACHE=/home/u/.cache/go-build", "GOMODCACHE=/home/u/go/pkg/mod"}},
		{"XDG_CACHE_HOME wins", []string{"HOME=/home/u", "XDG_CACHE_HOME=/c"}, []string{"/c/go-build"},
			[]string{"GOCACHE=/c/go-build", "GOMODCACHE=/home/u/go/pkg/mod"}},
		{"cache not writable: Go keeps its private one", []string{"HOME=/home/u"}, nil,
			[]string{"GOMODCACHE=/home/u/go/pkg/mod"}},
		{"GOPATH's first entry", []string{"HOME=/home/u", "GOPATH=/gp:/other"}, nil,
			[]string{"GOMODCACHE=/gp/pkg/mod"}},
		{"given values stay", []string{"HOME=/home/u", "GOCACHE=/x", "GOMODCACHE=/m"}, []string{"/home/u/.cache/go-build"}, nil},
		{"no HOME", nil, nil, nil},
	}
	for _, c := range cases {
		if got := toolCaches(c.env, c.writable); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
