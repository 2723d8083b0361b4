//go:build linux

package treewalk

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readDirents lists the directory open as fd, sorted by name (as
// os.ReadDir), without "." and "..". Entries whose type the file system
// does not report are lstat'ed.
func readDirents(fd int) ([]dirent, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []dirent
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("getdents: %w", err)
		}
		if n <= 0 {
			break
		}
		out = parseDirents(fd, buf[:n], out)
	}
	slices.SortFunc(out, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// parseDirents decodes linux_dirent64 records (d_ino u64, d_off i64,
// d_reclen u16, d_type u8, d_name NUL-terminated) appending to out.
func parseDirents(fd int, b []byte, out []dirent) []dirent {
	for len(b) >= 19 {
		reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
		if reclen < 19 || reclen > len(b) {
			break
		}
		rec := b[:reclen]
		b = b[reclen:]
		name := rec[19:]
		if i := slices.Index(name, 0); i >= 0 {
			name = name[:i]
		}
		if len(name) == 0 || (name[0] == '.' && (len(name) == 1 || (len(name) == 2 && name[1] == '.'))) {
			continue
		}
		d := dirent{name: string(name)}
		switch rec[18] {
		case unix.DT_REG:
		case unix.DT_DIR:
			d.typ = fs.ModeDir
		case unix.DT_LNK:
			d.typ = fs.ModeSymlink
		case unix.DT_UNKNOWN:
			d.typ = lstatType(fd, d.name)
		default:
			d.typ = fs.ModeIrregular
		}
		out = append(out, d)
	}
	return out
}
