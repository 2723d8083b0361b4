package pipeline

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// gitCreds is what the git-credentials stage took out of the work tree's
// git config for the run, and how to put it back.
type gitCreds struct {
	path     string      // the config file
	original []byte      // its content before the run
	filtered []byte      // what the run's commands see
	removed  []byte      // the sections and lines taken out, as config text
	mode     os.FileMode // its permissions
	secrets  []string    // the credential values found (for the redactors)
	includes []string    // files the config included (hidden from commands)
}

// gitConfigPath is the config file of the repository whose work tree is
// dir: .git/config, or the common directory's config of a linked work
// tree or submodule (.git is a file "gitdir: …"). "" when there is none.
func gitConfigPath(dir string) string {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return filepath.Join(dotgit, "config")
	case !fi.Mode().IsRegular():
		return ""
	}
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	if common, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		gitdir = c
	}
	return filepath.Join(gitdir, "config")
}

// sectionHeader matches a config section header and what follows it:
// [name], [name "sub"], [name.sub].
var sectionHeader = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$`)

// configFilter walks a git config file line by line.
type configFilter struct {
	home     string
	dir      string // the config file's directory (relative include paths)
	out      bytes.Buffer
	removed  bytes.Buffer
	secrets  []string
	includes []string

	section, sub string // current section (lower-case) and subsection
	header       string // its header line
	dropSection  bool
	headerOut    bool // the header was written to removed
	dropCont     bool // the previous line continues into this one, and is dropped
}

// filterGitConfig returns text without the credentials git would use:
// the credential, include and includeIf sections, http.*.extraheader,
// url.<base> sections whose base holds credentials, and the credentials
// of URLs in values (remote.*.url). It also returns what it took out.
func filterGitConfig(text []byte, dir, home string) *configFilter {
	f := &configFilter{dir: dir, home: home}
	lines := strings.SplitAfter(string(text), "\n")
	for _, line := range lines {
		if line != "" {
			f.line(line)
		}
	}
	return f
}

func (f *configFilter) line(line string) {
	if f.dropCont {
		f.drop(line)
		f.dropCont = continues(line)
		return
	}
	if m := sectionHeader.FindStringSubmatch(strings.TrimRight(line, "\r\n")); m != nil {
		f.startSection(m[1], m[2], line)
		if rest := strings.TrimSpace(m[3]); rest != "" && !strings.HasPrefix(rest, "#") && !strings.HasPrefix(rest, ";") {
			f.keyLine(rest + "\n") // [core] bare = false: git allows it
		}
		return
	}
	trim := strings.TrimSpace(line)
	if trim == "" || trim[0] == '#' || trim[0] == ';' {
		f.keep(line)
		return
	}
	f.keyLine(line)
}

func (f *configFilter) startSection(name, sub, line string) {
	f.section, f.sub = strings.ToLower(name), sub
	if base, rest, ok := strings.Cut(f.section, "."); ok && sub == "" {
		f.section, f.sub = base, rest
	}
	f.header, f.headerOut = line, false
	switch f.section {
	case "credential", "include", "includeif":
		f.dropSection = true
	case "url":
		f.dropSection = hasURLCredentials(f.sub)
		if f.dropSection {
			f.addURLSecrets(f.sub)
		}
	default:
		f.dropSection = false
	}
	if f.dropSection {
		f.drop("")
		return
	}
	f.keep(line)
}

// keyLine handles a "name = value" line of the current section.
func (f *configFilter) keyLine(line string) {
	name, value, _ := strings.Cut(line, "=")
	name = strings.ToLower(strings.TrimSpace(name))
	value = unquote(strings.TrimSpace(value))
	switch {
	case f.dropSection:
		if name == "path" && (f.section == "include" || f.section == "includeif") {
			f.includes = append(f.includes, f.resolve(value))
		}
		if f.section == "credential" && name == "helper" {
			if p := helperFile(value); p != "" {
				f.includes = append(f.includes, f.resolve(p))
			}
		}
		f.drop(line)
		f.dropCont = continues(line)
	case f.section == "http" && name == "extraheader":
		f.addHeaderSecrets(value)
		f.drop(line)
		f.dropCont = continues(line)
	case hasURLCredentials(value):
		f.addURLSecrets(value)
		f.drop(line)
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		f.keep(indent + strings.TrimSpace(strings.SplitN(line, "=", 2)[0]) + " = " + stripURLCredentials(value) + "\n")
	default:
		f.keep(line)
	}
}

func (f *configFilter) keep(line string) { f.out.WriteString(line) }

// drop records line as removed, under its section's header.
func (f *configFilter) drop(line string) {
	if !f.headerOut {
		f.removed.WriteString(strings.TrimRight(f.header, "\n") + "\n")
		f.headerOut = true
	}
	if line != "" {
		f.removed.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			f.removed.WriteByte('\n')
		}
	}
}

func (f *configFilter) resolve(p string) string {
	switch {
	case strings.HasPrefix(p, "~/") && f.home != "":
		return filepath.Join(f.home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(f.dir, p)
}

// addHeaderSecrets learns an Authorization header's value, its base64
// credentials and, for basic auth, the password alone.
func (f *configFilter) addHeaderSecrets(h string) {
	f.secrets = append(f.secrets, h)
	_, v, ok := strings.Cut(h, ":")
	if !ok {
		return
	}
	fields := strings.Fields(v)
	if len(fields) == 0 {
		return
	}
	cred := fields[len(fields)-1]
	f.secrets = append(f.secrets, cred)
	if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
		f.secrets = append(f.secrets, string(dec))
		if _, pass, ok := strings.Cut(string(dec), ":"); ok {
			f.secrets = append(f.secrets, pass)
		}
	}
}

func (f *configFilter) addURLSecrets(u string) {
	_, rest, _ := strings.Cut(u, "://")
	userinfo, _, _ := strings.Cut(rest, "@")
	user, pass, ok := strings.Cut(userinfo, ":")
	if ok {
		f.secrets = append(f.secrets, pass)
	} else {
		f.secrets = append(f.secrets, user) // https://TOKEN@host
	}
}

// hasURLCredentials reports a URL whose user info is a password or an
// http(s) user (a token standing alone).
func hasURLCredentials(v string) bool {
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok {
		return false
	}
	authority, _, _ := strings.Cut(rest, "/")
	userinfo, _, ok := strings.Cut(authority, "@")
	if !ok || userinfo == "" {
		return false
	}
	scheme = strings.ToLower(scheme)
	return strings.Contains(userinfo, ":") || scheme == "http" || scheme == "https"
}

// stripURLCredentials removes a URL's user info.
func stripURLCredentials(v string) string {
	scheme, rest, _ := strings.Cut(v, "://")
	authority, path, hasPath := strings.Cut(rest, "/")
	if _, host, ok := strings.Cut(authority, "@"); ok {
		authority = host
	}
	if hasPath {
		return scheme + "://" + authority + "/" + path
	}
	return scheme + "://" + authority
}

// helperFile is the --file of a "store" credential helper.
func helperFile(helper string) string {
	fields := strings.Fields(helper)
	for i, fl := range fields {
		if v, ok := strings.CutPrefix(fl, "--file="); ok {
			return v
		}
		if fl == "--file" && i+1 < len(fields) {
			return fields[i+1]
		}
	}
	return ""
}

func continues(line string) bool {
	t := strings.TrimRight(line, "\r\n")
	n := len(t) - len(strings.TrimRight(t, `\`))
	return n%2 == 1
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return v[1 : len(v)-1]
	}
	return v
}

// writeFileAtomic writes data to path through a temporary file beside it.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".runner-config-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
