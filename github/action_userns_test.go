package github

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// usernsScript is the action's AppArmor step script.
func usernsScript(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "scripts", "apparmor-userns.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runUserns runs the script with args and env added; it returns its
// exit code and combined output.
func runUserns(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "bash", append([]string{usernsScript(t)}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// findParser returns apparmor_parser (it lives in /usr/sbin, often not on
// a user's PATH) or "".
func findParser() string {
	if p, err := exec.LookPath("apparmor_parser"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/apparmor_parser", "/sbin/apparmor_parser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// TestUsernsProfileParses checks the profile the action loads with
// apparmor_parser, parse only (-Q: no kernel load, -K: no cache), for
// binary paths with spaces and AppArmor's pattern characters: each names
// that one file, gets "userns," and nothing else, and parses. A parser
// before AppArmor 4.0 (Debian 12: 3.0.8, the newest its apt offers) stops
// at the userns rule with one known syntax error: only then is the rule
// left out, the rest still parsed, and the test skipped saying so.
func TestUsernsProfileParses(t *testing.T) {
	parser := findParser()
	if parser == "" {
		t.Skip("apparmor_parser is not installed (Debian package apparmor; bash .ci/run installs it)")
	}
	ver, _ := exec.CommandContext(t.Context(), parser, "--version").Output()
	m := regexp.MustCompile(`version (\d+)\.`).FindSubmatch(ver)
	major := 0
	if m != nil {
		major, _ = strconv.Atoi(string(m[1]))
	}
	skippedUserns := "" // why the userns rule itself went unchecked
	for _, bin := range []string{
		"/home/runner/work/_temp/runner-bin/runner",
		"/tmp/a dir/with {braces},[class]*?^@/runner",
	} {
		code, prof := runUserns(t, nil, "profile", bin)
		if code != 0 {
			t.Fatalf("profile %q: exit %d\n%s", bin, code, prof)
		}
		attach := regexp.MustCompile(`(?m)^profile runner-userns-[0-9a-f]{12} "(.*)" flags=\(unconfined\) \{\n  userns,\n\}\n\z`).FindStringSubmatch(prof)
		if attach == nil {
			t.Fatalf("profile for %q is not one unconfined profile holding only userns:\n%s", bin, prof)
		}
		if unescaped := regexp.MustCompile(`\\(.)`).ReplaceAllString(attach[1], "$1"); unescaped != bin {
			t.Errorf("the profile attaches to %q, want %q", unescaped, bin)
		}
		f := filepath.Join(t.TempDir(), "profile")
		if err := os.WriteFile(f, []byte(prof), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(t.Context(), parser, "-Q", "-K", f).CombinedOutput()
		if err == nil {
			continue // the whole profile, userns rule and all, parses
		}
		// AppArmor 4.0 (Ubuntu 24.04) brought the userns rule; Debian 12's
		// 3.0.8 stops at it with exactly this syntax error. Only there is
		// the rule left out, and the rest of the profile is still parsed.
		line := strings.Count(prof[:strings.Index(prof, "  userns,\n")], "\n") + 1
		want := fmt.Sprintf("at line %d: syntax error, unexpected TOK_END_OF_RULE, expecting TOK_MODE", line)
		if major >= 4 || !strings.Contains(string(out), want) {
			t.Errorf("apparmor_parser -Q -K refuses the profile for %q: %v\n%s\n%s", bin, err, out, prof)
			continue
		}
		rest := strings.Replace(prof, "  userns,\n", "", 1)
		if err := os.WriteFile(f, []byte(rest), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.CommandContext(t.Context(), parser, "-Q", "-K", f).CombinedOutput(); err != nil {
			t.Errorf("apparmor_parser -Q -K refuses the profile for %q without its userns rule: %v\n%s\n%s", bin, err, out, rest)
		}
		skippedUserns = fmt.Sprintf("%s does not know the userns rule (AppArmor 4.0): it stops at it with %q; "+
			"the rest of each profile parsed", strings.TrimSpace(strings.SplitN(string(ver), "\n", 2)[0]), want)
	}
	if skippedUserns != "" {
		defer t.Skip(skippedUserns)
	}
	for _, bad := range []string{"runner", "/tmp/a\"b/runner", "/tmp/a\nb/runner"} {
		if code, out := runUserns(t, nil, "profile", bad); code != 2 {
			t.Errorf("profile %q: exit %d, want 2 (refused)\n%s", bad, code, out)
		}
	}
}

// TestUsernsLoad runs the load step against fakes of sudo and
// apparmor_parser: where AppArmor restricts user namespaces it installs
// the profile and loads it with apparmor_parser -r, saying so in the log
// and the step output; without sudo, or with a parser that refuses, it
// says the run goes on with Landlock only and still exits 0; without
// the restriction it changes nothing.
func TestUsernsLoad(t *testing.T) {
	bin := "/home/runner/work/_temp/runner-bin/runner"
	fake := func(t *testing.T, sudo, parser string) (env []string, dir, calls string) {
		t.Helper()
		tools, dir := t.TempDir(), t.TempDir()
		calls = filepath.Join(t.TempDir(), "calls")
		sysctl := filepath.Join(t.TempDir(), "restrict")
		if err := os.WriteFile(sysctl, []byte("1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for name, body := range map[string]string{"sudo": sudo, "apparmor_parser": parser} {
			script := "#!/bin/bash\necho \"" + name + " $*\" >> " + strconv.Quote(calls) + "\n" + body + "\n"
			if err := os.WriteFile(filepath.Join(tools, name), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return []string{"PATH=" + tools + ":" + os.Getenv("PATH"), "APPARMOR_USERNS_SYSCTL=" + sysctl,
			"APPARMOR_USERNS_DIR=" + dir, "GITHUB_OUTPUT=" + filepath.Join(dir, "output")}, dir, calls
	}
	sudoOK := `[ "$1" = -n ] && shift; exec "$@"`
	t.Run("loaded", func(t *testing.T) {
		env, dir, calls := fake(t, sudoOK, "exit 0")
		code, out := runUserns(t, env, "load", bin)
		if code != 0 || !strings.Contains(out, "loaded") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "runner-userns-*"))
		if len(files) != 1 {
			t.Fatalf("profiles written: %v", files)
		}
		prof, _ := os.ReadFile(files[0])
		if !strings.Contains(string(prof), `"`+bin+`" flags=(unconfined) {`) {
			t.Errorf("installed profile:\n%s", prof)
		}
		got, _ := os.ReadFile(calls)
		if !strings.Contains(string(got), "apparmor_parser -r "+files[0]) {
			t.Errorf("apparmor_parser was not called with -r %s:\n%s", files[0], got)
		}
		outputs, _ := os.ReadFile(filepath.Join(dir, "output"))
		if !strings.HasPrefix(string(outputs), "setup=AppArmor profile runner-userns-") || !strings.Contains(string(outputs), "may create user namespaces") {
			t.Errorf("step output %q", outputs)
		}
	})
	for name, tc := range map[string]struct{ sudo, parser, want string }{
		"no sudo":        {"exit 1", "exit 0", "no passwordless sudo; commands run under Landlock only"},
		"parser refuses": {sudoOK, "echo 'syntax error, unexpected TOK_END_OF_RULE' >&2; exit 1", "not loaded (syntax error"},
	} {
		t.Run(name, func(t *testing.T) {
			env, dir, _ := fake(t, tc.sudo, tc.parser)
			code, out := runUserns(t, env, "load", bin)
			if code != 0 {
				t.Errorf("exit %d: the step must not fail the job\n%s", code, out)
			}
			if !strings.Contains(out, "::warning title=runner::") || !strings.Contains(out, tc.want) {
				t.Errorf("the log does not warn %q:\n%s", tc.want, out)
			}
			outputs, _ := os.ReadFile(filepath.Join(dir, "output"))
			if !strings.Contains(string(outputs), "Landlock only") {
				t.Errorf("step output %q does not say Landlock only", outputs)
			}
		})
	}
	t.Run("not restricted", func(t *testing.T) {
		env, dir, calls := fake(t, sudoOK, "exit 0")
		env = append(env, "APPARMOR_USERNS_SYSCTL="+filepath.Join(dir, "missing"))
		code, out := runUserns(t, env, "load", bin)
		if got, _ := os.ReadFile(calls); code != 0 || len(got) > 0 || !strings.Contains(out, "nothing changed") {
			t.Errorf("exit %d, calls %q:\n%s", code, got, out)
		}
	})
}

// TestActionLoadsUsernsProfile: the action runs the AppArmor step on the
// built binary before the run, and passes its outcome to the runner,
// which records it in run.started (sandbox.host_setup).
func TestActionLoadsUsernsProfile(t *testing.T) {
	a := loadAction(t)
	var ids []string
	for _, s := range a.Runs.Steps {
		ids = append(ids, s.ID)
	}
	order := strings.Join(ids, " ")
	if !strings.Contains(order, "build userns") || strings.Index(order, "userns") > strings.Index(order, "run") {
		t.Errorf("steps %v: the userns step must follow build and precede run", ids)
	}
	s := stepByID(t, a, "userns")
	if s.Env["RUNNER_BIN"] != "${{ steps.build.outputs.bin }}" || !strings.Contains(s.Run, `scripts/apparmor-userns.sh" load "$RUNNER_BIN"`) {
		t.Errorf("userns step = %+v", s)
	}
	if got := stepByID(t, a, "run").Env["RUNNER_SANDBOX_HOST_SETUP"]; got != "${{ steps.userns.outputs.setup }}" {
		t.Errorf("run step's RUNNER_SANDBOX_HOST_SETUP = %q", got)
	}
}
