// Package workflowcmd writes GitHub Actions workflow commands: the
// annotations (::error, ::warning, ::notice with file, line and column)
// and ::add-mask::, escaped as the Actions toolkit escapes them
// (packages/core/src/command.ts), so a message can never end the command
// early or start another one. It is the one writer of these commands for
// the whole module (the console, the pipeline and the github package use
// it), and sits outside the layers because every layer may need it.
//
// Imports: the standard library only.
package workflowcmd

import (
	"crypto/rand"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Level is the kind of an annotation.
type Level string

// Annotation levels, the workflow command names.
const (
	Error   Level = "error"
	Warning Level = "warning"
	Notice  Level = "notice"
)

// Annotation is one ::error, ::warning or ::notice line. File is relative
// to the repository root (GitHub shows the annotation on that file of the
// pull request); Line and Col are 1-based, 0 when unknown. Title is the
// annotation's heading ("" for none).
type Annotation struct {
	Level   Level
	File    string
	Line    int
	Col     int
	Title   string
	Message string
}

// String is the command line, without its newline:
//
//	::error file=task.yaml,line=3,col=5,title=spec::unknown key "x"
func (a Annotation) String() string {
	var props []string
	if a.File != "" {
		props = append(props, "file="+escapeProperty(a.File))
	}
	if a.Line > 0 {
		props = append(props, "line="+strconv.Itoa(a.Line))
	}
	if a.Col > 0 {
		props = append(props, "col="+strconv.Itoa(a.Col))
	}
	if a.Title != "" {
		props = append(props, "title="+escapeProperty(a.Title))
	}
	cmd := "::" + string(a.Level)
	if len(props) > 0 {
		cmd += " " + strings.Join(props, ",")
	}
	return cmd + "::" + escapeData(a.Message)
}

// Writer writes workflow commands to W, one per line. A nil *Writer (or one
// with a nil W) writes nothing, so callers outside Actions hold a nil one.
// Writes are not synchronised: callers that share W with other writers
// (the console) serialise them.
type Writer struct {
	W io.Writer
}

// Annotate writes a.
func (w *Writer) Annotate(a Annotation) error {
	if w == nil || w.W == nil {
		return nil
	}
	_, err := fmt.Fprintln(w.W, a.String())
	return err
}

// Error writes an ::error annotation with no position.
func (w *Writer) Error(title, msg string) error {
	return w.Annotate(Annotation{Level: Error, Title: title, Message: msg})
}

// Warning writes a ::warning annotation with no position.
func (w *Writer) Warning(title, msg string) error {
	return w.Annotate(Annotation{Level: Warning, Title: title, Message: msg})
}

// Notice writes a ::notice annotation with no position.
func (w *Writer) Notice(title, msg string) error {
	return w.Annotate(Annotation{Level: Notice, Title: title, Message: msg})
}

// Mask writes ::add-mask:: for each line of value (the runner masks lines,
// not whole multi-line values); blank lines and values shorter than
// MinMask are skipped, since masking "a" would blank every "a" in the log.
func (w *Writer) Mask(value string) error {
	if w == nil || w.W == nil {
		return nil
	}
	for _, line := range strings.Split(strings.ReplaceAll(value, "\r\n", "\n"), "\n") {
		if len(strings.TrimSpace(line)) < MinMask {
			continue
		}
		if _, err := fmt.Fprintln(w.W, "::add-mask::"+escapeData(line)); err != nil {
			return err
		}
	}
	return nil
}

// MinMask is the shortest value Mask masks.
const MinMask = 4

// escapeData escapes a command's message: %, CR and LF.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a property value: the message escapes plus : and ,.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// StopToken returns a fresh random token for ::stop-commands::.
func StopToken() string { return "runner-" + strings.ToLower(rand.Text()) }

// Fence returns text between "::stop-commands::token" and "::token::"
// lines, GitHub's documented way to print text that must not run workflow
// commands (::error, ::add-mask::, ::set-output, ##[…]). Text that does
// not end in a newline gets one. Empty text is returned as is.
func Fence(text, token string) string {
	if text == "" {
		return ""
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return "::stop-commands::" + token + "\n" + text + "::" + token + "::\n"
}

// EscapeJSON returns the JSON text b with "##[" written "\u0023#[": the
// same JSON value, but no line of it is a workflow command (a line of
// JSON never starts with "::", and '#' occurs only inside strings).
func EscapeJSON(b []byte) []byte {
	return []byte(strings.ReplaceAll(string(b), "##[", `\u0023#[`))
}
