package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/batch/batchreport"
	"github.com/seed43ef5acb/runner/pipeline/batch/swebench"
)

// BatchReportCmd is `runner batch report DIR... [--format html|markdown|json] [--out FILE]`.
type BatchReportCmd struct {
	Dirs      []string `arg:"" name:"DIR" help:"Out dirs of batch run or merge: shard dirs of one night, or several nights."`
	Format    string   `help:"Output format: html, markdown or json (default ${default})." default:"html" enum:"html,markdown,json" placeholder:"FORMAT"`
	Out       string   `help:"Write the report to FILE (links are relative to its dir) instead of stdout." placeholder:"FILE"`
	QuietFlag `embed:""`
}

// Run loads the dirs and writes the report.
func (c *BatchReportCmd) Run(ctx context.Context, streams Streams) error {
	base := "."
	if c.Out != "" {
		if st, err := os.Stat(c.Out); err == nil && st.IsDir() {
			return fmt.Errorf("%w: --out %s is a directory: give a file, e.g. %s", pipeline.ErrUsage, c.Out, filepath.Join(c.Out, "report.html"))
		}
		base = filepath.Dir(c.Out)
	}
	rep, err := batchreport.Load(ctx, c.Dirs, batchreport.Options{LinkBase: base})
	if errors.Is(err, batchreport.ErrNotBatchDir) {
		return fmt.Errorf("%w: %w", pipeline.ErrUsage, err)
	}
	if err != nil {
		return err
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(streams.Stderr, "runner: %s\n", p)
	}
	out, err := batchreport.Render(rep, c.Format)
	if err != nil {
		return err
	}
	if c.Out == "" {
		_, err = streams.Stdout.Write(out)
		return err
	}
	if err := writeFileAtomic(c.Out, out); err != nil {
		return err
	}
	fmt.Fprintf(c.progress(streams.Stderr), "Report: %s (%s)\n", c.Out, repositories(len(rep.Repos)))
	return nil
}

// BatchExportCmd is `runner batch export DIR --format swebench --model-name NAME`.
type BatchExportCmd struct {
	Dir       string `arg:"" name:"DIR" help:"A batch run or merge out dir." type:"existingdir"`
	Format    string `help:"Export format: swebench (SWE-bench predictions, one JSON line per repository with a patch)." required:"" enum:"swebench" placeholder:"FORMAT"`
	ModelName string `name:"model-name" help:"The predictions' model_name_or_path." required:"" placeholder:"NAME"`
	Out       string `help:"Write to FILE (it must end in .jsonl, as the harness requires) instead of stdout." placeholder:"FILE"`
	QuietFlag `embed:""`
}

// Run writes the predictions; repositories whose patch cannot be exported
// are named on stderr.
func (c *BatchExportCmd) Run(streams Streams) error {
	if c.Out != "" && !strings.HasSuffix(c.Out, ".jsonl") {
		return fmt.Errorf("%w: --out %s: the SWE-bench harness reads predictions only from a file ending in .jsonl (or .json): name it e.g. preds.jsonl", pipeline.ErrUsage, c.Out)
	}
	var buf bytes.Buffer
	w := streams.Stdout
	if c.Out != "" {
		w = &buf
	}
	res, err := swebench.Export(c.Dir, c.ModelName, w)
	if errors.Is(err, swebench.ErrDuplicateInstance) {
		return fmt.Errorf("%w: %w", pipeline.ErrUsage, err)
	}
	if err != nil {
		return err
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(streams.Stderr, "runner: %s left out: %s\n", s.ID, s.Reason)
	}
	if c.Out != "" {
		if err := writeFileAtomic(c.Out, buf.Bytes()); err != nil {
			return err
		}
	}
	fmt.Fprintf(c.progress(streams.Stderr), "Exported %d predictions\n", res.Written)
	return nil
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, creating the parent dir.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
