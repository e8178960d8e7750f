// Package syncbuf is a bytes.Buffer for the logs of concurrent writers
// (function instances, the local runtime), read while they write. It is
// apart from functest so that a program that only collects logs (cmd/bench)
// does not link functest and, through it, the OpenAPI validator.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent writers and readers.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
