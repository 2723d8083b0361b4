//go:build linux && !amd64 && !arm64

package sandbox

// No seccomp filter on this architecture: Probe reports Landlock missing.
const (
	seccompArch = 0
	sysSocket   = 0
	sysConnect  = 0
	sysSendto   = 0
	sysIoctl    = 0

	sysKill             = 0
	sysTkill            = 0
	sysTgkill           = 0
	sysRtSigqueueinfo   = 0
	sysRtTgsigqueueinfo = 0
	sysPidfdOpen        = 0
	sysPidfdSendSignal  = 0
	sysPrlimit64        = 0
)

var sysRefused []uint32
