package mcp

import "syscall"

// processAttrs puts the server in its own process group and has the
// kernel kill it when the runner's thread that started it dies.
func processAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
