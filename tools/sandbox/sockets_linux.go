package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// listeningSockets lists the path unix sockets bound in the runner's
// network namespace (/proc/net/unix: every daemon's socket on this
// machine, e.g. a session bus in $XDG_RUNTIME_DIR, an ssh agent or X11 in
// /tmp, Docker's), absolute and existing, sorted. A connection to one of
// them leaves the sandbox: the daemon acts for the command (the user's
// systemd runs programs, Docker mounts /). With namespaces each is covered
// like HostSockets; sockets bound after the sandbox was built are not.
// Abstract sockets need no cover: they belong to the network namespace
// (and Landlock ABI ≥ 6 scopes them).
func listeningSockets() []string {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// Num RefCount Protocol Flags Type St Inode Path
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || !strings.HasPrefix(fields[7], "/") {
			continue
		}
		p := filepath.Clean(strings.Join(fields[7:], " "))
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSocket != 0 && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
