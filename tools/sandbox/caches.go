package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// A toolCache is a cache directory a toolchain finds from its environment.
// The sandbox gives commands a private $HOME, so a tool whose variable is
// unset would look under that empty home: every build starts cold and
// nothing is found offline.
type toolCache struct {
	// vars name the directory, the first set one wins (npm reads its
	// config variables in either case).
	vars []string
	// def is where the tool looks when no var is set, from get (HOME,
	// XDG_CACHE_HOME, GOPATH); "" when it cannot say.
	def func(get func(string) string) string
	// write: the tool fails on a read-only cache (Go refuses one), so the
	// sandbox names it only when sandbox.writable opens it. Others are
	// named always: reading a module or registry cache needs no write.
	write bool
}

// caches are the toolchains' caches, found as each tool finds them on
// Linux: cmd/go (os.UserCacheDir, go/build's GOPATH), npm, pip (platformdirs),
// yarn v1, cargo and rustup.
var caches = []toolCache{
	{vars: []string{"GOCACHE"}, def: xdgCache("go-build"), write: true},
	{vars: []string{"GOMODCACHE"}, def: func(get func(string) string) string {
		gopath := get("GOPATH")
		if gopath == "" {
			if gopath = homeDir(get, "go"); gopath == "" {
				return ""
			}
		}
		first, _, _ := strings.Cut(gopath, string(filepath.ListSeparator))
		return filepath.Join(first, "pkg", "mod")
	}},
	{vars: []string{"npm_config_cache", "NPM_CONFIG_CACHE"}, def: home(".npm"), write: true},
	{vars: []string{"PIP_CACHE_DIR"}, def: xdgCache("pip"), write: true},
	{vars: []string{"YARN_CACHE_FOLDER"}, def: xdgCache("yarn"), write: true},
	{vars: []string{"CARGO_HOME"}, def: home(".cargo"), write: true}, // its package cache lock
	{vars: []string{"RUSTUP_HOME"}, def: home(".rustup")},            // rustup's proxies find the toolchains there
}

// xdgCache is a cache named name in the XDG cache directory:
// $XDG_CACHE_HOME when it is an absolute path, else ~/.cache.
func xdgCache(name string) func(func(string) string) string {
	return func(get func(string) string) string {
		if x := get("XDG_CACHE_HOME"); filepath.IsAbs(x) {
			return filepath.Join(x, name)
		}
		return homeDir(get, ".cache", name)
	}
}

// home is a directory below $HOME.
func home(rel string) func(func(string) string) string {
	return func(get func(string) string) string { return homeDir(get, rel) }
}

// homeDir joins $HOME and elem ("" when HOME is not an absolute path).
func homeDir(get func(string) string, elem ...string) string {
	h := get("HOME")
	if !filepath.IsAbs(h) {
		return ""
	}
	return filepath.Join(append([]string{h}, elem...)...)
}

// where is the directory c's tool uses under get: its variable's value
// when one is set, else its default.
func (c toolCache) where(get func(string) string) string {
	for _, v := range c.vars {
		if d := get(v); d != "" {
			return filepath.Clean(d)
		}
	}
	return c.def(get)
}

// ResolveCache is the directory a writable path p means under getenv (the
// runner's environment), found as the tools find their caches:
//   - a tool's default cache (~/.cache/go-build, ~/.npm, ~/go/pkg/mod) is
//     that tool's cache wherever its variables put it ($GOCACHE,
//     $XDG_CACHE_HOME/go-build);
//   - any other path below ~/.cache is below $XDG_CACHE_HOME when set,
//     where every tool following the XDG base directories looks.
//
// Any other p is returned as is.
func ResolveCache(p string, getenv func(string) string) string {
	p = filepath.Clean(p)
	bare := func(name string) string { // the environment with only HOME
		if name == "HOME" {
			return getenv("HOME")
		}
		return ""
	}
	for _, c := range caches {
		if d := c.def(bare); d != "" && d == p {
			if w := c.where(getenv); w != "" {
				return w
			}
			return p
		}
	}
	x := getenv("XDG_CACHE_HOME")
	if base := homeDir(bare, ".cache"); base != "" && filepath.IsAbs(x) && within(p, base) {
		return filepath.Join(x, strings.TrimPrefix(p, base))
	}
	return p
}

// toolCaches are the variables to add to env so that each tool's cache
// keeps its place outside the sandbox: for each cache none of whose
// variables env sets, its default computed from env's HOME and
// XDG_CACHE_HOME (or GOPATH), when the tool can use it there (a cache the
// tool writes only where writable opens it).
func toolCaches(env, writable []string) []string {
	get := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
	var out []string
	for _, c := range caches {
		if slices.ContainsFunc(c.vars, func(v string) bool { return get(v) != "" }) {
			continue // named by the environment: the tool finds it there
		}
		dir := c.def(get)
		if dir == "" || c.write && !writableAt(dir, writable) {
			continue
		}
		out = append(out, c.vars[0]+"="+dir)
	}
	return out
}

// writableAt reports whether dir is, or is below, a writable directory.
func writableAt(dir string, writable []string) bool {
	for _, w := range writable {
		if within(dir, filepath.Clean(w)) {
			return true
		}
	}
	return false
}
