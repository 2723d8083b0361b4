package event

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadLogRoundTrip(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadLog(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want := sampleRun()
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d", len(recs), len(want))
	}
	for i, rec := range recs {
		if rec.Line != i+1 || rec.Seq != int64(i+1) || rec.RunID != "run-1" || rec.Type != want[i].EventType() {
			t.Errorf("record %d envelope = %+v", i, rec.Envelope)
		}
		p, err := rec.Payload()
		if err != nil {
			t.Fatal(err)
		}
		if reflect.TypeOf(p) != reflect.TypeOf(want[i]) {
			t.Errorf("record %d: payload %T, want %T", i, p, want[i])
		}
	}
	var rf RunFinished
	if err := recs[len(recs)-1].Decode(&rf); err != nil || rf.Status != StatusSuccess || *rf.CostUSD != 0.0031 {
		t.Errorf("Decode run.finished = %+v, %v", rf, err)
	}
	tc, _ := recs[5].Payload()
	if got := tc.(ToolCompleted).Metadata["exit_code"]; got != 1.0 {
		t.Errorf("metadata exit_code = %v", got)
	}
}

func TestReadLogErrors(t *testing.T) {
	const ok1 = `{"v":1,"seq":1,"time":"2026-01-02T03:04:05Z","run_id":"r","type":"step.started","step":1}`
	const ok2 = `{"v":1,"seq":2,"time":"2026-01-02T03:04:05Z","run_id":"r","type":"text","step":1,"text":"hi"}`
	tests := []struct {
		name    string
		log     string
		records int
		err     error
		line    string
	}{
		{"empty", "", 0, nil, ""},
		{"complete", ok1 + "\n" + ok2 + "\n", 2, nil, ""},
		{"no final newline", ok1 + "\n" + ok2, 2, nil, ""},
		{"blank lines", "\n" + ok1 + "\n\n", 1, nil, ""},
		{"truncated tail", ok1 + "\n" + ok2[:30], 1, nil, ""},
		{"malformed middle", ok1 + "\n" + ok2[:30] + "\n" + ok2 + "\n", 1, ErrMalformed, "line 2"},
		{"malformed last with newline", ok1 + "\n{oops\n", 1, ErrMalformed, "line 2"},
		{"bad version", strings.Replace(ok1, `"v":1`, `"v":9`, 1) + "\n", 0, ErrVersion, "line 1"},
		{"no type", `{"v":1,"seq":1,"time":"2026-01-02T03:04:05Z","run_id":"r"}` + "\n", 0, ErrMalformed, "line 1"},
		{"no time", `{"v":1,"seq":1,"run_id":"r","type":"text"}` + "\n", 0, ErrMalformed, "line 1"},
		{"seq zero", `{"v":1,"seq":0,"time":"2026-01-02T03:04:05Z","run_id":"r","type":"text"}` + "\n", 0, ErrMalformed, "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := ReadLog(strings.NewReader(tt.log))
			if len(recs) != tt.records {
				t.Errorf("got %d records, want %d", len(recs), tt.records)
			}
			if tt.err == nil && err != nil {
				t.Errorf("unexpected error %v", err)
			}
			if tt.err != nil && (!errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.line)) {
				t.Errorf("err = %v, want %v naming %q", err, tt.err, tt.line)
			}
		})
	}
}

func TestRecordUnknownType(t *testing.T) {
	rec, err := ParseLine([]byte(`{"v":1,"seq":1,"time":"2026-01-02T03:04:05Z","run_id":"r","type":"future.thing"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Payload(); !errors.Is(err, ErrUnknownType) {
		t.Errorf("Payload() = %v, want ErrUnknownType", err)
	}
	for _, typ := range Types() {
		if p, ok := NewPayload(typ); !ok || p.EventType() != typ {
			t.Errorf("NewPayload(%q) = %v, %v", typ, p, ok)
		}
	}
}

func FuzzReadLog(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "sample.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("{\n"))
	f.Add([]byte(`{"v":1,"seq":1,"time":"2026-01-02T03:04:05Z","run_id":"r","type":"x"}`))
	f.Fuzz(func(t *testing.T, log []byte) {
		recs, err := ReadLog(bytes.NewReader(log))
		for _, r := range recs {
			if r.Seq < 1 || r.Type == "" || r.V != Version {
				t.Fatalf("bad record accepted: %+v", r.Envelope)
			}
			_, _ = r.Payload()
		}
		if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVersion) {
			t.Fatalf("unexpected error class: %v", err)
		}
	})
}

func TestTokensAdd(t *testing.T) {
	tests := []struct {
		name string
		a, b Tokens
		want Tokens
	}{
		{"zero", Tokens{}, Tokens{}, Tokens{}},
		{"every field", Tokens{1, 2, 3, 4, 5}, Tokens{10, 20, 30, 40, 50}, Tokens{11, 22, 33, 44, 55}},
		{"one side", Tokens{Input: 7, CacheWrite: 2}, Tokens{}, Tokens{Input: 7, CacheWrite: 2}},
	}
	for _, tt := range tests {
		if got := tt.a.Add(tt.b); got != tt.want {
			t.Errorf("%s: %+v.Add(%+v) = %+v, want %+v", tt.name, tt.a, tt.b, got, tt.want)
		}
	}
}
