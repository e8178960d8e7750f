// Package auth holds the API tokens of the service: how they are made and
// hashed, how a bearer header is read, and an authenticator that turns a
// header into the caller ("owner") with a short per-instance cache. A token
// is shown once when it is made; only its keyed hash (HMAC-SHA256 with a
// secret key kept outside the database) is ever stored, so the tokens table
// alone — a backup, an export — cannot be used to check guesses.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"stampduty/shared/config"
	"stampduty/shared/stampduty"
)

// Prefix starts every token, so that secret scanners and people can tell one.
const Prefix = "sdt_"

// TestPrefix starts every test token (test-mode.md, "Test tokens"): a test
// token is a token like any other, marked in its record, whose caller is the
// caller's test principal (stampduty.TestOwnerOf).
const TestPrefix = Prefix + "test_"

// randomLen is the length of a token's random part: 32 random bytes in
// unpadded base64url.
const randomLen = 43

// Token is a stored token: the hash of the secret, its owner and its state.
type Token struct {
	// Hash is the hex HMAC-SHA256 of the secret token; the key of the record.
	Hash      string
	Owner     string
	CreatedAt time.Time
	// CreatedBy is who issued it ("" for a token from before it was kept).
	CreatedBy string
	// RevokedAt is zero while the token is valid.
	RevokedAt time.Time
	// Test marks a test token (TestPrefix): it authenticates as
	// stampduty.TestOwnerOf(Owner), never as Owner.
	Test bool
}

// Caller is a caller's own record: its owner name (what its tokens carry),
// when and by whom it was created. A caller from before records has tokens
// and no record.
type Caller struct {
	Owner     string
	CreatedAt time.Time
	CreatedBy string
}

// IDLength is the length of a token's ID.
const IDLength = 12

// ID is the short public name of a token: the first 12 hex digits of its hash.
func (t Token) ID() string { return t.Hash[:min(IDLength, len(t.Hash))] }

// Revoked reports whether the token was revoked.
func (t Token) Revoked() bool { return !t.RevokedAt.IsZero() }

// DefaultKeyParameter is the SSM parameter that holds the token hashing key
// unless the deployment names another (template.yaml, stampctl).
const DefaultKeyParameter = "/stamp-duty/token-hash-key"

// MinKeyLength is the shortest token hashing key accepted, in bytes.
const MinKeyLength = 32

// Hasher hashes tokens with a secret key.
type Hasher struct {
	key []byte
}

// NewHasher returns a Hasher with the given key, which must have at least
// MinKeyLength bytes.
func NewHasher(key string) (*Hasher, error) {
	if len(key) < MinKeyLength {
		return nil, fmt.Errorf("the token hashing key has %d bytes, want at least %d", len(key), MinKeyLength)
	}
	return &Hasher{key: []byte(key)}, nil
}

// Hash returns the hex HMAC-SHA256 of a token, the form in which tokens are stored.
func (h *Hasher) Hash(secret string) string {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(secret))
	return hex.EncodeToString(m.Sum(nil))
}

// NewToken returns a new random live token (32 bytes from crypto/rand) and
// its hash.
func (h *Hasher) NewToken() (secret, hash string, err error) {
	return h.newToken(Prefix)
}

// NewTestToken returns a new random test token (TestPrefix and 32 bytes
// from crypto/rand) and its hash.
func (h *Hasher) NewTestToken() (secret, hash string, err error) {
	return h.newToken(TestPrefix)
}

func (h *Hasher) newToken(prefix string) (secret, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	secret = prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return secret, h.Hash(secret), nil
}

// IsTest reports whether s has a test token's length and prefix. The
// lengths tell the modes apart: a live token whose random part happens to
// start with "test_" is still live.
func IsTest(s string) bool {
	return len(s) == len(TestPrefix)+randomLen && strings.HasPrefix(s, TestPrefix)
}

