package pipeline

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// protectedValues keeps the redactors up to date with the protected .env*
// files (protectedEnv) as commands make or rewrite them during the run:
// a setup script that writes .env, a check that copies one, git
// checking one out. Their values are read when the run starts
// (checkSandbox); after every command (each tool call, each check) the
// files the sandbox's watch found since (sandbox.ProtectedFound; a walk
// of the work tree where nothing watches it) and the known ones whose
// size, time or inode changed are read again, and their secret values
// join the log's redactor and the tool results' before the command's
// result is redacted, recorded or sent to the model. What was written
// before that (earlier lines of the log) is not redone; the tool outputs
// and MCP stderr under the out dir are redacted again at the end
// (redactOutFiles), with every value learned.
type protectedValues struct {
	mu     sync.Mutex
	stamps map[string]fileStamp // absolute path → what it was when read
	inodes map[[2]uint64]bool   // device and inode of every protected file seen
}

// holds reports the file dev, ino as one of the protected files seen,
// under whatever name it has now: with Landlock only a command can hard
// link or rename a hidden .env, which it still cannot read, but the
// runner's file tools and snapshots could (tools.Env.Protected).
func (pv *protectedValues) holds(dev, ino uint64) bool {
	if pv == nil {
		return false
	}
	pv.mu.Lock()
	defer pv.mu.Unlock()
	return pv.inodes[[2]uint64{dev, ino}]
}

// see records fi's device and inode; pv.mu is held.
func (pv *protectedValues) see(fi os.FileInfo) {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		if pv.inodes == nil {
			pv.inodes = map[[2]uint64]bool{}
		}
		pv.inodes[[2]uint64{uint64(sys.Dev), sys.Ino}] = true //nolint:unconvert // Dev is uint32 on some platforms
	}
}

// fileStamp is what tells a rewritten file from the one read.
type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
}

func stampOf(fi os.FileInfo) fileStamp {
	st := fileStamp{size: fi.Size(), mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st
}

// remember records paths as read now (their values are in the redactors).
func (pv *protectedValues) remember(paths []string) {
	if pv == nil {
		return
	}
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if pv.stamps == nil {
		pv.stamps = map[string]fileStamp{}
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			pv.stamps[p] = stampOf(fi)
			pv.see(fi)
		}
	}
}

// changed returns those of paths (and the known files) that are new or
// differ from when they were read, and records them as read.
func (pv *protectedValues) changed(paths []string) []string {
	if pv == nil {
		return nil
	}
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if pv.stamps == nil {
		pv.stamps = map[string]fileStamp{}
	}
	seen := map[string]bool{}
	var out []string
	check := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return // gone, or not a file: nothing to read
		}
		st := stampOf(fi)
		pv.see(fi)
		if old, ok := pv.stamps[p]; ok && old == st {
			return
		}
		pv.stamps[p] = st
		out = append(out, p)
	}
	for _, p := range paths {
		check(p)
	}
	for p := range pv.stamps {
		check(p)
	}
	return out
}
