package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main() // before testscript: the sandbox helper re-execs this binary
	testscript.Main(m, map[string]func(){
		"runner": func() { os.Exit(run()) },
		// expect-exit CODE ARGS... runs the runner with ARGS and fails unless
		// it exits with CODE; the runner's output passes through.
		"expect-exit": func() {
			if len(os.Args) < 2 {
				fmt.Fprintln(os.Stderr, "usage: expect-exit CODE ARGS...")
				os.Exit(1)
			}
			want, err := strconv.Atoi(os.Args[1])
			if err != nil {
				fmt.Fprintln(os.Stderr, "expect-exit:", err)
				os.Exit(1)
			}
			streams := Streams{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
			if got := runCLI(context.Background(), os.Args[2:], streams, os.Environ()); got != want {
				fmt.Fprintf(os.Stderr, "expect-exit: runner exited with %d, want %d\n", got, want)
				os.Exit(1)
			}
		},
	})
}

// TestScript runs the txtar scripts in testdata/script. Each script starts
// in a work directory holding a copy of the repository's examples/.
func TestScript(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	schemaFile, err := filepath.Abs("../../schema/task.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	batchSchemaFile, err := filepath.Abs("../../schema/batch.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"json-valid":     jsonValid,
			"swebench-apply": swebenchApply,
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("COLUMNS", "80")
			env.Setenv("SCHEMA_FILE", schemaFile)
			env.Setenv("BATCH_SCHEMA_FILE", batchSchemaFile)
			return os.CopyFS(filepath.Join(env.WorkDir, "examples"), os.DirFS(examples))
		},
	})
}

// jsonValid is the script command "json-valid FILE": FILE holds one valid
// JSON value.
func jsonValid(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: json-valid FILE")
	}
	valid := json.Valid([]byte(ts.ReadFile(args[0])))
	if valid == neg {
		ts.Fatalf("json-valid %s: valid = %v", args[0], valid)
	}
}

// swebenchApply is the script command "swebench-apply PREDS INSTANCE DIR":
// it applies the model_patch of INSTANCE's line in the predictions file
// PREDS to the git work tree DIR as the SWE-bench harness does (the patch
// written to a file, then `git apply --verbose`).
func swebenchApply(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: swebench-apply PREDS INSTANCE DIR")
	}
	var patch *string
	for _, line := range strings.Split(strings.TrimSuffix(ts.ReadFile(args[0]), "\n"), "\n") {
		var p struct {
			InstanceID string  `json:"instance_id"`
			ModelPatch *string `json:"model_patch"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			ts.Fatalf("%s: %v", args[0], err)
		}
		if p.InstanceID == args[1] {
			patch = p.ModelPatch
		}
	}
	if patch == nil {
		ts.Fatalf("%s: no model_patch for %s", args[0], args[1])
	}
	file := ts.MkAbs(args[1] + ".diff")
	if err := os.WriteFile(file, []byte(*patch), 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
	err := ts.Exec("git", "-C", args[2], "apply", "--verbose", file)
	if (err != nil) != neg {
		ts.Fatalf("git apply %s in %s: %v", file, args[2], err)
	}
}
