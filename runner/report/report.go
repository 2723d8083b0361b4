// Package report summarises event logs (schema v1, see runner/event): the
// data behind `runner report`, the GitHub step summary and the PR comment.
// Build turns the records of one run into a Report; Markdown and JSON
// render it; WriteOut writes the out/ directory's result.json and
// summary.md.
//
// Imports: runner/event and runner/outdir (the out dir's file names).
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/seed43ef5acb/runner/runner/event"
)

// StatusIncomplete is the status of a log without run.finished (the run was
// killed or is still going).
const StatusIncomplete event.Status = "incomplete"

// Report is the summary of one run. Its JSON form is the output of
// `runner report --format json`.
type Report struct {
	RunID            string          `json:"run_id"`
	Task             string          `json:"task"`
	Model            string          `json:"model"`
	Repo             string          `json:"repo"`
	RunnerVersion    string          `json:"runner_version"`
	Started          time.Time       `json:"started"`
	Status           event.Status    `json:"status"`    // run.finished status, or "incomplete"
	ExitCode         *int            `json:"exit_code"` // nil when incomplete
	Steps            int             `json:"steps"`
	Tokens           event.Tokens    `json:"tokens"`
	CostUSD          *float64        `json:"cost_usd"` // nil when unknown
	DurationMS       int64           `json:"duration_ms"`
	Tools            []ToolUse       `json:"tools"`
	Denials          []Denial        `json:"denials"`
	Retries          int             `json:"retries"`
	Compactions      int             `json:"compactions"`
	Diff             *Diff           `json:"diff"` // nil: no patch event
	PatchPath        string          `json:"patch_path"`
	Checks           []Check         `json:"checks"`
	FinalMessage     string          `json:"final_message"`
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
	// Delivery lists the publish events: what was pushed, opened or
	// posted, and what could not be.
	Delivery []event.Publish `json:"delivery,omitempty"`
	Error    *event.RunError `json:"error,omitempty"`
	// Continues names the run this one continued (runner exec --continue).
	Continues *event.Continued `json:"continues,omitempty"`
	// IgnoredWritten names the files in paths git ignores that were
	// created or changed during the run, as the final patch event (or
	// run.finished) said: not in the patch, left in the work tree.
	IgnoredWritten *event.IgnoredWritten `json:"ignored_written,omitempty"`
}

// ToolUse counts the calls of one tool.
type ToolUse struct {
	Name   string `json:"name"`
	Calls  int    `json:"calls"`
	Failed int    `json:"failed"` // including denied
	Denied int    `json:"denied"`
}

// Denial is a refused permission and the rule that decided (nil: default
// deny).
type Denial struct {
	Step       int     `json:"step"`
	Tool       string  `json:"tool"`
	Permission string  `json:"permission"`
	Pattern    string  `json:"pattern"`
	Rule       *string `json:"rule"`
	Protection string  `json:"protection,omitempty"` // the built-in protection that denied it when no rule did
	Reason     string  `json:"reason"`
}

// DecidedBy is what refused the call in words (event.PermissionDenied's).
func (d Denial) DecidedBy() string {
	return event.PermissionDenied{Rule: d.Rule, Protection: d.Protection}.DecidedBy()
}

// Diff is the diffstat of the final patch (or, in an incomplete log, of the
// last step's patch: Final false).
type Diff struct {
	Final     bool               `json:"final"`
	Files     []event.FileChange `json:"files"`
	Additions int                `json:"additions"`
	Deletions int                `json:"deletions"`
}

// Check is one attempt of a check command.
type Check struct {
	Name       string `json:"name"`
	Command    string `json:"command"`
	Attempt    int    `json:"attempt"`
	Passed     bool   `json:"passed"`
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
	Output     string `json:"output"`
	// Hint is check.finished's hint: what the sandbox took from a failed
	// check ("" for none).
	Hint string `json:"hint,omitempty"`
	// Cancelled: the run was stopped while the check ran.
	Cancelled bool `json:"cancelled,omitempty"`
}

// BuildRuns splits records by run_id (in order of first appearance) and
// builds a Report for each.
func BuildRuns(records []event.Record) ([]Report, error) {
	var order []string
	byRun := map[string][]event.Record{}
	for _, r := range records {
		if _, ok := byRun[r.RunID]; !ok {
			order = append(order, r.RunID)
		}
		byRun[r.RunID] = append(byRun[r.RunID], r)
	}
	out := make([]Report, 0, len(order))
	for _, id := range order {
		rep, err := Build(byRun[id])
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		out = append(out, rep)
	}
	return out, nil
}

// Build summarises the records of one run. Unknown event types are skipped
// (a newer writer); a record of a known type that does not decode is an
// error. Without run.finished, the status is "incomplete" and the totals
// are summed from the steps.
func Build(records []event.Record) (Report, error) {
	b := builder{tools: map[string]*ToolUse{}}
	for _, rec := range records {
		p, err := rec.Payload()
		if err != nil {
			if errors.Is(err, event.ErrUnknownType) {
				continue
			}
			return Report{}, err
		}
		b.add(rec, p)
	}
	return b.finish(), nil
}

