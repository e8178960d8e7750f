package runtimeapi

import (
	"bytes"
	"io"
	"slices"
	"sync"
)

// lockedWriter serialises the writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// LockedWriter returns a writer that serialises Write calls to w, so the
// whole lines of concurrent instances never interleave. It returns w itself
// when w already is one.
func LockedWriter(w io.Writer) io.Writer {
	if lw, ok := w.(*lockedWriter); ok {
		return lw
	}
	return &lockedWriter{w: w}
}

func (lw *lockedWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.Write(p)
}

// lineWriter receives one output stream of a process and copies each complete
// line to out, prefixed, in a single Write. exec.Cmd calls Write from one
// goroutine; flush must be called after cmd.Wait. It never fails (a failing
// log destination is ignored), so the process never sees a broken pipe.
type lineWriter struct {
	out    io.Writer
	prefix string
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		line, rest, ok := bytes.Cut(w.buf, []byte{'\n'})
		if !ok {
			return len(p), nil
		}
		_, _ = w.out.Write(slices.Concat([]byte(w.prefix), line, []byte{'\n'}))
		w.buf = rest
	}
}

// flush emits a last line the process did not end with a newline.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		_, _ = w.Write([]byte{'\n'})
	}
}
