package store

import (
	"context"
	"strings"
	"sync"
	"time"

	"stampduty/shared/stampduty"
)

// ArticleCache serves articles from memory for a short TTL, per Lambda
// instance: a (purpose, state) lookup, found or not, and the whole catalogue
// are each read from DynamoDB at most once per TTL. An article changed by an
// import is therefore seen by every instance within TTL.
//
// Any caller with a token chooses the keys, so the lookups a request can
// make must not grow memory: a key no article can have
// (stampduty.ValidArticleKey) is answered without being cached, a cached key is
// a copy (never a substring that would pin a whole request body), and the
// lookups held together stay under MaxCacheBytes.
type ArticleCache struct {
	src      *Articles
	ttl      time.Duration
	now      func() time.Time
	versions *SnapshotCache // nil: lookups expire after ttl

	mu     sync.Mutex
	byKey  map[[2]string]articleEntry
	bytes  int // what byKey holds, as entrySize counts it
	all    []stampduty.Article
	allExp time.Time
}

// MaxCacheBytes bounds the memory an ArticleCache's lookups hold: keys,
// articles and not-found messages, counted generously. A key is at most
// 200 characters (800 bytes), so it holds a few thousand lookups.
const MaxCacheBytes = 1 << 20

type articleEntry struct {
	art     stampduty.Article
	err     error // the ENOTFOUND error when there is no such article
	expires time.Time
	version string // the snapshot it was read under (versioned caches)
}

// entrySize is what one cached lookup is counted as: its strings and a
// fixed allowance for the map slot, the article and the error.
func entrySize(k [2]string, e articleEntry) int {
	n := 256 + 2*len(k[0]) + len(k[1]) + len(e.art.PurposeName) + len(e.art.State) + len(e.art.DocumentID)
	if e.err != nil {
		n += len(e.err.Error())
	}
	return n
}

// NewArticleCache returns a cache over src with the given TTL.
func NewArticleCache(src *Articles, ttl time.Duration) *ArticleCache {
	return &ArticleCache{src: src, ttl: ttl, now: time.Now, byKey: map[[2]string]articleEntry{}}
}

// NewVersionedArticleCache returns a cache over src whose lookups, found
// or not, hold for as long as the published catalogue's version (read
// through versions, at most once per its TTL) stays the same: an unchanged
// catalogue costs one small read per TTL, however many keys are cached.
// Before any snapshot is published, lookups expire after versions' TTL, as
// NewArticleCache's do.
func NewVersionedArticleCache(src *Articles, versions *SnapshotCache) *ArticleCache {
	c := NewArticleCache(src, versions.ttl)
	c.versions = versions
	return c
}

// Get returns the article of (purpose, state), as Articles.Get does.
func (c *ArticleCache) Get(ctx context.Context, purpose, state string) (stampduty.Article, error) {
	if !stampduty.ValidArticleKey(purpose, state) {
		return stampduty.Article{}, stampduty.NotFoundPurpose(purpose)
	}
	var version string
	if c.versions != nil {
		s, _, err := c.versions.Current(ctx)
		if err != nil {
			return stampduty.Article{}, err
		}
		version = s.Version
	}
	k := [2]string{purpose, state}
	now := c.now()
	c.mu.Lock()
	e, ok := c.byKey[k]
	c.mu.Unlock()
	if ok && e.version == version && (version != "" || now.Before(e.expires)) {
		return e.art, e.err
	}
	a, err := c.src.Get(ctx, purpose, state)
	if err != nil && stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
		return a, err // faults are not cached
	}
	c.put([2]string{strings.Clone(purpose), strings.Clone(state)},
		articleEntry{art: a, err: err, expires: now.Add(c.ttl), version: version}, now)
	return a, err
}

// put caches one lookup, first making room: expired lookups go, and when
// that is not enough, all of them (a flood of new keys must not grow memory,
// and a full cache costs only reads).
func (c *ArticleCache) put(k [2]string, e articleEntry, now time.Time) {
	size := entrySize(k, e)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.byKey[k]; ok {
		c.bytes -= entrySize(k, old)
		delete(c.byKey, k)
	}
	if c.bytes+size > MaxCacheBytes {
		for ok, old := range c.byKey {
			if !now.Before(old.expires) || old.version != e.version {
				c.bytes -= entrySize(ok, old)
				delete(c.byKey, ok)
			}
		}
		if c.bytes+size > MaxCacheBytes {
			clear(c.byKey)
			c.bytes = 0
		}
	}
	c.byKey[k] = e
	c.bytes += size
}

// Bytes returns what the cached lookups hold, as counted against MaxCacheBytes.
func (c *ArticleCache) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// All returns every article, as Articles.All does. The slice is shared:
// callers must not change it.
func (c *ArticleCache) All(ctx context.Context) ([]stampduty.Article, error) {
	now := c.now()
	c.mu.Lock()
	all, exp := c.all, c.allExp
	c.mu.Unlock()
	if all != nil && now.Before(exp) {
		return all, nil
	}
	all, err := c.src.All(ctx)
	if err != nil {
		return nil, err
	}
	if all == nil {
		all = []stampduty.Article{}
	}
	c.mu.Lock()
	c.all, c.allExp = all, now.Add(c.ttl)
	c.mu.Unlock()
	return all, nil
}
