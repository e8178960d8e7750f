package functest

import (
	"context"
	"net/http"

	"stampduty/shared/auth"
	"stampduty/shared/rules"
	"stampduty/shared/store/localdb"
)

// OneToken is an in-memory token store (an auth.Store) that knows one
// token, Secret, of Owner, hashed with the local key (localdb.Hasher), for
// tests that run the real authenticator without DynamoDB.
type OneToken struct {
	Secret, Owner string
}

// Token returns the token's record for its hash, or ENOTFOUND as the
// DynamoDB store does.
func (o OneToken) Token(_ context.Context, hash string) (auth.Token, error) {
	if hash != localdb.Hasher().Hash(o.Secret) {
		return auth.Token{}, rules.Errorf(rules.ENOTFOUND, "no such token")
	}
	return auth.Token{Hash: hash, Owner: o.Owner}, nil
}

// DiscardWriter is an http.ResponseWriter that keeps only the status and
// the number of bytes written, so that a benchmark measures the handler
// alone.
type DiscardWriter struct {
	header http.Header
	Status int
	N      int
}

// Header returns the response headers.
func (w *DiscardWriter) Header() http.Header {
	if w.header == nil {
		w.header = http.Header{}
	}
	return w.header
}

// WriteHeader records the status.
func (w *DiscardWriter) WriteHeader(status int) { w.Status = status }

// Write counts b and drops it.
func (w *DiscardWriter) Write(b []byte) (int, error) { w.N += len(b); return len(b), nil }
