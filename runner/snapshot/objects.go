package snapshot

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// inMemoryLimit is the largest file read whole into memory to hash it;
// larger files are streamed twice (hash, then write).
const inMemoryLimit = 8 << 20

// objectCacheSize bounds go-git's decoded-object cache per storage.
const objectCacheSize = 8 * cache.MiByte

// objectStore writes loose objects into the private store and reads
// objects from it and, read-only, from the user's object database.
type objectStore struct {
	dir     string // <store>/objects
	own     *filesystem.Storage
	user    *filesystem.Storage // nil without a user repository
	mu      sync.Mutex
	present map[plumbing.Hash]bool // objects known to exist in the store (held ones too)
	fanout  map[string]bool        // objects/xx directories known to exist
	full    bool                   // a full Track is running: its blobs are not cached
	packMu  sync.Mutex             // guards pack and held
	pack    *packWriter            // the held pack, nil until an object is written after a flush
	held    map[plumbing.Hash]heldObject
	noPack  bool       // the held pack could not be created: write loose objects
	readMu  sync.Mutex // go-git storages are not safe for concurrent reads
	zpool   sync.Pool  // *zlib.Writer at BestSpeed, whose state is large to allocate
	zstore  sync.Pool  // *zlib.Writer at NoCompression
	recent  rawCache   // small objects read or written lately
}

func newObjectStore(storeDir string, userCommonDir string) *objectStore {
	s := &objectStore{
		dir:     filepath.Join(storeDir, "objects"),
		own:     newStorage(storeDir),
		present: map[plumbing.Hash]bool{},
		fanout:  map[string]bool{},
	}
	idxs, _ := filepath.Glob(filepath.Join(s.dir, "pack", "pack-*.idx"))
	for _, idx := range idxs {
		hs, err := readIdxHashes(idx)
		if err != nil {
			continue // an index git itself wrote in another version: objects are re-stored if needed
		}
		for _, h := range hs {
			s.present[h] = true
		}
	}
	if userCommonDir != "" {
		s.user = newStorage(userCommonDir)
	}
	return s
}

// newStorage opens a go-git object storage whose objects larger than
// inMemoryLimit are read lazily (from disk when read, not on lookup), so
// that a blob's size is known without loading a 200 MB file.
func newStorage(dir string) *filesystem.Storage {
	return filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRU(objectCacheSize),
		filesystem.Options{LargeObjectThreshold: inMemoryLimit})
}

// close completes the held pack and closes the storages.
func (s *objectStore) close() error {
	err := errors.Join(s.flush(), s.own.Close())
	if s.user != nil {
		err = errors.Join(err, s.user.Close())
	}
	return err
}

func (s *objectStore) loosePath(h plumbing.Hash) string {
	hx := h.String()
	return filepath.Join(s.dir, hx[:2], hx[2:])
}

// has reports whether the private store holds h (loose or packed).
func (s *objectStore) has(h plumbing.Hash) bool {
	s.mu.Lock()
	ok := s.present[h]
	s.mu.Unlock()
	if ok {
		return true
	}
	if _, err := os.Stat(s.loosePath(h)); err != nil {
		return false
	}
	s.markPresent(h)
	return true
}

func (s *objectStore) markPresent(h plumbing.Hash) {
	s.mu.Lock()
	s.present[h] = true
	s.mu.Unlock()
}

func objectHeader(typ plumbing.ObjectType, size int64) []byte {
	return append(strconv.AppendInt(append([]byte(typ.String()), ' '), size, 10), 0)
}

// hashObject returns the git object id of data.
func hashObject(typ plumbing.ObjectType, data []byte) plumbing.Hash {
	d := sha1.New()
	d.Write(objectHeader(typ, int64(len(data))))
	d.Write(data)
	var h plumbing.Hash
	copy(h[:], d.Sum(nil))
	return h
}

// writeBytes stores data as an object unless it is already present: in
// the held pack (see flush), or as a loose object where no pack can be
// created. data must not be changed afterwards (it may be cached).
func (s *objectStore) writeBytes(typ plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := hashObject(typ, data)
	if s.has(h) {
		return h, nil
	}
	s.mu.Lock()
	full := s.full
	s.mu.Unlock()
	if !full || typ == plumbing.TreeObject {
		s.recent.put(h, typ, data)
	}
	if ok, err := s.addHeld(h, typ, data, !full && len(data) <= storeLimit); ok || err != nil {
		return h, err
	}
	err := s.writeLoose(h, func(w io.Writer) (plumbing.Hash, error) {
		if _, err := w.Write(objectHeader(typ, int64(len(data)))); err != nil {
			return plumbing.ZeroHash, err
		}
		_, err := w.Write(data)
		return h, err
	})
	return h, err
}

// writeLoose writes a loose object through a temp file and a rename. fill
// writes the uncompressed object (header included) and returns the id of
// what it wrote, which must equal h.
func (s *objectStore) writeLoose(h plumbing.Hash, fill func(io.Writer) (plumbing.Hash, error)) error {
	dst := s.loosePath(h)
	if err := s.ensureFanout(filepath.Dir(dst)); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "tmp_obj_")
	if err != nil {
		return fmt.Errorf("create object: %w", err)
	}
	zw, _ := s.zpool.Get().(*zlib.Writer)
	if zw == nil {
		zw, _ = zlib.NewWriterLevel(tmp, zlib.BestSpeed)
	} else {
		zw.Reset(tmp)
	}
	defer s.zpool.Put(zw)
	got, err := fill(zw)
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = tmp.Close()
	} else {
		_ = tmp.Close()
	}
	if err == nil && got != h {
		err = errChanged
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write object %s: %w", h, err)
	}
	s.markPresent(h)
	return nil
}

