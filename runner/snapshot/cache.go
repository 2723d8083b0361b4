package snapshot

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// cacheMagic starts the stat cache file; bump the digit on format changes.
const cacheMagic = "RSNAPC1\n"

func (s *Store) cachePath() string { return filepath.Join(s.storeDir, "stat-cache") }

// saveCache writes the current state atomically. Records are in
// depth-first git order: path, mode, hash (tree hash for directories),
// then size, mtime, ctime (ns), inode and the racy flag.
func (s *Store) saveCache() error {
	tmp, err := os.CreateTemp(s.storeDir, "stat-cache.tmp")
	if err != nil {
		return fmt.Errorf("save stat cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<16)
	bw.WriteString(cacheMagic)
	writeNode(bw, "", s.state)
	err = bw.Flush()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.cachePath())
	}
	if err != nil {
		return fmt.Errorf("save stat cache: %w", err)
	}
	s.cacheDirty = false
	return nil
}

func writeNode(w *bufio.Writer, dir string, d *dirNode) {
	var buf [binary.MaxVarintLen64]byte
	for i := range d.entries {
		e := &d.entries[i]
		p := joinRel(dir, e.name)
		w.Write(buf[:binary.PutUvarint(buf[:], uint64(len(p)))])
		w.WriteString(p)
		var rec [20 + 4 + 8*3 + 4 + 1]byte
		binary.LittleEndian.PutUint32(rec[0:], e.mode)
		copy(rec[4:], e.hash[:])
		binary.LittleEndian.PutUint64(rec[24:], uint64(e.st.size))
		binary.LittleEndian.PutUint64(rec[32:], uint64(e.st.mtime))
		binary.LittleEndian.PutUint64(rec[40:], uint64(e.st.ctime))
		binary.LittleEndian.PutUint32(rec[48:], e.st.ino)
		if e.st.racy {
			rec[52] = 1
		}
		w.Write(rec[:])
		if e.mode == modeDir {
			writeNode(w, p, e.dir)
		}
	}
}

// loadCache reads the stat cache into a state whose directory nodes carry
// their tree hashes. It returns nil, nil when there is no cache file.
func (s *Store) loadCache() (*dirNode, error) {
	f, err := os.Open(s.cachePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load stat cache: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	magic := make([]byte, len(cacheMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != cacheMagic {
		return nil, ErrCorruptCache
	}
	root := &dirNode{}
	nodes := map[string]*dirNode{"": root}
	var pbuf []byte
	var rec [53]byte
	for {
		n, err := binary.ReadUvarint(br)
		if err == io.EOF {
			break
		}
		if err != nil || n > 1<<16 {
			return nil, ErrCorruptCache
		}
		p := slices.Grow(pbuf[:0], int(n))[:n] // one buffer for every path: an entry keeps only its name
		pbuf = p
		if _, err := io.ReadFull(br, p); err != nil {
			return nil, ErrCorruptCache
		}
		if _, err := io.ReadFull(br, rec[:]); err != nil {
			return nil, ErrCorruptCache
		}
		if err := addCached(nodes, p, &rec); err != nil {
			return nil, err
		}
	}
	if err := validateTrees(root); err != nil {
		return nil, err
	}
	return root, nil
}

// addCached adds the record of path p to its directory's node. The
// entry's name is a string of its own: a substring of the whole path
// would keep the directory's part alive once for every file.
func addCached(nodes map[string]*dirNode, p []byte, rec *[53]byte) error {
	dir, name := p[:0], p
	if i := bytes.LastIndexByte(p, '/'); i >= 0 {
		dir, name = p[:i], p[i+1:]
	}
	parent := nodes[string(dir)]
	if parent == nil || len(name) == 0 {
		return ErrCorruptCache
	}
	e := entry{name: string(name), mode: binary.LittleEndian.Uint32(rec[0:])}
	copy(e.hash[:], rec[4:24])
	e.st = statInfo{
		size:  int64(binary.LittleEndian.Uint64(rec[24:])),
		mtime: int64(binary.LittleEndian.Uint64(rec[32:])),
		ctime: int64(binary.LittleEndian.Uint64(rec[40:])),
		ino:   binary.LittleEndian.Uint32(rec[48:]),
		racy:  rec[52] != 0,
	}
	if e.mode == modeDir {
		e.dir = &dirNode{tree: e.hash, valid: true}
		nodes[string(p)] = e.dir
	}
	parent.entries = append(parent.entries, e)
	return nil
}

// validateTrees checks that every directory's entries are in git order,
// which a truncated or foreign file would break.
func validateTrees(root *dirNode) error {
	for i := 1; i < len(root.entries); i++ {
		if !gitLess(&root.entries[i-1], &root.entries[i]) {
			return ErrCorruptCache
		}
	}
	for i := range root.entries {
		if d := root.entries[i].dir; d != nil {
			if err := validateTrees(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// seedState builds a previous state from the user's index so the first
// Track reuses the index's blob hashes for files whose stat matches.
// Directory nodes have no tree hash yet.
func seedState(ts *trackedSet) *dirNode {
	root := &dirNode{}
	nodes := map[string]*dirNode{"": root}
	var ensure func(dir string) *dirNode
	ensure = func(dir string) *dirNode {
		if n := nodes[dir]; n != nil {
			return n
		}
		parent, name := "", dir
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			parent, name = dir[:i], dir[i+1:]
		}
		n := &dirNode{}
		p := ensure(parent)
		p.entries = append(p.entries, entry{name: name, mode: modeDir, dir: n})
		nodes[dir] = n
		return n
	}
	for p, tf := range ts.files {
		if !tf.seedable(ts.mtime) {
			continue
		}
		dir, name := "", p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			dir, name = p[:i], p[i+1:]
		}
		d := ensure(dir)
		d.entries = append(d.entries, entry{name: name, mode: tf.mode, hash: tf.hash, st: tf.st})
	}
	for _, n := range nodes {
		sortEntries(n.entries)
	}
	return root
}
