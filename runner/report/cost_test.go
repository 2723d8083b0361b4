package report

import (
	"encoding/json"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
)

// TestIncompleteCostRounded: a log cut before run.finished sums its steps'
// costs without float noise.
func TestIncompleteCostRounded(t *testing.T) {
	var recs []event.Record
	for i := 1; i <= 3; i++ {
		raw, err := json.Marshal(event.StepFinished{Step: i, FinishReason: "tool-calls", CostUSD: ptrF(0.0000672)})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, event.Record{Envelope: event.Envelope{V: 1, Seq: int64(i), RunID: "r", Type: "step.finished"}, Raw: raw})
	}
	r, err := Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusIncomplete || r.CostUSD == nil {
		t.Fatalf("report %+v", r)
	}
	if got, _ := json.Marshal(*r.CostUSD); string(got) != "0.0002016" {
		t.Errorf("cost %s, want 0.0002016", got)
	}
}

func ptrF(f float64) *float64 { return &f }
