//go:build !unix

package runtimeapi

import "os/exec"

// isolate does nothing where process groups are not available.
func isolate(*exec.Cmd) {}

// killGroup kills the process; its children survive where process groups are
// not available.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
