package event

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestIsSecretName(t *testing.T) {
	tests := map[string]bool{
		"OPENAI_API_KEY": true, "GITHUB_TOKEN": true, "GH_TOKEN": true, "ACTIONS_RUNTIME_TOKEN": true,
		"DB_PASSWORD": true, "aws_secret_access_key": true, "MY_CREDENTIALS": true, "NPM_AUTH": true,
		"SSH_PRIVATE": true, "HOME": false, "PATH": false, "GIT_AUTHOR_NAME": false, "SSH_AUTH_SOCK": false,
		"RUNNER_MODEL": false, "GITHUB_REPOSITORY": false,
	}
	for name, want := range tests {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	env := []string{
		"OPENAI_API_KEY=planted-provider-key-123",
		"GITHUB_TOKEN=planted github token",
		"HOME=/home/runner-user-dir",
		"SHORT_TOKEN=ollama", // placeholder: too short to be a secret
		"NOEQUALS",
		"DB_PASSWORD=p@ss\"w\\rd<&>!",
	}
	r := NewRedactor(env, "extra-secret-value", "", "tiny")
	tests := []struct{ in, want string }{
		{"key is planted-provider-key-123.", "key is [REDACTED]."},
		{"tok=planted github token!", "tok=[REDACTED]!"},
		{"home /home/runner-user-dir", "home /home/runner-user-dir"},
		{"model ollama/llama3", "model ollama/llama3"},
		{"x extra-secret-value y", "x [REDACTED] y"},
		{"tiny stays", "tiny stays"},
		{`pw p@ss"w\rd<&>!`, "pw [REDACTED]"},
		{"openai sk-abcdefghijklmnopqrstuvwxyz0123", "openai [REDACTED]"},
		{"proj sk-proj-AbC_dEf-0123456789abcdefXYZ", "proj [REDACTED]"},
		{"task-abcdefghijklmnopqrstuvwxyz0123 is not a key", "task-abcdefghijklmnopqrstuvwxyz0123 is not a key"},
		{"gh ghp_0123456789abcdefghijABCDEFGHIJ012345", "gh [REDACTED]"},
		{"gh ghs_0123456789abcdefghijABCDEFGHIJ012345,", "gh [REDACTED],"},
		{"pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "pat [REDACTED]"},
		{"slack xoxb-1234567890-abcdefghij", "slack [REDACTED]"},
		{"aws AKIAIOSFODNN7EXAMPLE ok", "aws [REDACTED] ok"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\ntail", "[REDACTED]\ntail"},
		{"cut -----BEGIN RSA PRIVATE KEY-----\nMIIEow", "cut [REDACTED]"},
		{"Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer [REDACTED]"},
		{"curl -H 'Authorization: token 0123456789abcdef'", "curl -H 'Authorization: token [REDACTED]'"},
		{"http.https://github.com/.extraheader=AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hz", "http.https://github.com/.extraheader=AUTHORIZATION: basic [REDACTED]"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end", "jwt [REDACTED] end"},
		{"clone https://user:hunter2pass@github.com/o/r", "clone https://user:[REDACTED]@github.com/o/r"},
		{"http://localhost:8080/v1 is fine", "http://localhost:8080/v1 is fine"},
		{"a basic sentence with bearer of news", "a basic sentence with bearer of news"},
	}
	for _, tt := range tests {
		if got := r.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
		if got := string(r.RedactBytes([]byte(tt.in))); got != tt.want {
			t.Errorf("RedactBytes(%q) = %q", tt.in, got)
		}
	}
	var nilR *Redactor
	if nilR.Redact("sk-abcdefghijklmnopqrstuvwxyz0123") == "" {
		t.Error("nil Redactor changed text")
	}
}

func TestRedactJSONEscapedSecrets(t *testing.T) {
	secret := "q\"uo\\te<&>\n\u2028tab\t-secret"
	r := NewRedactor([]string{"WEIRD_SECRET=" + secret})
	for _, escapeHTML := range []bool{false, true} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escapeHTML)
		if err := enc.Encode(map[string]any{"text": "before " + secret + " after", "n": 1, secret: "as a key"}); err != nil {
			t.Fatal(err)
		}
		out := r.RedactJSON(b.Bytes())
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("redacted JSON is invalid: %v\n%s", err, out)
		}
		if got["text"] != "before [REDACTED] after" || got[Redacted] != "as a key" || got["n"] != 1.0 {
			t.Errorf("escapeHTML=%v: got %v", escapeHTML, got)
		}
	}
	clean := []byte(`{"a":"nothing here","b":[1,2,"x"]}`)
	if out := r.RedactJSON(clean); &out[0] != &clean[0] {
		t.Error("RedactJSON copied a line with no secrets")
	}
	// Not JSON: redacted as text from the unterminated string on.
	tail := r.RedactJSON([]byte(`{"a":"x ` + "sk-abcdefghijklmnopqrstuvwxyz0123"))
	if bytes.Contains(tail, []byte("sk-abc")) {
		t.Errorf("unterminated string not redacted: %s", tail)
	}
}

func TestRedactingSinkAndWriterOption(t *testing.T) {
	const secret = "planted-secret-value-42"
	r := NewRedactor([]string{"MY_API_KEY=" + secret})
	var plain, viaOpt bytes.Buffer
	s := Redacting(NewWriter(&plain, "r", WithClock(fixedClock())), r)
	opt := NewWriter(&viaOpt, "r", WithClock(fixedClock()), WithRedactor(r))
	payloads := []Payload{
		Text{Step: 1, Text: "the key is " + secret},
		&Text{Step: 1, Text: "pointer " + secret},
		ToolStarted{Step: 1, CallID: "c", Tool: "bash", Input: json.RawMessage(`{"command":"echo ` + secret + `"}`)},
		ToolCompleted{Step: 1, CallID: "c", Tool: "bash", Output: secret, Metadata: map[string]any{"env": secret}},
		StepStarted{Step: 2},
	}
	for _, p := range payloads {
		if err := s.Emit(p); err != nil {
			t.Fatal(err)
		}
		if err := opt.Emit(p); err != nil {
			t.Fatal(err)
		}
	}
	for name, out := range map[string]string{"Redacting": plain.String(), "WithRedactor": viaOpt.String()} {
		if strings.Contains(out, secret) {
			t.Errorf("%s: secret leaked:\n%s", name, out)
		}
		if strings.Count(out, Redacted) != 5 {
			t.Errorf("%s: want 5 redactions:\n%s", name, out)
		}
		if err := mustValidator(t).ValidateLog([]byte(out)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := s.Emit(nil); err == nil {
		t.Error("Redacting sink accepted nil")
	}
}

func TestRedactingWriter(t *testing.T) {
	var b bytes.Buffer
	w := RedactingWriter(&b, NewRedactor(nil, "explicit-secret"))
	n, err := w.Write([]byte("say explicit-secret\n"))
	if err != nil || n != len("say explicit-secret\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if b.String() != "say [REDACTED]\n" {
		t.Errorf("got %q", b.String())
	}
	if _, err := RedactingWriter(failWriter{}, nil).Write([]byte("x")); err == nil {
		t.Error("write error lost")
	}
}

func FuzzRedactJSON(f *testing.F) {
	f.Add(`{"a":"sk-abcdefghijklmnopqrstuvwxyz0123","b":"x\"y"}`, "x\"y-secret")
	f.Add(`["\u00e9\\"]`, "é\\-secret!")
	r0 := NewRedactor(nil)
	f.Fuzz(func(t *testing.T, doc, secret string) {
		r := NewRedactor(nil, secret)
		out := r.RedactJSON([]byte(doc))
		if json.Valid([]byte(doc)) && !json.Valid(out) {
			t.Fatalf("valid JSON became invalid: %q -> %q", doc, out)
		}
		if json.Valid([]byte(doc)) && len(strings.TrimSpace(secret)) >= MinSecretLen {
			var v any
			_ = json.Unmarshal(out, &v)
			if s, _ := json.Marshal(v); strings.Contains(string(s), strings.TrimSpace(secret)) && !strings.Contains(secret, Redacted) {
				// Re-encoding may create the secret from parts only when
				// the secret spans JSON syntax, never inside one string.
				checkStrings(t, v, strings.TrimSpace(secret))
			}
		}
		_ = r0.RedactJSON([]byte(doc))
	})
}

// checkStrings fails when a decoded string still contains secret.
func checkStrings(t *testing.T, v any, secret string) {
	t.Helper()
	switch x := v.(type) {
	case string:
		if strings.Contains(x, secret) {
			t.Fatalf("secret %q survives in %q", secret, x)
		}
	case []any:
		for _, e := range x {
			checkStrings(t, e, secret)
		}
	case map[string]any:
		for k, e := range x {
			checkStrings(t, k, secret)
			checkStrings(t, e, secret)
		}
	}
}

// TestRedactJSONKeepsProviderCiphertext: a token shape that occurs by
// chance inside a thinking signature or encrypted reasoning (base64url
// holds "-sk-…") is kept, so --continue can send the turn back; the same
// text under another key is redacted (control), and an exact secret value
// is redacted everywhere.
func TestRedactJSONKeepsProviderCiphertext(t *testing.T) {
	t.Parallel()
	blob := "gAAAAABn" + strings.Repeat("Q1x_", 10) + "-sk-abcdefghijklmnopqrstuvwx" + strings.Repeat("Zz09", 10)
	r := NewRedactor([]string{"OPENAI_API_KEY=sk-live-0123456789abcdefghij"})
	for _, tc := range []struct {
		in   string
		keep bool
	}{
		{`{"reasoning_details":{"responses":[{"type":"reasoning","encrypted_content":"` + blob + `"}]}}`, true},
		{`{"type":"thinking","thinking":"t","signature": "` + blob + `"}`, true},
		{`{"content":"` + blob + `"}`, false},
		{`{"signature":"sk-live-0123456789abcdefghij` + strings.Repeat("A", 60) + `"}`, false},
		{`{"signature":"sk-proj-` + strings.Repeat("B", 70) + `"}`, false}, // a whole key, not ciphertext
	} {
		got := string(r.RedactJSON([]byte(tc.in)))
		if kept := got == tc.in; kept != tc.keep {
			t.Errorf("RedactJSON(%s) = %s; kept %v, want %v", tc.in, got, kept, tc.keep)
		}
	}
}
