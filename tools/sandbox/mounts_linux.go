package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// setupMounts shapes the helper's private mount namespace: every mount
// read-only, the writable paths bound read-write over themselves, the
// read-only paths bound read-only, covers bound over with the empty file
// or directory, a fresh /proc (this PID namespace only) and a private
// /dev/shm. Sources are opened before anything is covered, so a writable
// path below a hidden directory stays reachable.
func setupMounts(conf helperConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	if err := readOnlyAll(); err != nil {
		return err
	}
	writable := slices.Clone(conf.Writable)
	slices.SortFunc(writable, func(a, b string) int { return len(a) - len(b) }) // parents first
	for _, w := range writable {
		if err := bindSelf(w, false); err != nil {
			return err
		}
	}
	for _, r := range conf.ReadOnly {
		if err := bindSelf(r, true); err != nil {
			return err
		}
	}
	for _, c := range conf.Covers {
		// What the path is now, not when the cover was computed: a file
		// removed since hides nothing, one replaced by a directory (or
		// back) gets the other kind of cover.
		fi, err := os.Stat(c.Path)
		if os.IsNotExist(err) {
			continue
		}
		src := conf.Empty
		if err == nil && fi.IsDir() {
			src = conf.EmptyDir
		}
		if err := unix.Mount(src, c.Path, "", unix.MS_BIND, ""); errors.Is(err, unix.ENOENT) {
			continue // gone since the covers were listed (a daemon's socket, a deleted file): nothing to hide
		} else if err != nil {
			return fmt.Errorf("hide %s: %w", c.Path, err)
		}
		if err := remount(c.Path, true); err != nil {
			return fmt.Errorf("hide %s: %w", c.Path, err)
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64m,mode=1777"); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	return nil
}

// readOnlyAll remounts every mount point read-only, keeping the flags the
// kernel locks in a user namespace (nosuid, nodev, noexec, atime). /proc
// mounts are left alone (a new /proc goes on top); device nodes stay
// writable on a read-only mount (/dev/null). A mount that cannot be
// remounted fails the setup, except below /sys.
func readOnlyAll() error {
	points, err := mountPoints()
	if err != nil {
		return err
	}
	for _, mp := range points {
		if within(mp, "/proc") {
			continue
		}
		if err := remount(mp, true); err != nil && !within(mp, "/sys") {
			return fmt.Errorf("read-only %s: %w", mp, err)
		}
	}
	return nil
}

// bindSelf binds p over itself (recursively) and sets the top mount
// read-only or read-write.
func bindSelf(p string, readOnly bool) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", p, err)
	}
	if err := remount(p, readOnly); err != nil {
		return fmt.Errorf("bind %s: %w", p, err)
	}
	return nil
}

// remount changes the mount at p to read-only or read-write, keeping its
// other per-mount flags.
func remount(p string, readOnly bool) error {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT)
	for _, f := range []struct{ st, ms int64 }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if st.Flags&f.st != 0 {
			flags |= uintptr(f.ms)
		}
	}
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	return unix.Mount("", p, "", flags, "")
}

// mountPoints lists this namespace's mount points from
// /proc/self/mountinfo, parents before children.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if !slices.Contains(out, mp) {
			out = append(out, mp)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b string) int {
		return strings.Count(filepath.Clean(a), "/") - strings.Count(filepath.Clean(b), "/")
	})
	return out, nil
}

// unescapeMountinfo undoes the octal escapes (\040 for a space) of
// mountinfo fields.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// loopbackUp sets lo up in the new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// dropCapabilities empties the bounding, inheritable and ambient sets of
// this thread (the command forks from it), so the command, even as uid 0
// in the user namespace, execs with no capability: it cannot unmount the
// read-only binds or remount anything.
func dropCapabilities() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	return unix.Capset(&hdr, &data[0])
}

// children lists pid's children (all its threads').
func children(pid int) []int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
