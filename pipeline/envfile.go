package pipeline

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/internal/safefs"

	"github.com/seed43ef5acb/runner/secret"
)

// envFileMax bounds the size of a protected file read for its values (16 MiB).
const envFileMax = 16 << 20

// envFileSecrets reads the protected .env* files (those the read rules
// deny: the sandbox hides them) and returns the values that are secrets by
// the one rule (secret.IsName of the key, or secret.IsValue): the
// redactor then blanks them in every log and the secret gate fails a
// patch that carries one, whoever copied it there (a command with the
// sandbox off, a layer that does not hide it). Lines are KEY=VALUE, with
// an optional "export " and quotes; other lines are skipped. Files that
// cannot be read give nothing, as do symlinks and FIFOs (read through
// internal/safefs: a command may have planted one) and files over
// envFileMax.
// Paths below root's directory are resolved from it.
func envFileSecrets(root *safefs.Root, paths []string) []string {
	var out []string
	for _, p := range paths {
		from, rel := safefs.New(filepath.Dir(p)), filepath.Base(p)
		if r, err := filepath.Rel(root.Dir(), p); err == nil && filepath.IsLocal(r) {
			from, rel = root, r
		}
		data, err := from.ReadFile(rel, envFileMax)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			key, val, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
			if !ok {
				continue
			}
			val = strings.TrimSpace(val)
			if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
				val = val[1 : len(val)-1]
			}
			if len(val) >= secret.MinLen && (secret.IsName(strings.TrimSpace(key)) || secret.IsValue(val)) {
				out = append(out, val)
			}
		}
	}
	return out
}
