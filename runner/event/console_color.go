package event

import "fmt"

// ColorMode is the --color setting: auto, always or never.
type ColorMode string

// The colour modes; "" is ColorAuto.
const (
	ColorAuto   ColorMode = "auto"
	ColorAlways ColorMode = "always"
	ColorNever  ColorMode = "never"
)

// ParseColorMode checks s, one of auto, always or never ("" is auto).
func ParseColorMode(s string) (ColorMode, error) {
	switch m := ColorMode(s); m {
	case "", ColorAuto:
		return ColorAuto, nil
	case ColorAlways, ColorNever:
		return m, nil
	}
	return "", fmt.Errorf("colour mode %q: want auto, always or never", s)
}

// UseColor reports whether output should carry ANSI colour. An explicit
// mode wins; in auto mode the environment decides, then whether the
// output is a terminal:
//   - NO_COLOR set and non-empty: off (https://no-color.org);
//   - CLICOLOR_FORCE set and not "0": on, even when not a terminal;
//   - TERM=dumb or CLICOLOR=0: off;
//   - otherwise on for a terminal only.
func UseColor(mode ColorMode, getenv func(string) string, tty bool) bool {
	switch mode {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	if getenv("NO_COLOR") != "" {
		return false
	}
	if f := getenv("CLICOLOR_FORCE"); f != "" && f != "0" {
		return true
	}
	if getenv("TERM") == "dumb" || getenv("CLICOLOR") == "0" {
		return false
	}
	return tty
}
