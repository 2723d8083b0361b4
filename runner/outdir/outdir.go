// Package outdir is the layout of a run's out dir: the names of its files
// and directories, where the default one lies, and the form of a run id.
// It is data only, so batch, report and the CLI read an out dir without
// importing pipeline, which writes it.
//
// Imports: tools/permission (RunnerDir, the one name of the state
// directory).
package outdir

import (
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"time"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// Files and directories of a run's out dir.
const (
	EventsFile    = "events.jsonl"  // the event log
	PatchFile     = "changes.patch" // the final patch (unified diff)
	ResultFile    = "result.json"   // the run.finished line, envelope included
	SummaryFile   = "summary.md"    // the Markdown report
	HistoryFile   = "history.jsonl" // the conversation the model saw (runner exec --continue)
	RunPatch      = "run.patch"     // a continued run's own steps only (changes.patch is the whole chain)
	ToolOutputDir = "tool-output"   // full outputs of bash and MCP tool calls
	MCPStderrDir  = "mcp"           // MCP stdio servers' stderr
)

// Files lists the files a run may write in its out dir, in the order the
// Outputs line names them; the directories are left out.
func Files() []string {
	return []string{PatchFile, RunPatch, SummaryFile, EventsFile, ResultFile, HistoryFile}
}

// StateDir is the runner's own directory in a work tree; default out
// dirs lie in its runs directory.
const StateDir = permission.RunnerDir

// StateIgnore is the .gitignore the runner writes in StateDir when it
// makes a default out dir there.
const StateIgnore = "# runner's own state (run logs, patches, conversation histories): never committed\n*\n"

// Default is the default out dir of the run runID, relative to the work
// tree: StateDir/runs/<run id>.
func Default(runID string) string {
	return filepath.Join(StateDir, "runs", runID)
}

// NewRunID returns a run id that sorts by start time and does not collide:
// UTC time to the second and 4 random bytes, e.g. 20261130T022300Z-9f3a01bc.
func NewRunID(now time.Time) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}
