package workflowcmd

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestAnnotationString(t *testing.T) {
	tests := []struct {
		a    Annotation
		want string
	}{
		{Annotation{Level: Error, File: "task.yaml", Line: 3, Col: 5, Title: "spec", Message: `unknown key "x"`},
			`::error file=task.yaml,line=3,col=5,title=spec::unknown key "x"`},
		{Annotation{Level: Warning, Message: "a\nb 100%"}, "::warning::a%0Ab 100%25"},
		// A message cannot start a second command; a property cannot add one.
		{Annotation{Level: Notice, Title: "a,b:c", Message: "x\n::error::pwned"}, "::notice title=a%2Cb%3Ac::x%0A::error::pwned"},
		{Annotation{Level: Error, File: "dir/a,b.yaml", Message: "m"}, "::error file=dir/a%2Cb.yaml::m"},
	}
	for _, tt := range tests {
		if got := tt.a.String(); got != tt.want {
			t.Errorf("%+v:\n got %s\nwant %s", tt.a, got, tt.want)
		}
		if strings.Count(tt.a.String(), "\n") != 0 {
			t.Errorf("%q has a line break", tt.a.String())
		}
	}
}

func TestMask(t *testing.T) {
	var b strings.Builder
	w := &Writer{W: &b}
	if err := w.Mask("line-one-secret\r\n\nab\nline-two-secret"); err != nil {
		t.Fatal(err)
	}
	want := "::add-mask::line-one-secret\n::add-mask::line-two-secret\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestNilWriter(t *testing.T) {
	var w *Writer
	if err := w.Error("t", "m"); err != nil {
		t.Fatal(err)
	}
	if err := w.Mask("secret-value"); err != nil {
		t.Fatal(err)
	}
}

// TestEscapeJSON: the escaped text is the same JSON value and holds no
// "##[" (the old command form, live anywhere in a line).
func TestEscapeJSON(t *testing.T) {
	in := []byte(`{"v":"##[set-output name=x;]pwned","w":"a\\##[b","n":["::error::x"]}`)
	out := EscapeJSON(in)
	if strings.Contains(string(out), "##[") {
		t.Errorf("EscapeJSON left ##[: %s", out)
	}
	var a, b any
	if err := json.Unmarshal(in, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("escaped text is not JSON: %v: %s", err, out)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("value changed: %v, want %v", b, a)
	}
}

// TestFence: the fenced text starts and ends the stop with one token.
func TestFence(t *testing.T) {
	got := Fence("::error::x", "tok")
	if got != "::stop-commands::tok\n::error::x\n::tok::\n" || Fence("", "tok") != "" {
		t.Errorf("Fence = %q", got)
	}
}
