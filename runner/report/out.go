package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

// WriteResult writes dir/result.json: the run.finished line object as
// logged (envelope and payload, indented), so result.json and the log's last
// line never disagree. It returns ErrNoRunFinished for any other record.
func WriteResult(ctx context.Context, dir string, rec event.Record) error {
	if rec.Type != (event.RunFinished{}).EventType() {
		return fmt.Errorf("write %s: %w (got %q)", outdir.ResultFile, ErrNoRunFinished, rec.Type)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, rec.Raw, "", "  "); err != nil {
		return fmt.Errorf("write %s: %w", outdir.ResultFile, err)
	}
	b.WriteByte('\n')
	return writeFile(ctx, filepath.Join(dir, outdir.ResultFile), b.Bytes())
}

// WriteEvents writes dir/events.jsonl: the log kept in memory when it went
// to a stdout whose reader left.
func WriteEvents(ctx context.Context, dir string, log []byte) error {
	return writeFile(ctx, filepath.Join(dir, outdir.EventsFile), log)
}

// WriteSummary writes dir/summary.md from r.
func WriteSummary(ctx context.Context, dir string, r Report, o MarkdownOptions) error {
	return writeFile(ctx, filepath.Join(dir, outdir.SummaryFile), []byte(r.Markdown(o)))
}

// WriteOut reads dir/events.jsonl (and the start of dir/changes.patch
// when it exists, ReadPatchExcerpt, for the collapsed patch section unless
// o.Patch is set), then writes
// result.json (when the log holds run.finished) and summary.md. It is
// meant to run after the event Writer is closed, also after a cancel: pass
// a context that survives it (context.WithoutCancel with a deadline).
func WriteOut(ctx context.Context, dir string, o MarkdownOptions) (Report, error) {
	if err := ctx.Err(); err != nil {
		return Report{}, fmt.Errorf("write out dir: %w", err)
	}
	recs, err := readLogFile(filepath.Join(dir, outdir.EventsFile), outdir.EventsFile)
	if err != nil {
		return Report{}, fmt.Errorf("write out dir: %w", err)
	}
	rep, err := Build(recs)
	if err != nil {
		return Report{}, fmt.Errorf("write out dir: %w", err)
	}
	if last := recs[len(recs)-1]; last.Type == (event.RunFinished{}).EventType() {
		if err := WriteResult(ctx, dir, last); err != nil {
			return rep, err
		}
	}
	if o.Patch == "" {
		patch, size, err := ReadPatchExcerpt(filepath.Join(dir, outdir.PatchFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return rep, fmt.Errorf("write out dir: %w", err)
		}
		o.Patch, o.PatchSize = patch, size
	}
	return rep, WriteSummary(ctx, dir, rep, o)
}

// writeFile writes data to path through a temporary file and a rename, so
// readers never see a half-written file.
func writeFile(ctx context.Context, path string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}
