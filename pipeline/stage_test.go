package pipeline

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestRunStagePolicy(t *testing.T) {
	boom := errors.New("boom")
	tests := map[string]struct {
		run      func(context.Context) error
		wantNil  bool
		wantIs   error
		wantText string
	}{
		"ok":          {run: func(context.Context) error { return nil }, wantNil: true},
		"skipped":     {run: func(context.Context) error { return skip("nothing to do") }, wantNil: true},
		"failed":      {run: func(context.Context) error { return boom }, wantIs: boom, wantText: "demo: boom"},
		"user-facing": {run: func(context.Context) error { return ErrUsage }, wantIs: ErrUsage, wantText: "usage error"},
		"panic":       {run: func(context.Context) error { panic("oops") }, wantIs: ErrInfra, wantText: "demo: infrastructure error: panic: oops"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := runStage(t.Context(), slog.New(slog.DiscardHandler), stageFunc{"demo", tt.run})
			if tt.wantNil {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.wantIs) || err.Error() != tt.wantText {
				t.Fatalf("err = %v, want %q wrapping %v", err, tt.wantText, tt.wantIs)
			}
		})
	}
}

func TestRunStagesStopsAtFirstFailure(t *testing.T) {
	var ran []string
	stage := func(name string, err error) Stage {
		return stageFunc{name, func(context.Context) error { ran = append(ran, name); return err }}
	}
	err := runStages(t.Context(), slog.New(slog.NewTextHandler(io.Discard, nil)), []Stage{
		stage("a", nil), stage("b", skip("no")), stage("c", ErrInfra), stage("d", nil),
	})
	if !errors.Is(err, ErrInfra) || strings.Join(ran, ",") != "a,b,c" {
		t.Fatalf("err %v, ran %v; want ErrInfra after a,b,c", err, ran)
	}
}

func TestIsSkip(t *testing.T) {
	if !IsSkip(skip("x %d", 1)) || IsSkip(errors.New("x")) || IsSkip(nil) {
		t.Fatal("IsSkip misjudges")
	}
	if got := skip("x %d", 1).Error(); got != "skipped: x 1" {
		t.Fatalf("Error() = %q", got)
	}
}
