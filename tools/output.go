package tools

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// boundedOutput keeps the head and the tail of a stream and, optionally,
// copies it to a file, which it creates only once the stream outgrows
// what it keeps (most commands' output never does, and creating a file
// costs more CPU than the rest of a cheap bash step's bookkeeping), up to
// fileMax bytes (0: no bound). It is safe for concurrent writes.
type boundedOutput struct {
	mu      sync.Mutex
	headMax int
	tailMax int
	head    []byte
	tail    []byte
	total   int64
	create  func() (OutputFile, error) // nil: no copy file
	file    OutputFile
	fileErr error
	fileMax int64 // the most bytes the file gets (0: no bound)
	fileN   int64 // bytes written to the file
	fileCut bool  // the file got fileMax bytes and no more
}

func newBoundedOutput(maxBytes int, create func() (OutputFile, error)) *boundedOutput {
	head := maxBytes / 2
	return &boundedOutput{headMax: head, tailMax: maxBytes - head, create: create}
}

// Write never fails: a failing copy file is remembered, not reported to
// the process.
func (o *boundedOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file == nil && o.create != nil && o.fileErr == nil && o.total+int64(len(p)) > int64(o.headMax+o.tailMax) {
		o.openFile()
	}
	o.total += int64(len(p))
	if o.file != nil && o.fileErr == nil {
		o.writeFile(p)
	}
	rest := p
	if room := o.headMax - len(o.head); room > 0 {
		n := min(room, len(rest))
		o.head = append(o.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		o.tail = append(o.tail, rest...)
		if len(o.tail) > 2*o.tailMax {
			o.tail = append(o.tail[:0:0], o.tail[len(o.tail)-o.tailMax:]...)
		}
	}
	return len(p), nil
}

// openFile creates the copy file and writes what came so far: head and
// tail, all of it (nothing was dropped before the stream outgrew them).
// The caller holds mu.
func (o *boundedOutput) openFile() {
	if o.file, o.fileErr = o.create(); o.fileErr != nil {
		o.file = nil
		return
	}
	if o.writeFile(o.head); o.fileErr == nil {
		o.writeFile(o.tail)
	}
}

// writeFile copies p to the file, cut at fileMax. The caller holds mu.
func (o *boundedOutput) writeFile(p []byte) {
	if o.fileMax > 0 && o.fileN+int64(len(p)) > o.fileMax {
		p, o.fileCut = p[:o.fileMax-o.fileN], true
	}
	if len(p) == 0 {
		return
	}
	n, err := o.file.Write(p)
	o.fileN += int64(n)
	o.fileErr = err
}

// closeFile closes the copy file and returns its path ("" when there is
// none: the stream fit).
func (o *boundedOutput) closeFile() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file == nil {
		return ""
	}
	name := o.file.Name()
	if err := o.file.Close(); o.fileErr == nil {
		o.fileErr = err
	}
	o.file = nil
	return name
}

// truncated reports whether some of the stream was dropped.
func (o *boundedOutput) truncated() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total > int64(o.headMax+o.tailMax)
}

// text is the kept output; when bytes were dropped, a marker between head
// and tail says how many and where the full text is.
func (o *boundedOutput) text(fullPath string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	tail := o.tail
	if len(tail) > o.tailMax {
		tail = tail[len(tail)-o.tailMax:]
	}
	kept := int64(len(o.head) + len(tail))
	if kept >= o.total {
		return strings.ToValidUTF8(string(o.head)+string(tail), "\uFFFD")
	}
	where := ""
	switch {
	case fullPath != "" && o.fileCut:
		where = fmt.Sprintf("; the first %d bytes of the output are in %s (the file's bound; the run's record: tools cannot open it); "+
			"to see a cut part, narrow the output, e.g. a command with | tail -n 200 or | grep PATTERN", o.fileN, fullPath)
	case fullPath != "":
		// The path is for people reading the record: it is in the runner's
		// own state (.runner, or an out dir outside the tree), which no
		// rule lets a tool open, so the model is told how to see a part
		// instead of being sent to a file every try at which is a denial.
		where = "; the full output is in " + fullPath + " (the run's record: tools cannot open it); " +
			"to see a cut part, narrow the output, e.g. a command with | tail -n 200 or | grep PATTERN"
	case o.fileErr != nil:
		where = "; the full output could not be saved: " + o.fileErr.Error()
	}
	return strings.ToValidUTF8(string(o.head), "\uFFFD") +
		fmt.Sprintf("\n\n… [%d bytes omitted%s] …\n\n", o.total-kept, where) +
		strings.ToValidUTF8(string(tail), "\uFFFD")
}

// BoundText cuts text that is already whole in memory (an MCP result) the
// way bash output is cut: at most maxBytes (0: DefaultMaxOutputBytes) of
// head and tail with a marker between them. When it cuts and dir is not
// empty, the full text is saved as dir/PREFIX-<random>.log (made by files;
// nil: a plain file) and the marker names that file. It returns the text for the model and whether it was
// cut; an error means the full text could not be saved (the cut text is
// still returned).
func BoundText(text string, maxBytes int, dir, prefix string, files OutputFiles) (string, bool, error) {
	out := newBoundedOutput(orDefault(maxBytes, DefaultMaxOutputBytes), nil)
	_, _ = out.Write([]byte(text))
	if !out.truncated() {
		return out.text(""), false, nil
	}
	if dir == "" {
		return out.text(""), true, nil
	}
	files = OrPlain(files)
	if err := files.MkdirAll(dir); err != nil {
		return out.text(""), true, fmt.Errorf("output dir: %w", err)
	}
	f, err := files.CreateTemp(dir, safeName(prefix)+"-*.log")
	if err != nil {
		return out.text(""), true, fmt.Errorf("output file: %w", err)
	}
	_, werr := io.WriteString(f, text)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = f.Remove()
		return out.text(""), true, fmt.Errorf("output file: %w", werr)
	}
	return out.text(f.Name()), true, nil
}
