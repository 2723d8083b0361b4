package tools

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// checkedKey carries, in a call's context, the targets Guard checked: the
// tool must act on the file that was judged, not resolve the raw path a
// second time (a symlink may have changed in between).
type checkedKey struct{}

// withChecked records the targets checked for a call, by raw path.
func withChecked(ctx context.Context, targets map[string]permission.Target) context.Context {
	if len(targets) == 0 {
		return ctx
	}
	return context.WithValue(ctx, checkedKey{}, targets)
}

// resolve turns a tool's path argument into the file to open: the target
// Guard checked when there is one, else a fresh resolution.
func (b base) resolve(ctx context.Context, name string) (permission.Target, error) {
	if b.pathsErr != nil {
		return permission.Target{}, b.pathsErr
	}
	if m, ok := ctx.Value(checkedKey{}).(map[string]permission.Target); ok {
		if t, ok := m[name]; ok {
			return t, nil
		}
	}
	return b.paths.Resolve(name)
}

// Target paths are fully resolved when checked, so their last component is
// never a symlink: opening with O_NOFOLLOW refuses one that appeared since.
// Inside the work tree files are opened through an os.Root, which refuses
// any symlink that leads out of the tree.

// openTarget opens t with flag and perm.
func (b base) openTarget(t permission.Target, flag int, perm os.FileMode) (*os.File, error) {
	flag |= syscall.O_NOFOLLOW
	if !t.Inside {
		return os.OpenFile(t.Abs, flag, perm)
	}
	r, err := os.OpenRoot(b.paths.Root())
	if err != nil {
		return nil, fmt.Errorf("open work tree: %w", err)
	}
	defer r.Close()
	return r.OpenFile(filepath.FromSlash(t.Rel), flag, perm)
}

// statTarget is Lstat of t (its last component is not a symlink).
func (b base) statTarget(t permission.Target) (os.FileInfo, error) {
	if !t.Inside {
		return os.Lstat(t.Abs)
	}
	r, err := os.OpenRoot(b.paths.Root())
	if err != nil {
		return nil, fmt.Errorf("open work tree: %w", err)
	}
	defer r.Close()
	return r.Lstat(filepath.FromSlash(t.Rel))
}

// protectedFd reports the open file fd as a protected file under
// another name (Env.Protected).
func (b base) protectedFd(fd int) bool {
	if b.env.Protected == nil {
		return false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return true // cannot tell: not shown
	}
	return b.env.Protected(uint64(st.Dev), st.Ino) //nolint:unconvert // Dev is uint32 on some platforms
}

// errProtectedName is the error for a file protectedFd refuses.
func errProtectedName(t permission.Target) error {
	return fmt.Errorf("%s is a protected file under another name (a hard link to, or a rename of, a file the read rules deny, such as .env): its content is not shown", display(t))
}

// readTarget reads the whole file t.
func (b base) readTarget(t permission.Target) ([]byte, error) {
	f, err := b.openTarget(t, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if b.protectedFd(int(f.Fd())) {
		return nil, errProtectedName(t)
	}
	return io.ReadAll(f)
}

// writeTarget writes data to t, creating parent directories and keeping
// the mode of an existing file. It reports whether the file was created.
func (b base) writeTarget(t permission.Target, data []byte) (bool, error) {
	mode := os.FileMode(0o644)
	created := true
	if fi, err := b.statTarget(t); err == nil {
		mode, created = fi.Mode().Perm(), false
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() && st.Nlink > 1 {
			return false, fmt.Errorf("%s has %d hard links: writing it would also change the file under its other names, "+
				"which may lie outside the work tree; %w", display(t), st.Nlink, ErrHardLink)
		}
	}
	if err := b.mkdirParents(t); err != nil {
		return false, fmt.Errorf("create parent directories: %w", err)
	}
	f, err := b.openTarget(t, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return false, fmt.Errorf("write %s: %w", display(t), err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return false, fmt.Errorf("write %s: %w", display(t), err)
	}
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("write %s: %w", display(t), err)
	}
	return created, nil
}

// mkdirParents creates the directories above t.
func (b base) mkdirParents(t permission.Target) error {
	if !t.Inside {
		return os.MkdirAll(filepath.Dir(t.Abs), 0o755)
	}
	dir := path.Dir(t.Rel)
	if dir == "." {
		return nil
	}
	r, err := os.OpenRoot(b.paths.Root())
	if err != nil {
		return fmt.Errorf("open work tree: %w", err)
	}
	defer r.Close()
	return r.MkdirAll(filepath.FromSlash(dir), 0o755)
}
