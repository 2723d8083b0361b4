package snapshot

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/config"
)

// userRepo locates the user's repository around the work tree. Everything
// in it is only ever opened for reading.
type userRepo struct {
	root      string // top-level directory of the repository
	prefix    string // work tree relative to root: "" or "sub/dir/"
	gitDir    string // the .git directory (a gitfile followed)
	commonDir string // objects, info/exclude and config live here
}

// findRepo walks up from workTree to the first directory holding a .git
// entry. It returns nil, nil when there is none.
func findRepo(workTree string) (*userRepo, error) {
	dir := workTree
	for {
		gitDir, err := resolveDotGit(filepath.Join(dir, ".git"))
		if err != nil {
			return nil, err
		}
		if gitDir != "" {
			r := &userRepo{root: dir, gitDir: gitDir, commonDir: gitDir}
			if rel, err := filepath.Rel(dir, workTree); err == nil && rel != "." {
				r.prefix = filepath.ToSlash(rel) + "/"
			}
			if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
				c := strings.TrimSpace(string(b))
				if !filepath.IsAbs(c) {
					c = filepath.Join(gitDir, c)
				}
				r.commonDir = filepath.Clean(c)
			}
			return r, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, nil
		}
		dir = parent
	}
}

// resolveDotGit returns the git directory that the .git entry p names: p
// itself when it is a directory holding HEAD, the target of a "gitdir:"
// file, or "" when p is missing or not a repository.
func resolveDotGit(p string) (string, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		if os.IsNotExist(err) || os.IsPermission(err) {
			return "", nil
		}
		return "", fmt.Errorf("stat %s: %w", p, err)
	}
	dir := p
	if fi.Mode().IsRegular() {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("read gitfile %s: %w", p, err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		d, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return "", nil
		}
		dir = strings.TrimSpace(d)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(p), dir)
		}
	} else if !fi.IsDir() {
		return "", nil
	}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return "", nil
	}
	return filepath.Clean(dir), nil
}

// gitConfig holds the few settings snapshots depend on.
type gitConfig struct {
	excludesFile   string // core.excludesFile, "~/" expanded
	attributesFile string // core.attributesFile
	autocrlf       string // core.autocrlf, lower case
}

// loadConfig reads git's configuration files in git's order (system,
// XDG, ~/.gitconfig, repository, worktree), later values winning.
// [include] directives are not followed.
func loadConfig(env func(string) string, repo *userRepo) gitConfig {
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
		files = append(files, filepath.Join(repo.commonDir, "config"), filepath.Join(repo.gitDir, "config.worktree"))
	}
	var c gitConfig
	for _, f := range files {
		c.merge(f, env)
	}
	if c.excludesFile == "" {
		if x := xdgConfigHome(env); x != "" {
			c.excludesFile = filepath.Join(x, "git", "ignore")
		}
	}
	if c.attributesFile == "" {
		if x := xdgConfigHome(env); x != "" {
			c.attributesFile = filepath.Join(x, "git", "attributes")
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

func (c *gitConfig) merge(file string, env func(string) string) {
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
				c.excludesFile = expandHome(o.Value, env)
			case o.IsKey("attributesfile"):
				c.attributesFile = expandHome(o.Value, env)
			case o.IsKey("autocrlf"):
				c.autocrlf = strings.ToLower(o.Value)
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

// attributesFilter reports whether an attributes file sets any content
// filter, so that index hashes cannot stand for the files on disk.
func attributesFilter(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		for _, attr := range fields[1:] {
			if strings.HasPrefix(attr, "-") || strings.HasPrefix(attr, "!") {
				continue
			}
			name, _, _ := strings.Cut(attr, "=")
			if isFilterAttr(name) {
				return true
			}
		}
	}
	return false
}

// isFilterAttr reports whether a .gitattributes attribute makes the index
// hold content other than the bytes on disk.
func isFilterAttr(name string) bool {
	switch name {
	case "text", "eol", "filter", "crlf", "ident", "working-tree-encoding":
		return true
	}
	return false
}
