package pipeline

import (
	"github.com/seed43ef5acb/runner/runner/event"
)

// Result is what one Exec run did, typed: the facts of its run.finished
// record and of its outputs, so that callers (pipeline/batch) need not read
// result.json or events.jsonl back.
//
// A run stopped before its out dir existed (bad usage, an invalid spec or
// inputs, a missing key, cassette or work tree, a trigger gate that said
// no) has a zero Result and Reported false; Exec's error says why.
type Result struct {
	// Reported is true once run.finished is written and result.json and
	// summary.md are in OutDir: the fields below describe a finished run.
	Reported bool
	RunID    string
	Status   event.Status
	ExitCode int // the exit code of `runner exec` for Status (see ExitCode)
	// Error is the run's error class and message; nil on success.
	Error        *event.RunError
	FinalMessage string
	Steps        int
	Tokens       event.Tokens
	CostUSD      *float64 // total in USD; nil when a price is unknown
	Denials      int      // permission denials during the run
	OutDir       string   // as given (--out) or .runner/runs/<run id>
	EventsPath   string   // the JSONL log; "" when it went to stdout
	// PatchPath is the patch file as the run.finished record names it
	// (relative to the working directory when OutDir was); "" when no file
	// changed (the empty patch file is still written).
	PatchPath string
	// Files are the files of the final patch; nil when none changed.
	Files []event.FileChange
	// SecretPaths are the files of Files whose content holds a secret
	// (the secret gate failed the run): work-tree-relative slash paths,
	// sorted; nil when none. Whatever copies the work tree's files
	// (batch's saved tree) leaves them out.
	SecretPaths []string
	// IgnoredWritten names the files in paths git ignores that were
	// created or changed during the run (not in any patch, left in the
	// work tree); nil when none were.
	IgnoredWritten *event.IgnoredWritten
	// CommentURL, PRURL and ReviewURL are the publish outcome under
	// GitHub Actions: the sticky comment, the pull request opened and the
	// review posted (review mode); "" when none.
	CommentURL, PRURL, ReviewURL string
}
