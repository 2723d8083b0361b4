package snapshot

import (
	"bufio"
	"compress/zlib"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// The held pack. Every object a Track writes (but blobs over
// inMemoryLimit) is appended to one pack file that stays open from one
// Track to the next, and is readable from it at once; flush completes it
// with its index, after which go-git (and git) read it like any pack.
// A full Track flushes at its end and Close flushes, both before the stat
// cache is saved, so the saved cache never names an object that is not
// complete on disk; a step's TrackPaths or TrackChanged does not. A
// loose object is a file of its own per blob and per tree, and creating
// a file was the dearest thing a step did (about 0.5 ms of CPU on the
// ext4 file system of the machine BenchmarkBashStepCPU ran on).
//
// A runner killed before it flushed leaves the pack unfinished
// (objects/pack/tmp_pack_*, no index): the objects only its steps wrote
// are lost, which nothing needs (a later run's Track writes what its
// work tree holds; the saved stat cache names none of them), and the next
// Open removes the file.

// heldObject is where an object of the held pack is.
type heldObject struct {
	typ  plumbing.ObjectType
	size int64 // uncompressed
	off  int64 // of its zlib stream in the pack file
}

// addHeld appends an object to the held pack (uncompressed when small),
// creating the pack when there is none; ok is false (and nothing written)
// when no pack can be created, and the caller writes a loose object.
func (s *objectStore) addHeld(h plumbing.Hash, typ plumbing.ObjectType, data []byte, small bool) (ok bool, err error) {
	z := s.compress(data, small)
	s.packMu.Lock()
	defer s.packMu.Unlock()
	if s.noPack {
		return false, nil
	}
	if _, dup := s.held[h]; dup {
		return true, nil
	}
	if s.pack == nil {
		p, err := newPackWriter(s.dir)
		if err != nil {
			s.noPack = true // keep writing loose objects
			return false, nil
		}
		s.pack, s.held = p, map[plumbing.Hash]heldObject{}
	}
	off, err := s.pack.add(h, typ, int64(len(data)), z)
	if err != nil {
		return true, err
	}
	s.held[h] = heldObject{typ: typ, size: int64(len(data)), off: off}
	s.markPresent(h)
	return true, nil
}

// heldSize is the size of an object of the held pack.
func (s *objectStore) heldSize(h plumbing.Hash, typ plumbing.ObjectType) (int64, bool) {
	s.packMu.Lock()
	defer s.packMu.Unlock()
	o, ok := s.held[h]
	return o.size, ok && o.typ == typ
}

// readHeld reads an object of the held pack; ok is false when the pack
// does not hold it.
func (s *objectStore) readHeld(h plumbing.Hash, typ plumbing.ObjectType) (data []byte, ok bool, err error) {
	s.packMu.Lock()
	defer s.packMu.Unlock()
	o, ok := s.held[h]
	if !ok || o.typ != typ {
		return nil, false, nil
	}
	if err := s.pack.w.Flush(); err != nil {
		return nil, true, fmt.Errorf("read %s %s: %w", typ, h, err)
	}
	zr, err := zlib.NewReader(bufio.NewReader(io.NewSectionReader(s.pack.f, o.off, s.pack.off-o.off)))
	if err != nil {
		return nil, true, fmt.Errorf("read %s %s: %w", typ, h, err)
	}
	data = make([]byte, o.size)
	if _, err := io.ReadFull(zr, data); err != nil {
		return nil, true, fmt.Errorf("read %s %s: %w", typ, h, err)
	}
	return data, true, nil
}

// flush completes the held pack with its index and makes go-git read it.
func (s *objectStore) flush() error {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	s.packMu.Lock()
	defer s.packMu.Unlock()
	p := s.pack
	if p == nil {
		return nil
	}
	s.pack = nil
	err := p.finish()
	s.own.Reindex()
	if err != nil {
		// The objects are gone: no later write may skip them as present.
		s.mu.Lock()
		for h := range s.held {
			delete(s.present, h)
		}
		s.mu.Unlock()
	}
	s.held = nil
	return err
}

// beginFull marks a full Track: its blobs are not cached (a whole work
// tree would only push the recent objects out).
func (s *objectStore) beginFull() {
	s.mu.Lock()
	s.full = true
	s.mu.Unlock()
}

// endFull ends a full Track and flushes what it wrote.
func (s *objectStore) endFull() error {
	s.mu.Lock()
	s.full = false
	s.mu.Unlock()
	return s.flush()
}

// removeUnfinishedPacks removes the packs killed runners left unfinished
// (the caller holds the store's lock: no live Store writes them).
func removeUnfinishedPacks(objectsDir string) {
	tmps, _ := filepath.Glob(filepath.Join(objectsDir, "pack", "tmp_pack_*"))
	for _, t := range tmps {
		_ = os.Remove(t)
	}
}

// rawCacheBytes bounds the cache of recent objects (twice this at most,
// in two generations); objects over rawCacheObject bytes are not cached.
const (
	rawCacheBytes  = 4 << 20
	rawCacheObject = 256 << 10
)

// rawCache holds the content of objects read or written lately, so that
// the diff after each step reads the trees along the changed paths and
// the changed blobs from memory. Two generations: an entry read from the
// old one moves to the new one; when the new one is full, it becomes the
// old one and the old one is dropped.
type rawCache struct {
	mu       sync.Mutex
	cur, old map[plumbing.Hash]rawObject
	bytes    int // in cur
}

type rawObject struct {
	typ  plumbing.ObjectType
	data []byte
}

func (c *rawCache) get(h plumbing.Hash, typ plumbing.ObjectType) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.cur[h]
	if !ok {
		if o, ok = c.old[h]; ok {
			c.add(h, o)
		}
	}
	return o.data, ok && o.typ == typ
}

func (c *rawCache) put(h plumbing.Hash, typ plumbing.ObjectType, data []byte) {
	if len(data) > rawCacheObject {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cur[h]; !ok {
		c.add(h, rawObject{typ: typ, data: data})
	}
}

// add puts o into the new generation; the caller holds mu.
func (c *rawCache) add(h plumbing.Hash, o rawObject) {
	if c.cur == nil || c.bytes+len(o.data) > rawCacheBytes {
		c.old, c.cur, c.bytes = c.cur, map[plumbing.Hash]rawObject{}, 0
	}
	c.cur[h] = o
	c.bytes += len(o.data)
}
