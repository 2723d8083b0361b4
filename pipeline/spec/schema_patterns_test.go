package spec

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// schemaPatterns are the regular expressions of task.schema.json that
// restate a decoder check, compiled with Go's regexp (RE2), which the
// jsonschema validator uses too; cmd/runner's TestYAMLLanguageServer
// checks the same patterns in JavaScript's engine on the corpus.
type schemaPatterns struct {
	duration, nonZero, nonBlank, withRefs, broad, absolute, parent *regexp.Regexp
}

func loadSchemaPatterns(t testing.TB) schemaPatterns {
	t.Helper()
	var s struct {
		Defs struct {
			Duration struct {
				Pattern string `json:"pattern"`
				AllOf   []struct {
					Pattern string `json:"pattern"`
				} `json:"allOf"`
			} `json:"duration"`
			NonBlank       struct{ Pattern string } `json:"nonBlank"`
			WithRefs       struct{ Pattern string } `json:"withRefs"`
			NarrowWritable struct {
				Else struct {
					Properties struct {
						Writable struct {
							Items struct {
								Not struct{ Pattern string } `json:"not"`
							} `json:"items"`
						} `json:"writable"`
					} `json:"properties"`
				} `json:"else"`
			} `json:"narrowWritable"`
			PathRules struct {
				OneOf []struct {
					PropertyNames struct {
						Not struct {
							AnyOf []struct{ Pattern string } `json:"anyOf"`
						} `json:"not"`
					} `json:"propertyNames"`
				} `json:"oneOf"`
			} `json:"pathRules"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(TaskSchema(), &s); err != nil {
		t.Fatal(err)
	}
	d := s.Defs
	if len(d.Duration.AllOf) != 1 || len(d.PathRules.OneOf) != 2 || len(d.PathRules.OneOf[1].PropertyNames.Not.AnyOf) != 2 {
		t.Fatalf("task.schema.json changed shape: %+v", d)
	}
	not := d.PathRules.OneOf[1].PropertyNames.Not.AnyOf
	return schemaPatterns{
		duration: regexp.MustCompile(d.Duration.Pattern),
		nonZero:  regexp.MustCompile(d.Duration.AllOf[0].Pattern),
		nonBlank: regexp.MustCompile(d.NonBlank.Pattern),
		withRefs: regexp.MustCompile(d.WithRefs.Pattern),
		broad:    regexp.MustCompile(d.NarrowWritable.Else.Properties.Writable.Items.Not.Pattern),
		absolute: regexp.MustCompile(not[0].Pattern),
		parent:   regexp.MustCompile(not[1].Pattern),
	}
}

// durationParts matches one number and unit of a duration.
var durationParts = regexp.MustCompile(`([0-9]*)(?:\.([0-9]*))?(ns|us|µs|μs|ms|s|m|h)`)

// exactNanoseconds is the exact value of a duration the schema's pattern
// matched, in nanoseconds, and its number of parts.
func exactNanoseconds(s string) (*big.Rat, int) {
	unit := map[string]int64{"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}
	sum := new(big.Rat)
	parts := durationParts.FindAllStringSubmatch(s, -1)
	for _, p := range parts {
		v, ok := new(big.Rat).SetString("0" + p[1] + "." + p[2] + "0")
		if !ok {
			panic(s)
		}
		sum.Add(sum, v.Mul(v, new(big.Rat).SetInt64(unit[p[3]])))
	}
	return sum, len(parts)
}

// checkSchemaPatterns compares each pattern with the decoder's check on s.
func checkSchemaPatterns(t *testing.T, p schemaPatterns, s string) {
	t.Helper()
	// Durations: the schema takes every duration the decoder takes, and
	// refuses every other one but for a sum that rounds to zero or
	// overflows (the corpus test lists both).
	schemaOK := p.duration.MatchString(s) && p.nonZero.MatchString(s)
	d, err := time.ParseDuration(s)
	switch runnerOK := err == nil && d > 0; {
	case runnerOK && !schemaOK:
		t.Errorf("duration %q: the decoder takes it (%v), the schema refuses it", s, d)
	case schemaOK && !runnerOK:
		exact, parts := exactNanoseconds(s)
		tiny := exact.Cmp(new(big.Rat).SetInt64(int64(parts))) < 0
		huge := exact.Cmp(new(big.Rat).SetInt64(1<<62)) >= 0
		if !tiny && !huge {
			t.Errorf("duration %q (%s ns exactly): the schema takes it, the decoder refuses it: %v %v", s, exact.FloatString(3), d, err)
		}
	}
	// Non-blank strings: strings.TrimSpace's white space, exactly.
	if got, want := p.nonBlank.MatchString(s), strings.TrimSpace(s) != ""; got != want {
		t.Errorf("%q: nonBlank matches: %v, strings.TrimSpace leaves text: %v", s, got, want)
	}
	// ${NAME} references, as refMap checks them.
	if got, want := p.withRefs.MatchString(s), !strings.Contains(refPattern.ReplaceAllString(s, ""), "${"); got != want {
		t.Errorf("%q: withRefs matches: %v, refMap finds it well formed: %v", s, got, want)
	}
	// A writable entry the schema refuses is broad by its text; a broad
	// one it takes names a directory on the way (/tmp/..).
	if broad := broadLiteral(s) != ""; p.broad.MatchString(s) != broad && !(broad && namesADirectory(s)) {
		t.Errorf("writable %q: the schema refuses it: %v, broadLiteral: %q", s, p.broad.MatchString(s), broadLiteral(s))
	}
	// read and edit patterns that leave the work tree, for any valid glob.
	if msg, _ := checkPattern(permission.Edit, s); !strings.HasPrefix(msg, "bad glob") && !strings.HasPrefix(msg, "empty") {
		if got, want := p.absolute.MatchString(s) || p.parent.MatchString(s), msg != ""; got != want {
			t.Errorf("edit pattern %q: the schema refuses it: %v, the decoder: %q", s, got, msg)
		}
	}
}

// namesADirectory reports whether a writable entry has a path segment
// other than "", "." and "..", after its /, ~/, $HOME or ${HOME}.
func namesADirectory(w string) bool {
	for _, pre := range []string{"~/", "${HOME}", "$HOME", "/"} {
		if rest, ok := strings.CutPrefix(w, pre); ok {
			for _, seg := range strings.Split(rest, "/") {
				if seg != "" && seg != "." && seg != ".." {
					return true
				}
			}
			return false
		}
	}
	return true
}

var schemaPatternSeeds = []string{
	"", " ", "\t\n", "\v", "\u00a0", "\u2003x", "\u3000", "\ufeff", "x",
	"5m", "+5m", "-5m", "0s", "0", "0h0.0m", "1.5h", ".5s", "5.s", "5μs", "5µs", "5us", "0s5ms", "1h30m",
	"0.5ns", "1.5ns", "0.9ns0.9ns", "9999999999h", "2562047h", "2562048h", "20 minutes", "5", "s", "1e3s", "+", "+.s",
	"${A}", "$${A}", "$${A}{", "${A}{", "${1B}", "${", "$", "$$", "a$", "$x${A}", "$${A}${B}{", "Bearer ${TOKEN", "${A}}",
	"/", "//", "/.", "/..", "/...", "/tmp", "/tmp/..", "~/", "~/.", "~/.cache", "~/.cache/..", "$HOME", "$HOME/", "$HOMEDIR",
	"$HOME..", "${HOME}", "${HOME}x", "${HOME}/..", "$GOCACHE",
	"../x", "a/../x", "a/..", "..", "..b", "a..b/**", "./x", ".x", "/etc/**", "**", "x/..y", "src/[a", "{a,b}",
}

// TestSchemaPatterns holds the schema's patterns to the decoder's checks
// on the seeds; FuzzSchemaPatterns searches further.
func TestSchemaPatterns(t *testing.T) {
	p := loadSchemaPatterns(t)
	for _, s := range schemaPatternSeeds {
		checkSchemaPatterns(t, p, s)
	}
}

func FuzzSchemaPatterns(f *testing.F) {
	for _, s := range schemaPatternSeeds {
		f.Add(s)
	}
	p := loadSchemaPatterns(f)
	f.Fuzz(func(t *testing.T, s string) { checkSchemaPatterns(t, p, s) })
}
