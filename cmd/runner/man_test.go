package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
)

// TestManPage: `runner man` writes a roff page naming every visible command
// and its flags, and stays out of --help (the release archives ship it).
func TestManPage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runCLI(context.Background(), []string{"man"}, Streams{Stdout: &stdout, Stderr: &stderr}, nil); code != 0 {
		t.Fatalf("runner man: exit %d, stderr %q", code, stderr.String())
	}
	page := stdout.String()
	if !strings.HasPrefix(page, ".TH RUNNER 1 ") {
		t.Errorf("man page starts %q, want a .TH header for runner(1)", page[:min(len(page), 40)])
	}
	for _, want := range []string{".SH NAME", ".SH COMMANDS", ".SH EXIT STATUS", `\fBexec <TASK\&.yaml>`,
		`batch run`, `batch merge`, `github finalize`, `\fB--max-steps=N\fP`, `\fB--shard=`} {
		if !strings.Contains(page, want) {
			t.Errorf("man page lacks %q", want)
		}
	}
	if strings.Contains(page, "\\fBman ") {
		t.Errorf("the man page lists the hidden man command")
	}

	var help bytes.Buffer
	runCLI(context.Background(), []string{"--help"}, Streams{Stdout: &help, Stderr: &stderr}, nil)
	if strings.Contains(help.String(), " man ") || strings.Contains(help.String(), "\n  man") {
		t.Errorf("--help lists the hidden man command:\n%s", help.String())
	}

	// groff, where installed, reads the page without a warning.
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Log("groff is not installed: the page's roff is not rendered")
		return
	}
	cmd := exec.CommandContext(t.Context(), groff, "-man", "-Tutf8", "-ww", "-z")
	cmd.Stdin = strings.NewReader(page)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww: %v\n%s", err, out)
	}
}
