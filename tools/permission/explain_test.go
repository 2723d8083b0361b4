package permission

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	tests := []struct {
		q        Query
		verdict  string
		contains []string
	}{
		{Query{Bash, "git status; rm -rf ~"}, "deny", []string{
			`deny: bash "git status; rm -rf ~"`, "allow  command   git status", `rule bash "git status": allow`,
			"deny   command   rm -rf ~", "default deny"}},
		{Query{Edit, "src/a.go"}, "allow", []string{`rule edit "src/**": allow`}},
		{Query{Edit, ".git/config"}, "deny", []string{"protected"}},
		{Query{Read, "../x"}, "deny", []string{"outside the work tree"}},
		{Query{DoomLoop, "read"}, "deny", []string{"default deny"}},
	}
	for _, tt := range tests {
		t.Run(tt.q.Permission+" "+tt.q.Target, func(t *testing.T) {
			e := Explain(explainRules(), wt, tt.q, fakeBash)
			if e.Verdict != tt.verdict || e.Allowed != (tt.verdict == "allow") {
				t.Errorf("verdict = %s/%v, want %s", e.Verdict, e.Allowed, tt.verdict)
			}
			text := e.Text()
			for _, want := range tt.contains {
				if !strings.Contains(text, want) {
					t.Errorf("Text() lacks %q:\n%s", want, text)
				}
			}
			raw, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			var back Explanation
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			if back.Verdict != e.Verdict || len(back.Checks) != len(e.Checks) {
				t.Errorf("JSON round trip: %s", raw)
			}
		})
	}
}

func explainRules() Ruleset {
	return Ruleset{{Bash, "git status", Allow}, {Edit, "src/**", Allow}, {Read, "*", Allow}}
}

// fakeBash stands in for bashcheck.Check (tested there): it judges each
// ';'-separated part as one command.
func fakeBash(rs Ruleset, _, command string) Verdict {
	v := Verdict{Command: command, Allowed: true}
	for _, part := range strings.Split(command, ";") {
		part = strings.TrimSpace(part)
		d := rs.Evaluate(Bash, part)
		v.Checks = append(v.Checks, Check{Kind: KindCommand, Subject: part, Decision: d})
		v.Allowed = v.Allowed && d.Allowed
	}
	return v
}
