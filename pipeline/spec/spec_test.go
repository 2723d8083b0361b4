package spec

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// base is a minimal valid spec; tests append to it.
const base = "version: 1\nname: t\nprompt: hi\n"

func TestLoadExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/*/task.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("want at least two examples, got %v (%v)", files, err)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("Load(%s):\n%v", f, err)
		}
	}
}

func TestLoadFull(t *testing.T) {
	s, err := Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def, price := "./...", 0.4
	yes, no := true, false
	want := &Spec{
		Path:         "testdata/full.yaml",
		Version:      1,
		Name:         "full",
		Description:  "every field",
		Model:        "gpt-4.1-mini",
		Instructions: "Be brief.\n",
		Prompt:       "Fix {{ .Inputs.package }} ({{ .Inputs.mode }}).\n",
		Inputs: map[string]Input{
			"package": {Description: "package", Default: &def},
			"mode":    {Required: true, Enum: []string{"fast", "slow", "3"}},
		},
		Permissions: map[string]any{
			"read": "allow",
			"edit": map[string]any{"**": "allow", ".github/**": "deny"},
			"bash": map[string]any{"go test *": "allow"},
		},
		Limits: Limits{MaxSteps: 40, MaxCostUSD: 2, MaxTokens: 100000, Timeout: 20 * time.Minute,
			ToolTimeout: 90 * time.Second, MaxDenials: 3},
		Checks:  []Check{{Name: "tests", Run: "go test ./...", Timeout: 5 * time.Minute}},
		Retries: 2,
		Output: Output{Schema: map[string]any{
			"type": "object", "required": []any{"ok"},
			"properties": map[string]any{"ok": map[string]any{"type": "boolean"}, "n": map[string]any{"maximum": float64(10)}},
		}},
		GitHub: GitHub{Comment: true, PullRequest: &PullRequest{Branch: "runner/{{ .Inputs.mode }}", Title: "Fix",
			Body: "Body", Draft: true, Labels: []string{"bot"}}},
		Models:  map[string]ModelOverride{"local": {ContextWindow: 32000, MaxOutput: 4096, InputPrice: &price, Wires: []llm.Wire{llm.WireChat}}},
		Env:     []string{"GOFLAGS"},
		Sandbox: Sandbox{Mode: sandbox.ModeRequired, Writable: []string{"$GOCACHE", "~/.npm", "/var/cache/build"}, Network: true},
		Provider: Provider{Profile: "anthropic", ToolCallIDs: "keep", NoUserAfterTool: &yes, NoEmptyContent: &no,
			Schema: "gemini", CacheControl: &yes, Store: &no, ReasoningObject: &yes},
	}
	if diff := cmp.Diff(want, s, cmpopts.IgnoreUnexported(Spec{}, Input{})); diff != "" {
		t.Errorf("Load mismatch (-want +got):\n%s", diff)
	}
}

// TestLoadErrors has one case per error kind; each wants the errors'
// "line:col: message" prefixes, in order.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"yaml syntax", "version: 1\nname: [x\n", []string{"2:1: YAML: did not find expected ',' or ']'"}},
		// A tab in the indentation is reported where the tab is, whatever
		// line yaml.v3 names (the scalar before it, or none).
		{"tab after a scalar", base + "\tpermissions: {}\n", []string{"4:1: YAML: found a tab character that violates indentation"}},
		{"tab in a mapping", base + "limits:\n  max_steps: 3\n\ttimeout: 1m\n", []string{"6:1: YAML: found a tab character that violates indentation"}},
		{"tab after spaces", base + "permissions:\n  \tread: allow\n", []string{"5:3: YAML: "}},
		{"tab on the first line", "\tversion: 1\n", []string{"1:1: YAML: found character that cannot start any token"}},
		{"tab in a block scalar", "version: 1\nname: t\nprompt: |\n  x\n\ty\n", []string{"5:1: YAML: found a tab character where an indentation space is expected"}},
		{"empty", "", []string{`1:1: the task spec is empty (start with "version: 1")`}},
		{"not a mapping", "- a\n", []string{"1:1: the task spec: expected a mapping, got a list"}},
		{"two documents", base + "---\nname: x\n", []string{"4:1: the file holds more than one YAML document"}},
		{"unknown key", base + "promt: x\n", []string{`4:1: unknown key "promt" in the task spec (did you mean "prompt"?)`}},
		{"unknown key far", base + "zzzzzz: x\n", []string{`4:1: unknown key "zzzzzz" in the task spec (known keys: checks, `}},
		// A typo of a required key is one error, not also "missing prompt".
		{"typo of a required key", "version: 1\nname: t\npromt: x\n", []string{`3:1: unknown key "promt" in the task spec (did you mean "prompt"?)`}},
		{"typo of a check's name", base + "checks:\n  - nme: a\n    run: b\n", []string{`5:5: unknown key "nme" in checks[0] (did you mean "name"?)`}},
		{"nested unknown key", base + "limits: {max_step: 3}\n", []string{`4:10: unknown key "max_step" in limits (did you mean "max_steps"?)`}},
		{"duplicate key", base + "name: u\n", []string{`4:1: duplicate key "name" in the task spec`}},
		{"missing required", "version: 1\n", []string{
			`1:1: the task spec: missing required key "name" (add "name: ...")`,
			`1:1: the task spec: missing required key "prompt"`}},
		{"wrong type string", "version: 1\nname: 12\nprompt: hi\n", []string{`2:7: name: expected a string, got an integer (quote it: "12")`}},
		{"wrong type int", base + "retries: two\n", []string{"4:10: retries: expected an integer, got a string"}},
		{"wrong type bool", base + "github: {comment: yes}\n", []string{"4:19: github.comment: expected true or false, got a string"}},
		{"wrong type list", base + "checks: {name: x}\n", []string{"4:9: checks: expected a list of checks, got a mapping"}},
		{"negative", base + "retries: -1\n", []string{"4:10: retries: must be at least 0, got -1"}},
		{"fraction", base + "limits: {max_steps: 1.5}\n", []string{"4:21: limits.max_steps: expected an integer, got a number"}},
		{"too large", base + "limits: {max_tokens: 3e9}\n", []string{"4:22: limits.max_tokens: 3e9 is too large (at most 2147483647)"}},
		{"version as a float", "version: 0.0\nname: t\nprompt: hi\n", []string{"1:10: version: unsupported spec version 0.0"}},
		{"version", "version: 2\nname: t\nprompt: hi\n", []string{"1:10: version: unsupported spec version 2 (this runner reads version 1)"}},
		{"bad name", "version: 1\nname: fix tests\nprompt: hi\n", []string{`2:7: name: bad task name "fix tests"`}},
		{"empty prompt", "version: 1\nname: t\nprompt: ' '\n", []string{"3:9: prompt: must not be empty"}},
		{"bad duration", base + "limits:\n  timeout: 20 minutes\n", []string{`5:12: limits.timeout: bad duration "20 minutes"`}},
		{"duration without unit", base + "limits: {timeout: 20}\n", []string{"4:19: limits.timeout: expected a duration, got an integer"}},
		{"negative duration", base + "checks: [{name: a, run: b, timeout: -1s}]\n", []string{`4:37: checks[0].timeout: duration must be positive`}},
		{"bad glob", base + "permissions:\n  edit: {'src/[a': allow}\n", []string{`5:10: permissions.edit["src/[a"]: bad glob "src/[a"`}},
		{"absolute pattern", base + "permissions:\n  read: {/etc/**: allow}\n", []string{`5:10: permissions.read["/etc/**"]: pattern "/etc/**" is not relative to the work tree (write "etc/**")`}},
		{"dotdot pattern", base + "permissions:\n  read: {../x: allow}\n", []string{`5:10: permissions.read["../x"]: pattern "../x" leaves the work tree`}},
		{"empty pattern", base + "permissions:\n  bash: {'': allow}\n", []string{`5:10: permissions.bash[""]: empty pattern`}},
		{"bad action", base + "permissions:\n  read: alow\n", []string{`5:9: permissions.read: bad action "alow" (did you mean "allow"?)`}},
		{"ask action", base + "permissions:\n  bash: {'go *': ask}\n", []string{`5:18: permissions.bash["go *"]: "ask" is not available (the runner is headless`}},
		{"unknown permission", base + "permissions:\n  bsh: allow\n", []string{`5:3: permissions: unknown permission "bsh" (did you mean "bash"?)`}},
		{"tool as permission", base + "permissions:\n  grep: allow\n", []string{`5:3: permissions: unknown permission "grep" (grep is covered by the "read" permission)`}},
		{"permission type", base + "permissions:\n  read: [allow]\n", []string{"5:9: permissions.read: expected an action (allow or deny) or a mapping"}},
		{"schema does not compile", base + "output:\n  schema:\n    type: object\n    properties:\n      a: {type: strng}\n",
			[]string{"8:17: output.schema/properties/a/type: value must be one of"}},
		{"schema: every problem, one of an anyOf", base + "output:\n  schema:\n    type: objekt\n    required: x\n    properties:\n      v: {type: string, enum: approve}\n      n: {minimum: '3'}\n", []string{
			"6:11: output.schema/type: value must be one of 'array', 'boolean'",
			"7:15: output.schema/required: got string, want array",
			"9:31: output.schema/properties/v/enum: got string, want array",
			"10:20: output.schema/properties/n/minimum: got string, want number"}},
		{"schema bad regexp", base + "output:\n  schema: {type: string, pattern: '(['}\n", []string{"5:35: output.schema/pattern: "}},
		{"schema external ref", base + "output:\n  schema: {$ref: 'https://example.com/s.json'}\n", []string{"5:11: output.schema: output schema: "}},
		{"schema not object", base + "output:\n  schema: true\n", []string{"5:11: output.schema: expected a JSON Schema object, got a boolean"}},
		{"undeclared input", "version: 1\nname: t\nprompt: Fix {{ .Inputs.pkg }}\n", []string{
			`3:24: prompt: template uses input "pkg", which is not declared (declare it under inputs:`}},
		{"undeclared input block", "version: 1\nname: t\nprompt: |\n  line one\n  fix {{ .Inputs.packag }} now\ninputs: {package: {}}\n", []string{
			`5:18: prompt: template uses input "packag", which is not declared (did you mean .Inputs.package?)`}},
		{"undeclared input index", "version: 1\nname: t\nprompt: '{{ index .Inputs \"a-b\" }}'\n", []string{`3:27: prompt: template uses input "a-b"`}},
		{"undeclared input in range", "version: 1\nname: t\nprompt: '{{ range .Inputs.list }}{{ $.Inputs.x }}{{ .Inputs.y }}{{ end }}'\ninputs: {list: {}}\n",
			[]string{`3:46: prompt: template uses input "x"`}},
		{"unknown template root", "version: 1\nname: t\nprompt: '{{ .Input.x }}'\n", []string{"3:13: prompt: unknown template field .Input (did you mean .Inputs?)"}},
		{"template syntax", "version: 1\nname: t\nprompt: |\n  ok\n  {{ if }}\n", []string{"5:3: prompt: template: missing value for if"}},
		{"template in pull request", base + "github:\n  pull_request: {branch: 'b/{{ .Inputs.x }}', title: t}\n", []string{
			`5:40: github.pull_request.branch: template uses input "x"`}},
		{"pull request required", base + "github:\n  pull_request: {branch: b}\n", []string{
			`5:17: github.pull_request: missing required key "title"`}},
		{"bad input name", base + "inputs: {my-pkg: {}}\n", []string{`4:10: inputs: bad input name "my-pkg"`}},
		{"required with default", base + "inputs:\n  a: {required: true, default: x}\n", []string{"5:17: inputs.a: a required input cannot have a default"}},
		{"default not in enum", base + "inputs:\n  a: {default: x, enum: [y, z]}\n", []string{`5:16: inputs.a.default: "x" is not one of the enum values (allowed: y, z)`}},
		{"duplicate check", base + "checks:\n  - {name: a, run: x}\n  - {name: a, run: y}\n", []string{`6:12: checks[1].name: duplicate check name "a"`}},
		{"check missing run", base + "checks:\n  - name: a\n", []string{`5:5: checks[0]: missing required key "run"`}},
		{"bad env name", base + "env: [GOFLAGS=1]\n", []string{`4:7: env[0]: bad environment variable name "GOFLAGS=1"`}},
		{"model override", base + "models:\n  m: {input_price: 1}\n", []string{`5:7: unknown key "input_price" in models.m (did you mean "input_price_per_million"?)`}},
		{"negative price", base + "models:\n  m: {output_price_per_million: -1}\n", []string{`5:33: models.m.output_price_per_million: must be a finite number ≥ 0, got -1`}},
		{"unknown wire", base + "models:\n  m: {wires: [messages]}\n", []string{`5:15: models.m.wires[0]: unknown wire "messages"`}},
		{"no wires", base + "models:\n  m: {wires: []}\n", []string{`5:14: models.m.wires: empty list`}},
		{"duplicate wire", base + "models:\n  m: {wires: [chat, chat]}\n", []string{`5:21: models.m.wires[1]: "chat" is listed twice`}},
		{"platform with chat", base + "provider: {platform: bedrock, wire: chat}\n", []string{`4:11: provider: platform bedrock serves Claude over the anthropic wire, not wire chat`}},
		{"region without platform", base + "provider: {region: us-east-1}\n", []string{`4:11: provider: region and project apply to a cloud platform only`}},
		{"project on bedrock", base + "provider: {platform: bedrock, project: p}\n", []string{`4:11: provider: project applies to platform vertex only`}},
		{"merge key", "x: &a {name: t}\n<<: *a\n", []string{"1:1: unknown key \"x\""}},
		{"three errors", "version: 1\nname: t\npromt: x\nretries: many\nprompt: '{{ .Inputs.nope }}'\n", []string{
			`3:1: unknown key "promt"`, "4:10: retries: expected an integer", `5:21: prompt: template uses input "nope"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadBytes("task.yaml", []byte(tt.yaml))
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("LoadBytes error = %v, want Errors", err)
			}
			if !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("error does not match ErrInvalidSpec / exit 2")
			}
			if len(errs) < len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(errs[i].Error(), "task.yaml:"+w) {
					t.Errorf("error %d:\n got %s\nwant task.yaml:%s...", i, errs[i], w)
				}
			}
			if tt.name != "merge key" && len(errs) != len(tt.want) {
				t.Errorf("got %d errors, want %d:\n%v", len(errs), len(tt.want), err)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, ErrRead) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want ErrRead and fs.ErrNotExist", err)
	}
}

func TestLoadTooLarge(t *testing.T) {
	data := []byte(base + "description: " + strings.Repeat("x", MaxSize) + "\n")
	_, err := LoadBytes("big.yaml", data)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("LoadBytes(big) = %v", err)
	}
}

func TestSpecErrorFormat(t *testing.T) {
	errs := Errors{
		{File: "a.yaml", Line: 3, Col: 1, Msg: "second", Hint: ""},
		{File: "a.yaml", Line: 1, Col: 2, Msg: "first", Hint: "do this"},
	}.sorted()
	want := "a.yaml:1:2: first (do this)\na.yaml:3:1: second"
	if got := errs.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestPosition(t *testing.T) {
	s, err := Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want Pos
		ok   bool
	}{
		{"prompt", Pos{7, 9}, true},
		{"limits.timeout", Pos{22, 12}, true},
		{"checks[0].run", Pos{27, 10}, true},
		{"inputs.package", Pos{10, 3}, true},
		{"github.pull_request.title", Pos{41, 12}, true},
		{"nope", Pos{}, false},
	}
	for _, tt := range tests {
		got, ok := s.Position(tt.path)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Position(%q) = %v, %v; want %v, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}

// TestLoadAsJSONSchemaReads: what the spec's JSON Schema (and so an
// editor) accepts, Load reads the same way: 1.0 is the integer 1, and
// 2024-01-01 is a string (YAML 1.2 has no timestamp type).
func TestLoadAsJSONSchemaReads(t *testing.T) {
	s, err := LoadBytes("t.yaml", []byte("version: 1.0\nname: 2024-01-01\ndescription: 2024-01-02\nprompt: p\n"+
		"limits: {max_steps: 4.0, max_tokens: 1e3, timeout: 2024-01-03}\n"))
	if err == nil {
		t.Fatalf("a timestamp is no duration, yet Load accepted it: %+v", s.Limits)
	}
	if want := `t.yaml:5:52: limits.timeout: bad duration "2024-01-03"`; !strings.Contains(err.Error(), want) || strings.Count(err.Error(), "\n") > 0 {
		t.Fatalf("got %v, want only %s", err, want)
	}
	s, err = LoadBytes("t.yaml", []byte("version: 1.0\nname: 2024-01-01\ndescription: 2024-01-02\nprompt: p\nlimits: {max_steps: 4.0, max_tokens: 1e3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 1 || s.Name != "2024-01-01" || s.Description != "2024-01-02" || s.Limits.MaxSteps != 4 || s.Limits.MaxTokens != 1000 {
		t.Errorf("got version %d, name %q, description %q, max_steps %d, max_tokens %d", s.Version, s.Name, s.Description, s.Limits.MaxSteps, s.Limits.MaxTokens)
	}
}