// builder accumulates a Report.
type builder struct {
	r         Report
	first     time.Time
	last      time.Time
	tools     map[string]*ToolUse
	stepCost  float64
	costKnown bool
	finished  bool
	open      map[string]string // call id → tool of calls started and not yet ended
}

func (b *builder) add(rec event.Record, p event.Payload) {
	if b.first.IsZero() {
		b.first, b.r.RunID = rec.Time, rec.RunID
	}
	b.last = rec.Time
	switch v := p.(type) {
	case event.RunStarted:
		b.r.Task, b.r.Model, b.r.Repo, b.r.RunnerVersion = v.Task, v.Model, v.Repo, v.RunnerVersion
		b.r.Continues = v.Continues
	case event.StepStarted:
		b.r.Steps = max(b.r.Steps, v.Step)
	case event.Text:
		b.r.FinalMessage = v.Text // the last text part, until run.finished says otherwise
	case event.ToolStarted:
		b.tool(v.Tool).Calls++
		if b.open == nil {
			b.open = map[string]string{}
		}
		b.open[v.CallID] = v.Tool
	case event.ToolCompleted:
		delete(b.open, v.CallID)
	case event.ToolFailed:
		delete(b.open, v.CallID)
		t := b.tool(v.Tool)
		t.Failed++
		if v.Denied {
			t.Denied++
		}
	case event.PermissionDenied:
		b.r.Denials = append(b.r.Denials, Denial{Step: v.Step, Tool: v.Tool, Permission: v.Permission,
			Pattern: v.Pattern, Rule: v.Rule, Protection: v.Protection, Reason: v.Reason})
	case event.Retry:
		b.r.Retries++
	case event.Compaction:
		b.r.Compactions++
	case event.StepFinished:
		b.stepFinished(v)
	case event.Patch:
		if b.r.Diff == nil || !b.r.Diff.Final || v.Step == nil {
			b.r.Diff = &Diff{Final: v.Step == nil, Files: v.Files, Additions: v.Additions, Deletions: v.Deletions}
		}
		if v.Step == nil && v.IgnoredWritten != nil {
			b.r.IgnoredWritten = v.IgnoredWritten
		}
	case event.CheckFinished:
		b.r.Checks = append(b.r.Checks, Check{Name: v.Name, Command: v.Command, Attempt: v.Attempt,
			Passed: v.Passed, ExitCode: v.ExitCode, DurationMS: v.DurationMS, Output: v.Output, Hint: v.Hint, Cancelled: v.Cancelled})
	case event.Publish:
		b.r.Delivery = append(b.r.Delivery, v)
	case event.RunFinished:
		b.runFinished(v)
	}
}

func (b *builder) tool(name string) *ToolUse {
	t, ok := b.tools[name]
	if !ok {
		t = &ToolUse{Name: name}
		b.tools[name] = t
	}
	return t
}

func (b *builder) stepFinished(v event.StepFinished) {
	b.r.Steps = max(b.r.Steps, v.Step)
	if b.finished {
		return
	}
	b.r.Tokens = b.r.Tokens.Add(v.Tokens)
	if v.CostUSD != nil {
		b.stepCost += *v.CostUSD
		b.costKnown = true
	}
}

func (b *builder) runFinished(v event.RunFinished) {
	b.finished = true
	b.r.Status = v.Status
	code := v.ExitCode
	b.r.ExitCode = &code
	b.r.Steps = v.Steps
	b.r.Tokens = v.Tokens
	b.r.CostUSD = v.CostUSD
	b.r.DurationMS = v.DurationMS
	b.r.PatchPath = v.PatchPath
	b.r.FinalMessage = v.FinalMessage
	if len(v.StructuredOutput) > 0 && string(v.StructuredOutput) != "null" {
		b.r.StructuredOutput = v.StructuredOutput
	}
	b.r.Error = v.Error
	if v.IgnoredWritten != nil {
		b.r.IgnoredWritten = v.IgnoredWritten
	}
}

func (b *builder) finish() Report {
	r := b.r
	r.Started = b.first
	if !b.finished {
		r.Status = StatusIncomplete
		r.DurationMS = b.last.Sub(b.first).Milliseconds()
		if b.costKnown {
			c := math.Round(b.stepCost*1e9) / 1e9 // no float noise from the sum (the runner's rounding)
			r.CostUSD = &c
		}
	}
	for _, tool := range b.open {
		b.tool(tool).Failed++ // never ended: the runner would call it aborted
	}
	r.Tools = make([]ToolUse, 0, len(b.tools))
	for _, t := range b.tools {
		r.Tools = append(r.Tools, *t)
	}
	sort.Slice(r.Tools, func(i, j int) bool {
		if r.Tools[i].Calls != r.Tools[j].Calls {
			return r.Tools[i].Calls > r.Tools[j].Calls
		}
		return r.Tools[i].Name < r.Tools[j].Name
	})
	if r.Denials == nil {
		r.Denials = []Denial{}
	}
	if r.Checks == nil {
		r.Checks = []Check{}
	}
	return r
}

// JSON is the report as indented JSON with a final newline.
func (r Report) JSON() ([]byte, error) {
	return marshalIndent(r)
}

func marshalIndent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return append(b, '\n'), nil
}
