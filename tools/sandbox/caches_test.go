package sandbox

import (
	"slices"
	"testing"
)

// TestToolCaches: the toolchains' caches keep their places outside the
// sandbox's private $HOME when the environment does not name them, a cache
// the tool writes only where the sandbox lets commands write it; a value
// the environment gives is left alone.
func TestToolCaches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		env      []string
		writable []string
		want     []string
	}{
		{"defaults under HOME", []string{"HOME=/home/u"}, []string{"/home/u/.cache/go-build"},
			[]string{"GOCACHE=/home/u/.cache/go-build", "GOMODCACHE=/home/u/go/pkg/mod", "RUSTUP_HOME=/home/u/.rustup"}},
		{"XDG_CACHE_HOME wins", []string{"HOME=/home/u", "XDG_CACHE_HOME=/c"}, []string{"/c/go-build", "/c/pip"},
			[]string{"GOCACHE=/c/go-build", "GOMODCACHE=/home/u/go/pkg/mod", "PIP_CACHE_DIR=/c/pip", "RUSTUP_HOME=/home/u/.rustup"}},
		{"the whole cache dir writable", []string{"HOME=/home/u", "XDG_CACHE_HOME=/c"}, []string{"/c"},
			[]string{"GOCACHE=/c/go-build", "GOMODCACHE=/home/u/go/pkg/mod", "PIP_CACHE_DIR=/c/pip",
				"YARN_CACHE_FOLDER=/c/yarn", "RUSTUP_HOME=/home/u/.rustup"}},
		{"npm and cargo", []string{"HOME=/home/u"}, []string{"/home/u/.npm", "/home/u/.cargo"},
			[]string{"GOMODCACHE=/home/u/go/pkg/mod", "npm_config_cache=/home/u/.npm", "CARGO_HOME=/home/u/.cargo", "RUSTUP_HOME=/home/u/.rustup"}},
		{"cache not writable: the tool keeps its private one", []string{"HOME=/home/u"}, nil,
			[]string{"GOMODCACHE=/home/u/go/pkg/mod", "RUSTUP_HOME=/home/u/.rustup"}},
		{"GOPATH's first entry", []string{"HOME=/home/u", "GOPATH=/gp:/other"}, nil,
			[]string{"GOMODCACHE=/gp/pkg/mod", "RUSTUP_HOME=/home/u/.rustup"}},
		{"given values stay", []string{"HOME=/home/u", "GOCACHE=/x", "GOMODCACHE=/m", "NPM_CONFIG_CACHE=/n", "RUSTUP_HOME=/r"},
			[]string{"/home/u/.cache/go-build", "/home/u/.npm"}, nil},
		{"no HOME", nil, nil, nil},
	}
	for _, c := range cases {
		if got := toolCaches(c.env, c.writable); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestResolveCache: a writable path naming a tool's default cache means
// that tool's cache where the environment puts it, as the tool finds it.
func TestResolveCache(t *testing.T) {
	t.Parallel()
	cases := []struct {
		p    string
		env  map[string]string
		want string
	}{
		{"/home/u/.cache/go-build", nil, "/home/u/.cache/go-build"},
		{"/home/u/.cache/go-build", map[string]string{"XDG_CACHE_HOME": "/c"}, "/c/go-build"},
		{"/home/u/.cache/go-build", map[string]string{"XDG_CACHE_HOME": "/c", "GOCACHE": "/g"}, "/g"},
		{"/home/u/.cache/go-build", map[string]string{"XDG_CACHE_HOME": "relative"}, "/home/u/.cache/go-build"},
		{"/home/u/go/pkg/mod", map[string]string{"GOMODCACHE": "/m"}, "/m"},
		{"/home/u/go/pkg/mod", map[string]string{"GOPATH": "/gp:/x"}, "/gp/pkg/mod"},
		{"/home/u/.npm", map[string]string{"npm_config_cache": "/n/"}, "/n"},
		{"/home/u/.cache/pip", map[string]string{"PIP_CACHE_DIR": "/p"}, "/p"},
		{"/home/u/.cargo", map[string]string{"CARGO_HOME": "/cargo"}, "/cargo"},
		{"/home/u/.cache/some-tool", map[string]string{"XDG_CACHE_HOME": "/c"}, "/c/some-tool"},
		{"/home/u/.cache", map[string]string{"XDG_CACHE_HOME": "/c"}, "/c"},
		{"/home/u/.cachex", map[string]string{"XDG_CACHE_HOME": "/c"}, "/home/u/.cachex"},
		{"/opt/cache", map[string]string{"XDG_CACHE_HOME": "/c", "GOCACHE": "/g"}, "/opt/cache"},
	}
	for _, c := range cases {
		env := map[string]string{"HOME": "/home/u"}
		for k, v := range c.env {
			env[k] = v
		}
		if got := ResolveCache(c.p, func(k string) string { return env[k] }); got != c.want {
			t.Errorf("ResolveCache(%s, %v) = %s, want %s", c.p, c.env, got, c.want)
		}
	}
}
