package gitignore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/config"
)

// Config holds the few git settings that ignore rules and snapshots depend
// on.
type Config struct {
	ExcludesFile   string // core.excludesFile, "~/" expanded
	AttributesFile string // core.attributesFile
	Autocrlf       string // core.autocrlf, lower case
}

// LoadConfig reads the core settings from git's configuration files in git's order (system,
// XDG, ~/.gitconfig, repository, worktree), later values winning.
// [include] directives are not followed. env looks up HOME,
// XDG_CONFIG_HOME, GIT_CONFIG_NOSYSTEM and GIT_CONFIG_GLOBAL; repo may be
// nil. Unreadable or malformed files are skipped, as they are hints.
func LoadConfig(env func(string) string, repo *Repo) Config {
	var files, global []string
	if env("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, "/etc/gitconfig")
	}
	if x := xdgConfigHome(env); x != "" {
		global = append(global, filepath.Join(x, "git", "config"))
	}
	if h := env("HOME"); h != "" {
		global = append(global, filepath.Join(h, ".gitconfig"))
	}
	if g := env("GIT_CONFIG_GLOBAL"); g != "" {
		global = []string{g}
	}
	files = append(files, global...)
	if repo != nil {
		files = append(files, filepath.Join(repo.CommonDir, "config"), filepath.Join(repo.GitDir, "config.worktree"))
	}
	var c Config
	for _, f := range files {
		c.merge(f, env)
	}
	if c.ExcludesFile == "" {
		if x := xdgConfigHome(env); x != "" {
			c.ExcludesFile = filepath.Join(x, "git", "ignore")
		}
	}
	if c.AttributesFile == "" {
		if x := xdgConfigHome(env); x != "" {
			c.AttributesFile = filepath.Join(x, "git", "attributes")
		}
	}
	return c
}

func xdgConfigHome(env func(string) string) string {
	if x := env("XDG_CONFIG_HOME"); x != "" {
		return x
	}
	if h := env("HOME"); h != "" {
		return filepath.Join(h, ".config")
	}
	return ""
}

func (c *Config) merge(file string, env func(string) string) {
	b, err := os.ReadFile(file)
	if err != nil {
		return
	}
	cfg := config.New()
	if err := config.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
		return
	}
	for _, s := range cfg.Sections {
		if !s.IsName("core") {
			continue
		}
		for _, o := range s.Options {
			switch {
			case o.IsKey("excludesfile"):
				c.ExcludesFile = expandHome(o.Value, env)
			case o.IsKey("attributesfile"):
				c.AttributesFile = expandHome(o.Value, env)
			case o.IsKey("autocrlf"):
				c.Autocrlf = strings.ToLower(o.Value)
			}
		}
	}
}

func expandHome(p string, env func(string) string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(env("HOME"), rest)
	}
	return p
}
