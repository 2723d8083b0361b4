package sandbox

import (
	"path/filepath"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Landlock rights the sandbox grants.
const (
	readDirRights  = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir
	readFileRights = llsys.AccessFSExecute | llsys.AccessFSReadFile
	writeRights    = llsys.AccessFSWriteFile | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile | llsys.AccessFSMakeChar |
		llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSock | llsys.AccessFSMakeFifo |
		llsys.AccessFSMakeSym | llsys.AccessFSTruncate | llsys.AccessFSRefer
)

// devices are the device files every command may read and write.
func devices() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}
}

// restrictLandlock restricts this process and all it starts: write rights
// (no read rights) on the writable paths; read rights on everything (with
// namespaces, whose mounts hide the covers) or on conf.Read (Landlock
// only: everything but the covers); the devices; signals and abstract
// unix sockets only inside the sandbox; without namespaces and network,
// TCP bind and connect denied. The strongest ABI the kernel has is used
// (best effort down to ABI 1: Probe made sure there is one).
func restrictLandlock(conf helperConfig, withNamespaces bool) error {
	cfg := landlock.V11
	if withNamespaces || conf.Network {
		cfg.HandledAccessNet = 0 // the empty network namespace (or the spec) decides
	}
	rules := []landlock.Rule{
		landlock.PathAccess(writeRights, conf.Writable...).IgnoreIfMissing(),
		landlock.RWFiles(devices()...).WithIoctlDev().IgnoreIfMissing(),
		landlock.PathAccess(readDirRights, "/dev/pts").IgnoreIfMissing(),
	}
	if p := conf.Proxy; p != nil {
		// ABI ≥ 9 restricts connect(2) to path sockets made outside the
		// domain: the forwarder's to the proxy (its own directory).
		rules = append(rules, landlock.PathAccess(llsys.AccessFSResolveUnix, filepath.Dir(p.Socket)))
		if !withNamespaces {
			rules = append(rules, landlock.ConnectTCP(uint16(p.Port))) // the runner's forwarder: the only TCP port
		}
	}
	if withNamespaces || len(conf.Covers) == 0 {
		rules = append(rules, landlock.PathAccess(readDirRights, "/"))
	} else {
		rules = append(rules,
			landlock.PathAccess(readDirRights, conf.Read.Dirs...).IgnoreIfMissing(),
			landlock.PathAccess(readFileRights, conf.Read.Files...).IgnoreIfMissing(),
			landlock.PathAccess(llsys.AccessFSReadDir, conf.Read.Listed...).IgnoreIfMissing())
	}
	return cfg.BestEffort().Restrict(rules...)
}
