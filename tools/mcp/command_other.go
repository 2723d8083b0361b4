//go:build !linux

package mcp

import "syscall"

// processAttrs puts the server in its own process group.
func processAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