// WellFormed reports whether s has the shape of a token this service
// issues, live (Prefix) or test (TestPrefix).
func WellFormed(s string) bool {
	prefix := Prefix
	if IsTest(s) {
		prefix = TestPrefix
	}
	if len(s) != len(prefix)+randomLen || !strings.HasPrefix(s, prefix) {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ValidOwner reports whether s can name an owner: 1 to 64 ASCII letters,
// digits, '.', '_' or '-'.
func ValidOwner(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Bearer returns the token of an Authorization header value. ok is false when
// the header holds no bearer token at all (absent, another scheme, or
// "Bearer" with nothing after it). The scheme and the token are separated
// and trimmed by ASCII spaces and tabs only (RFC 9110's whitespace): any
// other character, a no-break space among them, belongs to the token and
// makes it malformed.
func Bearer(header string) (token string, ok bool) {
	header = strings.Trim(header, headerSpace)
	i := strings.IndexAny(header, headerSpace)
	if i < 0 {
		i = len(header)
	}
	if !strings.EqualFold(header[:i], "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(header[i:], headerSpace)
	return token, token != ""
}

// headerSpace is the white space of HTTP header values: space and tab.
const headerSpace = " \t"

// FromEnv returns a function's Authenticator over tokens: tokens hashed with
// the key in TOKEN_HASH_KEY, lookups cached for CacheTTL. A missing or
// unusable key is reported by env.Err, and the function must not start.
func FromEnv(env *config.Env, tokens Store) *Authenticator {
	return NewAuthenticator(tokens, HasherFromEnv(env), CacheTTL)
}

// HasherFromEnv returns the Hasher of the key in TOKEN_HASH_KEY, for a
// function that issues tokens. A missing or unusable key is reported by
// env.Err, and the function must not start.
func HasherFromEnv(env *config.Env) *Hasher {
	hasher, err := NewHasher(env.Require("TOKEN_HASH_KEY"))
	if err != nil && env.Get("TOKEN_HASH_KEY") != "" {
		env.Fail(err)
	}
	return hasher
}

// CacheTTL is how long an Authenticator of a function keeps a lookup:
// decisions.md's bound on how long a revoked token may go on working.
const CacheTTL = 5 * time.Second

// Store looks tokens up by hash. It returns an ENOTFOUND *stampduty.Error when
// there is no such token.
type Store interface {
	Token(ctx context.Context, hash string) (Token, error)
}

// Authenticator turns Authorization headers into owners. Lookups, found or
// not, are cached per instance for TTL, so a revocation takes effect within
// TTL. The cache holds at most MaxEntries hashes.
type Authenticator struct {
	store      Store
	hasher     *Hasher
	ttl        time.Duration
	now        func() time.Time
	maxEntries int

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	owner   string // "" when the token is unknown or revoked
	expires time.Time
}

// NewAuthenticator returns an Authenticator over store, hashing tokens with
// hasher, with the given cache TTL.
func NewAuthenticator(store Store, hasher *Hasher, ttl time.Duration) *Authenticator {
	return &Authenticator{store: store, hasher: hasher, ttl: ttl, now: time.Now, maxEntries: 1024, cache: map[string]cached{}}
}

// Owner returns the owner key of the bearer token in header: the token's
// owner for a live token, stampduty.TestOwnerOf(owner) for a test token. It fails with
// EFORBIDDEN when there is no bearer token, and EUNAUTHORIZED when the token
// is malformed, unknown or revoked.
func (a *Authenticator) Owner(ctx context.Context, header string) (string, error) {
	secret, ok := Bearer(header)
	if !ok {
		return "", stampduty.Errorf(stampduty.EFORBIDDEN, "Forbidden")
	}
	if !WellFormed(secret) {
		return "", errUnauthorized
	}
	hash := a.hasher.Hash(secret)
	now := a.now()
	a.mu.Lock()
	c, hit := a.cache[hash]
	a.mu.Unlock()
	if !hit || !now.Before(c.expires) {
		t, err := a.store.Token(ctx, hash)
		switch {
		case stampduty.ErrorCode(err) == stampduty.ENOTFOUND:
			c = cached{}
		case err != nil:
			return "", err
		case t.Revoked():
			c = cached{}
		case subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) != 1:
			// The store answers by key; compare what it returned anyway, in
			// constant time, so no answer is trusted on a lookup alone.
			c = cached{}
		case t.Test != IsTest(secret):
			// A record and a token that disagree on the mode: trust neither.
			c = cached{}
		case t.Test:
			c = cached{owner: stampduty.TestOwnerOf(t.Owner)}
		default:
			c = cached{owner: t.Owner}
		}
		c.expires = now.Add(a.ttl)
		a.put(hash, c, now)
	}
	if c.owner == "" {
		return "", errUnauthorized
	}
	return c.owner, nil
}

var errUnauthorized = stampduty.Errorf(stampduty.EUNAUTHORIZED, "Missing or invalid credentials")

// put stores c, first dropping expired entries, and everything if the cache
// is still full (a flood of random tokens must not grow memory).
func (a *Authenticator) put(hash string, c cached, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cache) >= a.maxEntries {
		for k, v := range a.cache {
			if now.After(v.expires) {
				delete(a.cache, k)
			}
		}
		if len(a.cache) >= a.maxEntries {
			clear(a.cache)
		}
	}
	a.cache[hash] = c
}
