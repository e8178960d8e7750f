package duty

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/gowebpki/jcs"
)

// Hash returns a rule version's identity (duty-rules.md §7): "sha256:"
// and the 64 hex digits of the SHA-256 of its canonical JSON, RFC 8785
// (keys sorted by UTF-16 code units, no whitespace, strings escaped only
// where JSON requires, UTF-8). version is the version's JSON as stored or
// sent; the same rule however it was spaced or ordered has one hash.
//
// The canonical form is github.com/gowebpki/jcs's, the RFC's authors'
// reference implementation ported to a Go module: canonical JSON is a
// format a caller may recompute in another language, so a library kept to
// the RFC's test vectors serves it better than a walk of our own.
func Hash(version []byte) (string, error) {
	c, err := jcs.Transform(version)
	if err != nil {
		return "", fmt.Errorf("the canonical JSON of a rule version: %w", err)
	}
	sum := sha256.Sum256(c)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Canonical returns version's canonical JSON (RFC 8785), the bytes Hash
// hashes.
func Canonical(version []byte) ([]byte, error) {
	c, err := jcs.Transform(version)
	if err != nil {
		return nil, fmt.Errorf("the canonical JSON of a rule version: %w", err)
	}
	return c, nil
}
