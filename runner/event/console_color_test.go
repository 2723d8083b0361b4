package event

import (
	"strings"
	"testing"
)

func TestUseColor(t *testing.T) {
	tests := []struct {
		name string
		mode ColorMode
		env  map[string]string
		tty  bool
		want bool
	}{
		{"terminal", ColorAuto, nil, true, true},
		{"pipe", ColorAuto, nil, false, false},
		{"empty mode is auto", "", nil, true, true},
		{"NO_COLOR", ColorAuto, map[string]string{"NO_COLOR": "1"}, true, false},
		{"empty NO_COLOR is unset", ColorAuto, map[string]string{"NO_COLOR": ""}, true, true},
		{"TERM=dumb", ColorAuto, map[string]string{"TERM": "dumb"}, true, false},
		{"TERM=xterm", ColorAuto, map[string]string{"TERM": "xterm-256color"}, true, true},
		{"CLICOLOR=0", ColorAuto, map[string]string{"CLICOLOR": "0"}, true, false},
		{"CLICOLOR=1 on a pipe", ColorAuto, map[string]string{"CLICOLOR": "1"}, false, false},
		{"CLICOLOR_FORCE on a pipe", ColorAuto, map[string]string{"CLICOLOR_FORCE": "1"}, false, true},
		{"CLICOLOR_FORCE=0", ColorAuto, map[string]string{"CLICOLOR_FORCE": "0"}, false, false},
		{"CLICOLOR_FORCE beats TERM=dumb", ColorAuto, map[string]string{"CLICOLOR_FORCE": "1", "TERM": "dumb"}, false, true},
		{"CLICOLOR_FORCE beats CLICOLOR=0", ColorAuto, map[string]string{"CLICOLOR_FORCE": "1", "CLICOLOR": "0"}, true, true},
		{"NO_COLOR beats CLICOLOR_FORCE", ColorAuto, map[string]string{"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, true, false},
		{"always on a pipe", ColorAlways, nil, false, true},
		{"always beats NO_COLOR", ColorAlways, map[string]string{"NO_COLOR": "1", "TERM": "dumb"}, false, true},
		{"never on a terminal", ColorNever, nil, true, false},
		{"never beats CLICOLOR_FORCE", ColorNever, map[string]string{"CLICOLOR_FORCE": "1"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			if got := UseColor(tt.mode, getenv, tt.tty); got != tt.want {
				t.Errorf("UseColor(%q, %v, tty=%v) = %v, want %v", tt.mode, tt.env, tt.tty, got, tt.want)
			}
		})
	}
}

func TestParseColorMode(t *testing.T) {
	for in, want := range map[string]ColorMode{"": ColorAuto, "auto": ColorAuto, "always": ColorAlways, "never": ColorNever} {
		if got, err := ParseColorMode(in); err != nil || got != want {
			t.Errorf("ParseColorMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseColorMode("yes"); err == nil || !strings.Contains(err.Error(), "auto, always or never") {
		t.Errorf("ParseColorMode(yes) error = %v, want one naming the modes", err)
	}
}