func (s *objectStore) ensureFanout(dir string) error {
	s.mu.Lock()
	ok := s.fanout[dir]
	s.mu.Unlock()
	if ok {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create object dir: %w", err)
	}
	s.mu.Lock()
	s.fanout[dir] = true
	s.mu.Unlock()
	return nil
}

// writeFileBlob stores the regular file open opens (path names it in
// errors; size is its stat's) as a blob and returns its id and the
// number of bytes read.
func (s *objectStore) writeFileBlob(ctx context.Context, open func() (*os.File, error), path string, size int64) (plumbing.Hash, int64, error) {
	if size <= inMemoryLimit {
		data, err := readOpened(open, size)
		if err != nil {
			return plumbing.ZeroHash, 0, fmt.Errorf("read %s: %w", path, err)
		}
		h, err := s.writeBytes(plumbing.BlobObject, data)
		return h, int64(len(data)), err
	}
	for attempt := 0; ; attempt++ {
		h, n, err := s.streamFileBlob(ctx, open, path)
		if errors.Is(err, errChanged) && attempt < 2 {
			continue
		}
		return h, n, err
	}
}

func (s *objectStore) streamFileBlob(ctx context.Context, open func() (*os.File, error), path string) (plumbing.Hash, int64, error) {
	h, n, err := hashFileStream(ctx, open, path, io.Discard)
	if err != nil || s.has(h) {
		return h, n, err
	}
	err = s.writeLoose(h, func(w io.Writer) (plumbing.Hash, error) {
		got, m, err := hashFileStream(ctx, open, path, w)
		if err == nil && m != n {
			err = errChanged
		}
		return got, err
	})
	return h, n, err
}

// readOpened reads the whole file open returns, size its expected size.
func readOpened(open func() (*os.File, error), size int64) ([]byte, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	b.Grow(int(size) + 1)
	_, err = b.ReadFrom(f)
	return b.Bytes(), err
}

// hashFileStream hashes the file as a blob, also copying header and
// content to w. It stops with ctx's error between blocks.
func hashFileStream(ctx context.Context, open func() (*os.File, error), path string, w io.Writer) (plumbing.Hash, int64, error) {
	f, err := open()
	if err != nil {
		return plumbing.ZeroHash, 0, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return plumbing.ZeroHash, 0, fmt.Errorf("stat %s: %w", path, err)
	}
	d := sha1.New()
	hdr := objectHeader(plumbing.BlobObject, fi.Size())
	d.Write(hdr)
	if _, err := w.Write(hdr); err != nil {
		return plumbing.ZeroHash, 0, err
	}
	n, err := io.Copy(io.MultiWriter(d, w), ctxReader{ctx, f})
	if err != nil {
		if ctx.Err() != nil {
			return plumbing.ZeroHash, n, ctx.Err()
		}
		return plumbing.ZeroHash, 0, fmt.Errorf("read %s: %w", path, err)
	}
	if n != fi.Size() {
		return plumbing.ZeroHash, n, errChanged
	}
	var h plumbing.Hash
	copy(h[:], d.Sum(nil))
	return h, n, nil
}

// ctxReader reads r until ctx ends (checked before each read: io.Copy's
// 32 KiB blocks).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// lookup finds an object in the private store or the user's; the caller
// holds readMu.
func (s *objectStore) lookup(typ plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, err := s.own.EncodedObject(typ, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) && s.user != nil {
		o, err = s.user.EncodedObject(typ, h)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", typ, h, err)
	}
	return o, nil
}

// size returns an object's size in bytes; an object larger than
// inMemoryLimit is not read for it (only its header).
func (s *objectStore) size(typ plumbing.ObjectType, h plumbing.Hash) (int64, error) {
	if n, ok := unhashedSize(h); ok && typ == plumbing.BlobObject {
		return n, nil
	}
	if data, ok := s.recent.get(h, typ); ok {
		return int64(len(data)), nil
	}
	if n, ok := s.heldSize(h, typ); ok {
		return n, nil
	}
	s.readMu.Lock()
	defer s.readMu.Unlock()
	o, err := s.lookup(typ, h)
	if err != nil {
		return 0, err
	}
	return o.Size(), nil
}

// read returns an object's content from the private store or the user's
// (the held pack and the cache of recent objects first). The caller must
// not change it.
func (s *objectStore) read(typ plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	if data, ok := s.recent.get(h, typ); ok {
		return data, nil
	}
	if data, ok, err := s.readHeld(h, typ); ok || err != nil {
		if err == nil {
			s.recent.put(h, typ, data)
		}
		return data, err
	}
	data, err := s.readStored(typ, h)
	if err == nil {
		s.recent.put(h, typ, data)
	}
	return data, err
}

// readStored reads an object through go-git.
func (s *objectStore) readStored(typ plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	o, err := s.lookup(typ, h)
	if err != nil {
		return nil, err
	}
	r, err := o.Reader()
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", typ, h, err)
	}
	defer r.Close()
	var buf bytes.Buffer
	buf.Grow(int(o.Size()))
	if _, err := io.Copy(&buf, r); err != nil {
		return nil, fmt.Errorf("read %s %s: %w", typ, h, err)
	}
	return buf.Bytes(), nil
}
