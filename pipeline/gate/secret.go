package gate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// Secret is the secret gate. It searches the patch and the files it adds or changes for
// secrets (the redactor's: values of secret-looking environment
// variables, the provider key, the protected .env files' values, token
// shapes). The patch's text shows a text file's secret; a binary file (a
// GIT binary patch is deflated and base85) or one left out of the patch
// (over the binary patch limit) shows it only in the work tree, so each
// changed file is read there too (fileHoldsSecret). A secret fails the
// run; the patch file is written redacted, and the sections of files
// whose secret the text does not show are left out of it (with a note),
// so it carries the secret in no form; the failure's Paths name every
// such file (batch does not save them). Memory is bounded: the patch is
// read a line at a time, the files in windows.
type Secret struct {
	WorkTree  string
	PatchPath string                // the patch file, rewritten redacted on a failure
	Files     []snapshot.FileChange // the patch's files
	Redactor  *event.Redactor       // what a secret is; nil: the gate passes
	// Protected reports a protected file (by device and inode) that a
	// command gave another name, a hard link or a rename (Landlock only
	// lets it): its content is left out of the patch whole. nil: none.
	Protected func(dev, ino uint64) bool
}

// Check runs the secret gate.
func (g Secret) Check() (event.GateFailed, bool) {
	if g.Redactor == nil {
		return event.GateFailed{}, false
	}
	files, found, err := scanPatchSecrets(g.PatchPath, g.Redactor, "", nil)
	if err != nil {
		return event.GateFailed{}, false
	}
	var hidden []string // secrets the patch's text does not show
	for _, p := range g.secretFiles() {
		if !slices.Contains(files, p) {
			hidden = append(hidden, p)
			files = append(files, p)
		}
	}
	protected := g.protectedFiles()
	for _, p := range protected { // left out whole: no redactor knows all its values
		if !slices.Contains(hidden, p) {
			hidden = append(hidden, p)
		}
		if !slices.Contains(files, p) {
			files = append(files, p)
		}
	}
	if !found && len(hidden) == 0 {
		return event.GateFailed{}, false
	}
	tmp := g.PatchPath + ".redacted"
	if _, _, err := scanPatchSecrets(g.PatchPath, g.Redactor, tmp, hidden); err == nil {
		_ = os.Rename(tmp, g.PatchPath)
	} else {
		_ = os.Truncate(g.PatchPath, 0) // it must not carry the secret
	}
	_ = os.Remove(tmp)
	slices.Sort(files)
	msg := "the patch holds a secret" + inFiles(files) + " (an environment value or a token shape); the patch file is written redacted and nothing is published"
	if len(hidden) > 0 {
		msg = "the changed files hold a secret" + inFiles(files) + " (an environment value or a token shape; in " + namePaths(hidden) +
			" not visible in the patch's text: binary or left out); the patch file is written redacted without them and nothing is published"
	}
	if len(protected) > 0 {
		msg += "; " + namePaths(protected) + " is a protected file the read rules deny (such as .env) under another name, a command's hard link or rename"
	}
	return event.GateFailed{Gate: event.GateSecret, Paths: files, Message: msg}, true
}

// protectedFiles are the patch's added or changed files that Protected
// names: a protected file under another name.
func (g Secret) protectedFiles() []string {
	if g.Protected == nil {
		return nil
	}
	var out []string
	for _, f := range g.Files {
		if f.Status == event.ChangeDeleted {
			continue
		}
		fi, err := os.Lstat(filepath.Join(g.WorkTree, filepath.FromSlash(f.Path)))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && g.Protected(uint64(st.Dev), st.Ino) { //nolint:unconvert // Dev is uint32 on some platforms
			out = append(out, f.Path)
		}
	}
	return out
}

// MaxNamedPaths bounds the paths a gate's message names; the event's
// paths list them all.
const MaxNamedPaths = 5

// namePaths joins paths with ", ", the first MaxNamedPaths of them and
// "and N more".
func namePaths(paths []string) string {
	if len(paths) <= MaxNamedPaths {
		return strings.Join(paths, ", ")
	}
	return strings.Join(paths[:MaxNamedPaths], ", ") + fmt.Sprintf(" and %d more", len(paths)-MaxNamedPaths)
}

// inFiles is " in a.py, b.py" for the files named, "" for none (a
// secret in a patch line outside any file's section).
func inFiles(files []string) string {
	if len(files) == 0 {
		return ""
	}
	return " in " + namePaths(files)
}

// secretFiles lists the files (work-tree-relative slash paths) the final
// patch adds or changes whose content in the work tree holds a secret.
// Symlinks are not followed (their target is the patch's text).
func (g Secret) secretFiles() []string {
	var out []string
	for _, f := range g.Files {
		if f.Status == event.ChangeDeleted || snapshot.NotRead(f.Omitted) {
			continue // a file over the snapshot's read limit is not in the patch, and the run fails for it
		}
		p := filepath.Join(g.WorkTree, filepath.FromSlash(f.Path))
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if ok, err := fileHoldsSecret(p, g.Redactor); ok || err != nil && !errors.Is(err, fs.ErrNotExist) {
			out = append(out, f.Path) // one that cannot be read is not known to be clean
		}
	}
	return out
}

// Windows fileHoldsSecret reads: secretWindow bytes, each overlapping the
// one before by secretOverlap, so a secret up to secretOverlap bytes long
// lies whole in one of them.
const (
	secretWindow  = 1 << 20
	secretOverlap = 64 << 10
)

// fileHoldsSecret reports whether the file at path holds a secret of red,
// reading it in overlapping windows (memory: one window).
func fileHoldsSecret(path string, red *event.Redactor) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, secretWindow)
	keep := 0 // bytes of the previous window carried over
	for {
		n, rerr := io.ReadFull(f, buf[keep:])
		w := buf[:keep+n]
		if !bytes.Equal(red.RedactBytes(w), w) {
			return true, nil
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			return false, nil
		}
		if rerr != nil {
			return false, rerr
		}
		keep = copy(buf, w[len(w)-secretOverlap:])
	}
}

// scanPatchSecrets reads the patch at path line by line, reports whether
// it holds a secret and returns the files (the "b/" path of their
// "diff --git" line) whose sections hold one, each once. With to set it
// also writes the patch redacted there, the sections of the files in drop
// replaced by a line saying why. Memory is bounded by the longest line.
func scanPatchSecrets(path string, red *event.Redactor, to string, drop []string) (files []string, found bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	var w *bufio.Writer
	if to != "" {
		out, err := os.Create(to)
		if err != nil {
			return nil, false, err
		}
		defer out.Close()
		w = bufio.NewWriterSize(out, 64<<10)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	file, dropping := "", false
	for {
		line, rerr := br.ReadBytes('\n')
		if rest, ok := bytes.CutPrefix(line, []byte("diff --git ")); ok {
			file = ""
			if _, b, ok := bytes.Cut(bytes.TrimRight(rest, "\n"), []byte(" b/")); ok {
				file = string(b)
			}
			if dropping = slices.Contains(drop, file); dropping && w != nil {
				_, _ = w.WriteString("# runner: " + file + " is left out: it holds a secret\n")
			}
		}
		redacted := red.RedactBytes(line)
		if !bytes.Equal(redacted, line) {
			found = true
			if file != "" && !slices.Contains(files, file) {
				files = append(files, file)
			}
		}
		if w != nil && !dropping {
			if _, err := w.Write(redacted); err != nil {
				return files, found, err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return files, found, rerr
		}
	}
	if w != nil {
		return files, found, w.Flush()
	}
	return files, found, nil
}
