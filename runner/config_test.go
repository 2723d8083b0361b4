package runner

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestBadConfig(t *testing.T) {
	t.Parallel()
	cfg := testConfig(newModel(), nil)
	cfg.OutputSchema = json.RawMessage(`{"type": 12}`)
	if _, err := Run(t.Context(), cfg); !errors.Is(err, ErrBadSchema) {
		t.Fatalf("err = %v, want ErrBadSchema", err)
	}
	if _, err := Run(t.Context(), Config{Prompt: "x"}); !errors.Is(err, ErrNoModel) {
		t.Fatalf("err = %v, want ErrNoModel", err)
	}
	if _, err := Run(t.Context(), Config{Model: newModel()}); !errors.Is(err, ErrNoPrompt) {
		t.Fatalf("err = %v, want ErrNoPrompt", err)
	}
	dup := testConfig(newModel(), nil, &fakeTool{name: "read"}, &fakeTool{name: "read"})
	if _, err := Run(t.Context(), dup); !errors.Is(err, ErrDuplicateTool) {
		t.Fatalf("err = %v, want ErrDuplicateTool", err)
	}
	reserved := testConfig(newModel(), nil, &fakeTool{name: StructuredOutputTool})
	reserved.OutputSchema = json.RawMessage(outSchema)
	if _, err := Run(t.Context(), reserved); !errors.Is(err, ErrDuplicateTool) {
		t.Fatalf("err = %v, want ErrDuplicateTool", err)
	}
}
