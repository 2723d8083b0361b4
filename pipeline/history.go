package pipeline

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

// historyVersion is the version of the history file's format.
const historyVersion = 1

// History line types besides the runner's record kinds (system, messages,
// reset).
const (
	historyHeader = "header" // first line: what the conversation belongs to
	historyTree   = "tree"   // the work tree after a step, or at the end (final)
)

// historyLine is one line of history.jsonl: the header, a runner record
// (its kind as type), or a tree.
type historyLine struct {
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
	Chain []chainRun `json:"chain,omitempty"`

	// runner records
	Step     int           `json:"step,omitempty"`
	System   string        `json:"system,omitempty"`
	Messages []llm.Message `json:"messages,omitempty"`
	Reason   string        `json:"reason,omitempty"`

	// tree
	Tree  string `json:"tree,omitempty"`
	Final bool   `json:"final,omitempty"`
}

// historyFile writes history.jsonl: one redacted JSON line per change,
// written straight to the file (no buffer), so a killed run leaves every
// complete step on disk. It implements runner.History.
type historyFile struct {
	mu     sync.Mutex
	f      *mirror.File
	redact *event.Redactor
	sum    hash.Hash // SHA-256 of every byte written, for run.finished
	size   int64
}

// createHistory creates path and writes the header line.
func createHistory(files *mirror.Set, path string, header historyLine, redact *event.Redactor) (*historyFile, error) {
	f, err := files.Create(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	h := &historyFile{f: f, redact: redact, sum: sha256.New()}
	header.V, header.Type = historyVersion, historyHeader
	if err := h.write(header); err != nil {
		_ = f.Close()
		return nil, err
	}
	return h, nil
}

// Record implements runner.History.
func (h *historyFile) Record(rec runner.HistoryRecord) error {
	return h.write(historyLine{Type: string(rec.Kind), Step: rec.Step, System: rec.System,
		Messages: rec.Messages, Reason: rec.Reason})
}

// tree records the work tree's snapshot.
func (h *historyFile) tree(tree string, final bool) error {
	return h.write(historyLine{Type: historyTree, Tree: tree, Final: final})
}

func (h *historyFile) write(l historyLine) error {
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

// digest is the SHA-256 and size of what was written so far (nil for a
// nil historyFile: the run kept no history).
func (h *historyFile) digest() *event.HistoryDigest {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return &event.HistoryDigest{SHA256: hex.EncodeToString(h.sum.Sum(nil)), Size: h.size}
}

// Close closes the file.
func (h *historyFile) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil {
		return nil
	}
	err := h.f.Close()
	h.f = nil
	return err
}

// history is an earlier run's history.jsonl as read back.
type history struct {
	header     historyLine
	transcript runner.Transcript
	lastTree   string              // the last tree recorded ("" when no step changed files and the run was cut)
	final      bool                // the run reached its final snapshot
	digest     event.HistoryDigest // of the whole file as read
}

// ErrHistory means an earlier run's history cannot be continued (exit 2).
var ErrHistory = errors.New("cannot continue the run")

// readHistory reads path. A last line cut short by a kill (no newline) is
// left out; any other line that is not valid JSON makes the history
// corrupt.
func readHistory(path string) (*history, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s does not exist: --continue takes the out dir of a run made by runner exec (with this version or later)", ErrHistory, path)
		}
		return nil, fmt.Errorf("%w: %w", ErrHistory, err)
	}
	sum := sha256.Sum256(data)
	digest := event.HistoryDigest{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		data = data[:i+1] // a partial last line: the run was killed while writing it
	}
	h := &history{digest: digest}
	var recs []runner.HistoryRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<30)
	for n := 1; sc.Scan(); n++ {
		var l historyLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%w: %s:%d: corrupt history line: %w", ErrHistory, path, n, err)
		}
		if n == 1 {
			if l.Type != historyHeader || l.V != historyVersion {
				return nil, fmt.Errorf("%w: %s:1: not a history file of version %d (type %q, v %d)", ErrHistory, path, historyVersion, l.Type, l.V)
			}
			h.header = l
			continue
		}
		switch l.Type {
		case historyTree:
			h.lastTree, h.final = l.Tree, h.final || l.Final
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
	if h.header.Type == "" {
		return nil, fmt.Errorf("%w: %s is empty", ErrHistory, path)
	}
	h.transcript = runner.ReplayHistory(recs)
	if h.transcript.System == "" {
		return nil, fmt.Errorf("%w: %s: the run ended before its first model call (no system prompt recorded); start a fresh run", ErrHistory, path)
	}
	return h, nil
}
