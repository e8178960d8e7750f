package runtimeapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// newRequestID returns a random UUID (version 4), like Lambda's request ids.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// newTraceID returns an X-Ray trace header for a new, unsampled trace.
func newTraceID(now time.Time) string {
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", now.Unix(), randomHex(12), randomHex(8))
}

// newLogStreamName returns a log stream name shaped like Lambda's.
func newLogStreamName(now time.Time) string {
	return now.UTC().Format("2006/01/02") + "/[$LATEST]" + randomHex(16)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
