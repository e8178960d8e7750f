package store

import (
	"context"
	"sync"
	"time"

	"stampduty/shared/rules"
)

// ArticleCache serves articles from memory for a short TTL, per Lambda
// instance: a (purpose, state) lookup, found or not, and the whole catalogue
// are each read from DynamoDB at most once per TTL. An article changed by an
// import is therefore seen by every instance within TTL.
type ArticleCache struct {
	src        *Articles
	ttl        time.Duration
	now        func() time.Time
	maxEntries int

	mu     sync.Mutex
	byKey  map[[2]string]articleEntry
	all    []rules.Article
	allExp time.Time
}

type articleEntry struct {
	art     rules.Article
	err     error // the ENOTFOUND error when there is no such article
	expires time.Time
}

// NewArticleCache returns a cache over src with the given TTL.
func NewArticleCache(src *Articles, ttl time.Duration) *ArticleCache {
	return &ArticleCache{src: src, ttl: ttl, now: time.Now, maxEntries: 1024, byKey: map[[2]string]articleEntry{}}
}

// Get returns the article of (purpose, state), as Articles.Get does.
func (c *ArticleCache) Get(ctx context.Context, purpose, state string) (rules.Article, error) {
	k := [2]string{purpose, state}
	now := c.now()
	c.mu.Lock()
	e, ok := c.byKey[k]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.art, e.err
	}
	a, err := c.src.Get(ctx, purpose, state)
	if err != nil && rules.ErrorCode(err) != rules.ENOTFOUND {
		return a, err // faults are not cached
	}
	c.mu.Lock()
	if len(c.byKey) >= c.maxEntries {
		clear(c.byKey)
	}
	c.byKey[k] = articleEntry{art: a, err: err, expires: now.Add(c.ttl)}
	c.mu.Unlock()
	return a, err
}

// All returns every article, as Articles.All does. The slice is shared:
// callers must not change it.
func (c *ArticleCache) All(ctx context.Context) ([]rules.Article, error) {
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
		all = []rules.Article{}
	}
	c.mu.Lock()
	c.all, c.allExp = all, now.Add(c.ttl)
	c.mu.Unlock()
	return all, nil
}
