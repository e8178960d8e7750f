// Package fake holds in-memory stand-ins for the stores, for tests that do
// not need DynamoDB (fuzzers, warm benchmarks, pure handler and workflow
// tests): each answers as its counterpart in shared/store does (the same
// errors, the same paging rules) and is safe for concurrent use.
package fake

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
)

// Articles is a read-only catalogue: an orders.Articles, and the article
// list's source.
type Articles []stampduty.Article

// Get returns the article of (purpose, state), or the store's ENOTFOUND.
func (a Articles) Get(_ context.Context, purpose, state string) (stampduty.Article, error) {
	for _, art := range a {
		if art.PurposeName == purpose && art.State == state {
			return art, nil
		}
	}
	return stampduty.Article{}, stampduty.NotFoundPurpose(purpose)
}

// All returns the catalogue itself, the same slice every time as the
// article cache does, so that a caller reordering it in place is caught.
func (a Articles) All(context.Context) ([]stampduty.Article, error) { return a, nil }

// Window returns the articles at positions [start, start+limit) in the
// order of one sort field (stampduty.ArticleOrder) and how many
// there are, as store.SnapshotCache does.
func (a Articles) Window(_ context.Context, order string, start, limit int) ([]stampduty.Article, int, error) {
	sorted := slices.Clone(a)
	stampduty.SortArticlesBy(sorted, order)
	start = min(max(start, 0), len(sorted))
	return sorted[start : start+min(max(limit, 0), len(sorted)-start)], len(sorted), nil
}

// Created is one order the Orders store was asked to create.
type Created struct {
	Owner string
	Order stampduty.Order
}

// Orders is an orders.Store and the order list's source, keeping every
// order in the order it was created.
type Orders struct {
	mu       sync.Mutex
	created  []Created
	reserved map[string]int64
}

// Create stores o as owner's newest order and returns its seq: 1 for the
// owner's first order, and so on. Its pending events are not kept.
func (s *Orders) Create(ctx context.Context, owner string, o stampduty.Order, _ ...stampduty.Pending) (int64, error) {
	seq, _ := s.Reserve(ctx, owner)
	return s.Put(ctx, owner, seq, o)
}

// Reserve returns owner's next seq: 1 for its first order, and so on.
func (s *Orders) Reserve(_ context.Context, owner string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reserved == nil {
		s.reserved = map[string]int64{}
	}
	s.reserved[owner]++
	return s.reserved[owner], nil
}

// Put stores o as owner's newest order (in the order of the calls, whatever
// seq says) and returns seq; o reads with the owner key's Livemode, as the
// DynamoDB store's orders do. Its pending events are not kept.
func (s *Orders) Put(_ context.Context, owner string, seq int64, o stampduty.Order, _ ...stampduty.Pending) (int64, error) {
	_, o.Livemode = stampduty.CallerOf(owner)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.created = append(s.created, Created{Owner: owner, Order: o})
	return seq, nil
}

// Void gives up a seq Reserve handed out: the fake keeps nothing at a seq
// until Put, so there is nothing to mark.
func (s *Orders) Void(context.Context, string, int64) (bool, error) { return true, nil }

// Find returns owner's order that doc names (stampduty.SameOrderID) when
// it was created at or after since.
func (s *Orders) Find(_ context.Context, owner, doc string, since time.Time) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.of(owner) {
		if stampduty.SameOrderID(o.DocumentID, doc) && o.CreatedAt >= stampduty.FormatTime(since) {
			return o.DocumentID, true, nil
		}
	}
	return "", false, nil
}

// Slice returns limit of owner's orders, newest first, skipping the start
// newest, and the total, with the DynamoDB store's rules: past the end is
// empty (not nil).
func (s *Orders) Slice(_ context.Context, owner string, start, limit int) ([]stampduty.Order, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	own := s.of(owner)
	total := len(own)
	if start < 0 || limit < 1 || start >= total {
		return []stampduty.Order{}, total, nil
	}
	hi := total - start // the newest seq of the slice
	out := slices.Clone(own[max(0, hi-limit):hi])
	slices.Reverse(out)
	return out, total, nil
}

// ByDocuments returns owner's orders among docs, newest first.
func (s *Orders) ByDocuments(_ context.Context, owner string, docs []string) ([]stampduty.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []stampduty.Order{}
	for _, o := range slices.Backward(s.of(owner)) {
		if slices.Contains(docs, o.DocumentID) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Created returns every order created so far, oldest first.
func (s *Orders) Created() []Created {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.created)
}

// of returns owner's orders, oldest first; s.mu is held.
func (s *Orders) of(owner string) []stampduty.Order {
	own := []stampduty.Order{}
	for _, c := range s.created {
		if c.Owner == owner {
			own = append(own, c.Order)
		}
	}
	return own
}

// Tokens is a read-only auth.Store: token records by hash.
type Tokens map[string]auth.Token

// NewTokens returns the store of owners' tokens (secret → owner), hashed with h.
func NewTokens(h *auth.Hasher, owners map[string]string) Tokens {
	t := Tokens{}
	for secret, owner := range owners {
		hash := h.Hash(secret)
		t[hash] = auth.Token{Hash: hash, Owner: owner}
	}
	return t
}

// Token returns the record of hash, or the store's ENOTFOUND.
func (t Tokens) Token(_ context.Context, hash string) (auth.Token, error) {
	if tok, ok := t[hash]; ok {
		return tok, nil
	}
	return auth.Token{}, stampduty.Errorf(stampduty.ENOTFOUND, "no such token")
}

// DiscardWriter is an http.ResponseWriter that keeps only the status and
// the number of bytes written, so that a benchmark measures the handler
// alone. It is for one goroutine.
type DiscardWriter struct {
	header    http.Header
	Status, N int
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

// Files is an orders.Files that keeps nothing and signs every file with an
// address made of its key.
type Files struct{}

// Put accepts the file and keeps nothing.
func (Files) Put(context.Context, string, string, []byte, [32]byte) error { return nil }

// Purge accepts and does nothing.
func (Files) Purge(context.Context, string) error { return nil }

// Sign sets each file's URL to https://files.example/<key>.
func (Files) Sign(_ context.Context, o *stampduty.Order) error {
	for _, f := range o.Files() {
		f.URL = "https://files.example/" + f.Key
	}
	return nil
}
