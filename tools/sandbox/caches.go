package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// toolCaches keeps the toolchains' caches where they are outside the
// sandbox: the sandbox gives commands a private $HOME, so a Go command
// without GOCACHE, GOMODCACHE or GOPATH in its environment would look for
// them under that empty home: every build starts cold (minutes on a small
// runner, and past a bash timeout) and no module is found offline. For
// each of those left unset, it names the place the user's own Go uses,
// computed from env's HOME and XDG_CACHE_HOME as cmd/go does on Linux
// (os.UserCacheDir): GOCACHE only when that directory is one the sandbox
// lets commands write (sandbox.writable), since Go refuses a read-only
// build cache; GOMODCACHE always (reading modules needs no write). It
// returns the entries to add.
func toolCaches(env, writable []string) []string {
	get := func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	home, _ := get("HOME")
	var out []string
	if _, set := get("GOCACHE"); !set {
		cache, _ := get("XDG_CACHE_HOME")
		if cache == "" && home != "" {
			cache = filepath.Join(home, ".cache")
		}
		if dir := filepath.Join(cache, "go-build"); cache != "" && slices.Contains(writable, filepath.Clean(dir)) {
			out = append(out, "GOCACHE="+dir)
		}
	}
	_, modSet := get("GOMODCACHE")
	gopath, pathSet := get("GOPATH")
	if !modSet && home != "" {
		if !pathSet || gopath == "" {
			gopath = filepath.Join(home, "go")
		}
		first, _, _ := strings.Cut(gopath, string(filepath.ListSeparator))
		out = append(out, "GOMODCACHE="+filepath.Join(first, "pkg", "mod"))
	}
	return out
}
