package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseInputs(t *testing.T) {
	tests := []struct {
		set     []string
		want    map[string]string
		wantErr bool
	}{
		{nil, map[string]string{}, false},
		{[]string{"a=1", "b=x=y", "c="}, map[string]string{"a": "1", "b": "x=y", "c": ""}, false},
		{[]string{"a=1", "b=2", "a=1"}, nil, true},
		{[]string{"k=a", "k=b"}, nil, true},
		{[]string{"novalue"}, nil, true},
		{[]string{"=v"}, nil, true},
	}
	for _, tt := range tests {
		got, err := ParseInputs(tt.set)
		if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, ErrUsage)) {
			t.Errorf("ParseInputs(%q) error = %v", tt.set, err)
		}
		if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
			t.Errorf("ParseInputs(%q) (-want +got):\n%s", tt.set, diff)
		}
	}
}

// TestParseInputsRepeatedKey: a key given twice is an error that names the
// key and both values, so a script's typo does not silently keep the last.
func TestParseInputsRepeatedKey(t *testing.T) {
	_, err := ParseInputs([]string{"pkg=./a", "other=x", "pkg=./b"})
	if !errors.Is(err, ErrUsage) {
		t.Fatalf("error %v, want ErrUsage", err)
	}
	for _, want := range []string{"--set pkg", `"./a"`, `"./b"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %s", err, want)
		}
	}
}
