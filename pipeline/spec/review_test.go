package spec

import (
	"strings"
	"testing"
)

// reviewSchema is an output schema review mode can use.
const reviewSchema = "output:\n  schema:\n    type: object\n    properties:\n      verdict: {type: string}\n" +
	"      findings:\n        type: array\n        items:\n          type: object\n" +
	"          properties: {file: {type: string}, line: {type: integer}, message: {type: string}}\n"

func TestLoadReview(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       *Review
	}{
		{"true", "github: {review: true}\n", &Review{Approve: true}},
		{"false", "github: {review: false}\n", nil},
		{"block", "github:\n  review: {approve: false}\n", &Review{Approve: false}},
		{"empty block", "github:\n  review: {}\n", &Review{Approve: true}},
		{"absent", "github: {comment: true}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadBytes("task.yaml", []byte(base+reviewSchema+tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if (s.GitHub.Review == nil) != (tt.want == nil) || tt.want != nil && *s.GitHub.Review != *tt.want {
				t.Errorf("review %+v, want %+v", s.GitHub.Review, tt.want)
			}
		})
	}
}

// TestLoadReviewErrors: review mode without an output schema it can read
// is an invalid spec, named at github.review with the way out.
func TestLoadReviewErrors(t *testing.T) {
	noFile := strings.Replace(reviewSchema, "file: {type: string}, ", "", 1)
	notArray := strings.Replace(reviewSchema, "type: array", "type: object", 1)
	noVerdict := strings.Replace(reviewSchema, "      verdict: {type: string}\n", "", 1)
	tests := []struct{ name, yaml, want string }{
		{"no schema", base + "github:\n  review: true\n", "5:11: github.review: review mode needs output.schema with verdict and findings (declare output.schema as examples/review/task.yaml does)"},
		{"no file", base + noFile + "github: {review: true}\n", "github.review: output.schema lacks findings items with file"},
		{"not an array", base + notArray + "github: {review: true}\n", "output.schema lacks findings as an array of objects"},
		{"no verdict", base + noVerdict + "github: {review: true}\n", "output.schema lacks a verdict property"},
		{"string", base + reviewSchema + "github: {review: yes}\n", "github.review: expected true or false, got a string"},
		{"list", base + reviewSchema + "github: {review: [a]}\n", "github.review: expected true, false or a mapping"},
		{"unknown option", base + reviewSchema + "github: {review: {approve: true, dismiss: true}}\n", `unknown key "dismiss" in github.review`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes("task.yaml", []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestReviewSchemaAgreesWithLoad(t *testing.T) {
	sch := compileTaskSchema(t)
	for _, good := range []string{"github: {review: true}\n", "github: {review: {approve: false}}\n"} {
		if err := sch.Validate(yamlToJSON(t, []byte(base+reviewSchema+good))); err != nil {
			t.Errorf("%s: schema: %v", good, err)
		}
	}
	for _, bad := range []string{"github: {review: yes}\n", "github: {review: {dismiss: true}}\n", "github: {review: [a]}\n"} {
		if err := sch.Validate(yamlToJSON(t, []byte(base+reviewSchema+bad))); err == nil {
			t.Errorf("%s: the schema accepted it", bad)
		}
	}
}
