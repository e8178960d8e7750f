//go:build unix

package runtimeapi

import (
	"os/exec"
	"syscall"
)

// isolate puts the process in its own process group, so killGroup reaches the
// processes it starts too.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process and everything in its process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH: already gone
	_ = cmd.Process.Kill()
}
