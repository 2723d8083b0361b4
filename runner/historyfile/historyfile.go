// Package historyfile is the format of a run's history.jsonl, the
// conversation the model saw: a header line, the runner's records and the
// work tree after each step, one redacted JSON object a line. Writer
// writes it (and the digest run.finished carries); Read reads it back for
// --continue. batch and report can read it without pipeline.
//
// Imports: runner, runner/event, llm and internal/mirror.
package historyfile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"

	"github.com/seed43ef5acb/runner/internal/mirror"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
)

// Version is the version of the history file's format.
const Version = 1

// History line types besides the runner's record kinds (system, messages,
// reset).
const (
	TypeHeader = "header" // first line: what the conversation belongs to
	TypeTree   = "tree"   // the work tree after a step, or at the end (final)
)

// Line is one line of history.jsonl: the header, a runner record
// (its kind as type), or a tree.
type Line struct {
	V    int    `json:"v,omitempty"`
	Type string `json:"type"`

	// header
	RunID      string `json:"run_id,omitempty"`
	Task       string `json:"task,omitempty"`
	SpecSHA256 string `json:"spec_sha256,omitempty"`
	BaseTree   string `json:"base_tree,omitempty"`
	Model      string `json:"model,omitempty"`
	Continues  string `json:"continues,omitempty"` // the run id continued, if any
	// Excludes are the work-tree-relative paths the run kept out of its
	// snapshots (its out dir, and those of the runs it continued).
	Excludes []string `json:"excludes,omitempty"`
	// Isolated says the run worked on a temporary copy (--isolate), gone
	// once it ended.
	Isolated bool `json:"isolated,omitempty"`
	// Prompt is the run's own user message (redacted like every line);
	// RunURL the GitHub Actions run it belongs to, when there is one.
	Prompt string `json:"prompt,omitempty"`
	RunURL string `json:"run_url,omitempty"`
	// Chain summarises the earlier runs of the conversation, earliest
	// first: what they spent (limits.total) and changed.
	Chain []ChainRun `json:"chain,omitempty"`

	// runner records
	Step     int           `json:"step,omitempty"`
	System   string        `json:"system,omitempty"`
	Messages []llm.Message `json:"messages,omitempty"`
	Reason   string        `json:"reason,omitempty"`

	// tree
	Tree  string `json:"tree,omitempty"`
	Final bool   `json:"final,omitempty"`
}

// Writer writes history.jsonl: one redacted JSON line per change,
// written straight to the file (no buffer), so a killed run leaves every
// complete step on disk. It implements runner.History.
type Writer struct {
	mu     sync.Mutex
	f      *mirror.File
	redact *event.Redactor
	sum    hash.Hash // SHA-256 of every byte written, for run.finished
	size   int64
}

// Create creates path and writes the header line.
func Create(files *mirror.Set, path string, header Line, redact *event.Redactor) (*Writer, error) {
	f, err := files.Create(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	h := &Writer{f: f, redact: redact, sum: sha256.New()}
	header.V, header.Type = Version, TypeHeader
	if err := h.write(header); err != nil {
		_ = f.Close()
		return nil, err
	}
	return h, nil
}

// Record implements runner.History.
func (h *Writer) Record(rec runner.HistoryRecord) error {
	return h.write(Line{Type: string(rec.Kind), Step: rec.Step, System: rec.System,
		Messages: rec.Messages, Reason: rec.Reason})
}

// Tree records the work tree's snapshot.
func (h *Writer) Tree(tree string, final bool) error {
	return h.write(Line{Type: TypeTree, Tree: tree, Final: final})
}

func (h *Writer) write(l Line) error {
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if h.redact != nil {
		b = h.redact.RedactJSON(b)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil {
		return os.ErrClosed
	}
	line := append(b, '\n')
	n, err := h.f.Write(line)
	h.sum.Write(line[:n]) // a short write is in the file too: the digest says what is there
	h.size += int64(n)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// Digest is the SHA-256 and size of what was written so far (nil for a
// nil Writer: the run kept no history).
func (h *Writer) Digest() *event.HistoryDigest {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return &event.HistoryDigest{SHA256: hex.EncodeToString(h.sum.Sum(nil)), Size: h.size}
}

// Close closes the file.
func (h *Writer) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil {
		return nil
	}
	err := h.f.Close()
	h.f = nil
	return err
}

// History is an earlier run's history.jsonl as read back.
type History struct {
	Header     Line
	Transcript runner.Transcript
	LastTree   string              // the last tree recorded ("" when no step changed files and the run was cut)
	Final      bool                // the run reached its final snapshot
	Digest     event.HistoryDigest // of the whole file as read
}

// ErrHistory means an earlier run's history cannot be continued (exit 2).
var ErrHistory = errors.New("cannot continue the run")

// Read reads path. A last line cut short by a kill (no newline) is
// left out; any other line that is not valid JSON makes the history
// corrupt.
func Read(path string) (*History, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s does not exist: --continue takes the out dir of a run made by runner exec (with this version or later), or last for the newest finished run under .runner/runs", ErrHistory, path)
		}
		return nil, fmt.Errorf("%w: %w", ErrHistory, err)
	}
	sum := sha256.Sum256(data)
	digest := event.HistoryDigest{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		data = data[:i+1] // a partial last line: the run was killed while writing it
	}
	h := &History{Digest: digest}
	var recs []runner.HistoryRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<30)
	for n := 1; sc.Scan(); n++ {
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%w: %s:%d: corrupt history line: %w", ErrHistory, path, n, err)
		}
		if n == 1 {
			if l.Type != TypeHeader || l.V != Version {
				return nil, fmt.Errorf("%w: %s:1: not a history file of version %d (type %q, v %d)", ErrHistory, path, Version, l.Type, l.V)
			}
			h.Header = l
			continue
		}
		switch l.Type {
		case TypeTree:
			h.LastTree, h.Final = l.Tree, h.Final || l.Final
		case string(runner.HistorySystem), string(runner.HistoryMessages), string(runner.HistoryReset):
			recs = append(recs, runner.HistoryRecord{Kind: runner.HistoryKind(l.Type), Step: l.Step,
				System: l.System, Messages: l.Messages, Reason: l.Reason})
		default:
			return nil, fmt.Errorf("%w: %s:%d: unknown history line type %q", ErrHistory, path, n, l.Type)
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s: %w", ErrHistory, path, err)
	}
	if h.Header.Type == "" {
		return nil, fmt.Errorf("%w: %s is empty", ErrHistory, path)
	}
	h.Transcript = runner.ReplayHistory(recs)
	if h.Transcript.System == "" {
		return nil, fmt.Errorf("%w: %s: the run ended before its first model call (no system prompt recorded); start a fresh run", ErrHistory, path)
	}
	return h, nil
}

// ChainRun is one earlier run of a conversation, kept in the header of
// every later run's history (Line.Chain).
type ChainRun struct {
	RunID  string       `json:"run_id"`
	Prompt string       `json:"prompt,omitempty"` // its user message, cut short (pipeline's cutPrompt)
	Status event.Status `json:"status"`           // "incomplete" for a log cut short
	Steps  int          `json:"steps"`
	Tokens event.Tokens `json:"tokens"`
	// CostUSD is nil when unknown.
	CostUSD *float64 `json:"cost_usd"`
	// Files, Additions and Deletions are the run's own change (its
	// run.patch; the first run's changes.patch).
	Files     int    `json:"files"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	URL       string `json:"url,omitempty"` // the GitHub Actions run, when known
}
