package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"stampduty/shared/config"
	"stampduty/shared/stampduty"
)

// fakeStore is an in-memory Store that counts lookups.
type fakeStore struct {
	tokens  map[string]Token
	lookups int
	err     error
}

func (f *fakeStore) Token(_ context.Context, hash string) (Token, error) {
	f.lookups++
	if f.err != nil {
		return Token{}, f.err
	}
	t, ok := f.tokens[hash]
	if !ok {
		return Token{}, stampduty.Errorf(stampduty.ENOTFOUND, "no such token")
	}
	return t, nil
}

// testHasher hashes with a fixed test key.
func testHasher(t testing.TB) *Hasher {
	h, err := NewHasher("test-key-test-key-test-key-test-key")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHasher(t *testing.T) {
	t.Run("KeyTooShort", func(t *testing.T) {
		if _, err := NewHasher(strings.Repeat("k", MinKeyLength-1)); err == nil {
			t.Error("a 31-byte key was accepted")
		}
	})
	t.Run("KeyedNotPlain", func(t *testing.T) {
		a, _ := NewHasher(strings.Repeat("a", 32))
		b, _ := NewHasher(strings.Repeat("b", 32))
		secret := Prefix + strings.Repeat("x", 43)
		plain := sha256.Sum256([]byte(secret))
		if a.Hash(secret) == b.Hash(secret) {
			t.Error("two keys hash a token alike")
		}
		if a.Hash(secret) == hex.EncodeToString(plain[:]) {
			t.Error("the hash is the plain SHA-256: anyone with the table can check guesses")
		}
		first, again := a.Hash(secret), a.Hash(secret)
		if first != again || len(first) != 64 {
			t.Error("not a stable 64-hex-digit hash")
		}
	})
}

func TestNewToken(t *testing.T) {
	h := testHasher(t)
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		secret, hash, err := h.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if !WellFormed(secret) || seen[secret] {
			t.Fatalf("token %d malformed or repeated", i)
		}
		seen[secret] = true
		if got, want := hash, h.Hash(secret); got != want || len(hash) != 64 {
			t.Fatalf("hash = %q, want %q", got, want)
		}
		if strings.Contains(hash, secret[len(Prefix):]) {
			t.Fatal("hash contains the secret")
		}
	}
}

func TestNewTestToken(t *testing.T) {
	h := testHasher(t)
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		secret, hash, err := h.NewTestToken()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(secret, TestPrefix) || !IsTest(secret) || !WellFormed(secret) || seen[secret] {
			t.Fatalf("test token %d %.12q malformed or repeated", i, secret)
		}
		seen[secret] = true
		if got, want := hash, h.Hash(secret); got != want || len(hash) != 64 {
			t.Fatalf("hash = %q, want %q", got, want)
		}
	}
	live, _, _ := h.NewToken()
	if IsTest(live) {
		t.Error("a live token is a test token")
	}
	if IsTest(Prefix + "test_" + strings.Repeat("a", 38)) {
		t.Error("a live token whose random part starts with test_ is a test token")
	}
}

func TestTestOwner(t *testing.T) {
	for _, tc := range []struct {
		key, owner string
		live       bool
	}{
		{"acme", "acme", true},
		{stampduty.TestOwnerOf("acme"), "acme", false},
		{"acme~test", "acme", false},
		{"a.b-c_d", "a.b-c_d", true},
		{stampduty.TestOwnerOf("a.b-c_d"), "a.b-c_d", false},
		{"test", "test", true},
		{"acme-test", "acme-test", true},
	} {
		owner, live := stampduty.CallerOf(tc.key)
		if owner != tc.owner || live != tc.live {
			t.Errorf("stampduty.CallerOf(%q) = %q, %v; want %q, %v", tc.key, owner, live, tc.owner, tc.live)
		}
	}
	t.Run("NoOwnerIsATestKey", func(t *testing.T) {
		for _, owner := range []string{"acme", "acme-test", "test", "x"} {
			key := stampduty.TestOwnerOf(owner)
			if ValidOwner(key) {
				t.Errorf("ValidOwner(%q) = true: a live caller could hold a test principal's key", key)
			}
			if key == owner {
				t.Errorf("stampduty.TestOwnerOf(%q) is the live key", owner)
			}
		}
	})
}

func TestBearer(t *testing.T) {
	for _, tc := range []struct {
		header, token string
		ok            bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER   abc  ", "abc", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"", "", false},
		{"Basic abc", "", false},
		{"Bearerabc", "", false},
		{"Bearer a b", "a b", true},
		{"Bearer\tabc", "abc", true},
		{" \tBearer \t abc \t", "abc", true},
		{"Bearer abc\u00a0", "abc\u00a0", true},
		{"Bearer \u00a0abc", "\u00a0abc", true},
		{"Bearer abc\u2003", "abc\u2003", true},
		{"Bearer abc\u3000", "abc\u3000", true},
		{"Bearer abc\r\n", "abc\r\n", true},
		{"\u00a0Bearer abc", "", false},
		{"Bearer\u00a0abc", "", false},
		{"Bearer\u2003abc", "", false},
	} {
		tok, ok := Bearer(tc.header)
		if tok != tc.token || ok != tc.ok {
			t.Errorf("Bearer(%q) = %q, %v; want %q, %v", tc.header, tok, ok, tc.token, tc.ok)
		}
	}
}

func TestWellFormed(t *testing.T) {
	good := Prefix + strings.Repeat("a", 43)
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{good, true},
		{Prefix + strings.Repeat("-_Z9", 10) + "abc", true},
		{Prefix + strings.Repeat("a", 42), false},
		{Prefix + strings.Repeat("a", 44), false},
		{"xyz_" + strings.Repeat("a", 43), false},
		{Prefix + strings.Repeat("a", 42) + "=", false},
		{Prefix + strings.Repeat("a", 42) + " ", false},
		{TestPrefix + strings.Repeat("a", 43), true},
		{TestPrefix + strings.Repeat("-_Z9", 10) + "abc", true},
		{Prefix + "test_" + strings.Repeat("a", 38), true}, // a live token whose random part starts with "test_"
		{TestPrefix + strings.Repeat("a", 42), false},
		{TestPrefix + strings.Repeat("a", 44), false},
		{TestPrefix + strings.Repeat("a", 42) + "=", false},
		{"sdt_tset_" + strings.Repeat("a", 43), false},
	} {
		if got := WellFormed(tc.s); got != tc.want {
			t.Errorf("WellFormed(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestValidOwner(t *testing.T) {
	for s, want := range map[string]bool{"acme": true, "acme-corp.in_1": true, "": false, "a b": false, strings.Repeat("a", 64): true, strings.Repeat("a", 65): false, "é": false} {
		if got := ValidOwner(s); got != want {
			t.Errorf("ValidOwner(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestAuthenticator(t *testing.T) {
	ctx := context.Background()
	h := testHasher(t)
	secret, hash, _ := h.NewToken()
	revokedSecret, revokedHash, _ := h.NewToken()
	testSecret, testHash, _ := h.NewTestToken()
	revokedTestSecret, revokedTestHash, _ := h.NewTestToken()
	// A record that says live for a test token, and one that says test for a
	// live token: the two must agree.
	wrongSecret, wrongHash, _ := h.NewTestToken()
	wrong2Secret, wrong2Hash, _ := h.NewToken()
	store := &fakeStore{tokens: map[string]Token{
		hash:            {Hash: hash, Owner: "alice"},
		revokedHash:     {Hash: revokedHash, Owner: "bob", RevokedAt: time.Now()},
		testHash:        {Hash: testHash, Owner: "alice", Test: true},
		revokedTestHash: {Hash: revokedTestHash, Owner: "alice", Test: true, RevokedAt: time.Now()},
		wrongHash:       {Hash: wrongHash, Owner: "alice"},
		wrong2Hash:      {Hash: wrong2Hash, Owner: "alice", Test: true},
	}}
	now := time.Unix(1000, 0)
	a := NewAuthenticator(store, h, CacheTTL)
	a.now = func() time.Time { return now }

	code := func(err error) stampduty.Code { return stampduty.ErrorCode(err) }
	t.Run("Valid", func(t *testing.T) {
		owner, err := a.Owner(ctx, "Bearer "+secret)
		if err != nil || owner != "alice" {
			t.Fatalf("Owner = %q, %v", owner, err)
		}
	})
	t.Run("TestTokenIsTheTestPrincipal", func(t *testing.T) {
		owner, err := a.Owner(ctx, "Bearer "+testSecret)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := owner, stampduty.TestOwnerOf("alice"); got != want {
			t.Errorf("Owner(test token) = %q, want %q", got, want)
		}
		if owner, live := stampduty.CallerOf(owner); owner != "alice" || live {
			t.Errorf("Live = %q, %v; want alice, false", owner, live)
		}
	})
	t.Run("RevokedTestTokenIsUnauthorized", func(t *testing.T) {
		if _, err := a.Owner(ctx, "Bearer "+revokedTestSecret); code(err) != stampduty.EUNAUTHORIZED {
			t.Errorf("Owner(revoked test token) = %v, want EUNAUTHORIZED", err)
		}
	})
	t.Run("ModeMustMatchTheRecord", func(t *testing.T) {
		for _, s := range []string{wrongSecret, wrong2Secret} {
			if owner, err := a.Owner(ctx, "Bearer "+s); code(err) != stampduty.EUNAUTHORIZED {
				t.Errorf("Owner(%.12q) = %q, %v; want EUNAUTHORIZED", s, owner, err)
			}
		}
	})
	t.Run("NoTokenIsForbidden", func(t *testing.T) {
		for _, h := range []string{"", "Bearer", "Bearer  ", "Basic x"} {
			if _, err := a.Owner(ctx, h); code(err) != stampduty.EFORBIDDEN || stampduty.ErrorMessage(err) != "Forbidden" {
				t.Errorf("Owner(%q) = %v, want EFORBIDDEN", h, err)
			}
		}
	})
	t.Run("BadTokenIsUnauthorized", func(t *testing.T) {
		for _, h := range []string{"Bearer nope", "Bearer " + Prefix + strings.Repeat("z", 43), "Bearer " + revokedSecret,
			"Bearer " + secret + "\u00a0", "Bearer \u00a0" + secret, "Bearer " + secret + "\u2003", "Bearer " + secret + "\ufeff"} {
			_, err := a.Owner(ctx, h)
			if code(err) != stampduty.EUNAUTHORIZED || stampduty.ErrorMessage(err) != "Missing or invalid credentials" {
				t.Errorf("Owner(%.20q) = %v, want EUNAUTHORIZED", h, err)
			}
		}
	})
	t.Run("MalformedAsksNothing", func(t *testing.T) {
		before := store.lookups
		a.Owner(ctx, "Bearer '; DROP TABLE")
		if store.lookups != before {
			t.Error("a malformed token was looked up")
		}
	})
	t.Run("CachedForTTL", func(t *testing.T) {
		before := store.lookups
		for i := 0; i < 5; i++ {
			a.Owner(ctx, "Bearer "+secret)
			a.Owner(ctx, "Bearer "+revokedSecret)
		}
		if store.lookups != before {
			t.Errorf("%d lookups within the TTL, want 0", store.lookups-before)
		}
	})
	t.Run("RevocationSeenWithin5Seconds", func(t *testing.T) {
		if got, want := CacheTTL, 5*time.Second; got > want {
			t.Fatalf("CacheTTL = %v, want at most %v (decisions.md)", got, want)
		}
		now = now.Add(time.Hour) // a fresh lookup, cached from now on
		cachedAt := now
		if _, err := a.Owner(ctx, "Bearer "+secret); err != nil {
			t.Fatal(err)
		}
		tok := store.tokens[hash]
		tok.RevokedAt = now
		store.tokens[hash] = tok
		now = cachedAt.Add(CacheTTL - time.Millisecond)
		if _, err := a.Owner(ctx, "Bearer "+secret); err != nil {
			t.Fatalf("within the TTL: %v (the cached answer may stand)", err)
		}
		now = cachedAt.Add(CacheTTL)
		if _, err := a.Owner(ctx, "Bearer "+secret); code(err) != stampduty.EUNAUTHORIZED {
			t.Errorf("%v after it was cached: %v, want EUNAUTHORIZED", CacheTTL, err)
		}
	})
	t.Run("FaultsAreNotCached", func(t *testing.T) {
		s2, _, _ := h.NewToken()
		store.err = stampduty.Errorf(stampduty.EUNAVAILABLE, "Service Unavailable")
		if _, err := a.Owner(ctx, "Bearer "+s2); code(err) != stampduty.EUNAVAILABLE {
			t.Fatalf("err = %v, want EUNAVAILABLE", err)
		}
		store.err = nil
		before := store.lookups
		a.Owner(ctx, "Bearer "+s2)
		if store.lookups != before+1 {
			t.Error("a failed lookup was cached")
		}
	})
	t.Run("StoredHashMustMatch", func(t *testing.T) {
		s3, h3, _ := h.NewToken()
		store.tokens[h3] = Token{Hash: strings.Repeat("0", 64), Owner: "mallory"} // a store answering with another record
		if _, err := a.Owner(ctx, "Bearer "+s3); code(err) != stampduty.EUNAUTHORIZED {
			t.Errorf("err = %v, want EUNAUTHORIZED", err)
		}
	})
	t.Run("CacheIsBounded", func(t *testing.T) {
		b := NewAuthenticator(store, h, time.Hour)
		b.maxEntries = 10
		for i := 0; i < 100; i++ {
			s, _, _ := h.NewToken()
			b.Owner(ctx, "Bearer "+s)
		}
		if len(b.cache) > 10 {
			t.Errorf("cache holds %d entries, bound 10", len(b.cache))
		}
	})
}

func TestFromEnv(t *testing.T) {
	env := func(key string) *config.Env {
		return config.New(func(name string) string {
			if name == "TOKEN_HASH_KEY" {
				return key
			}
			return ""
		})
	}
	t.Run("ErrKeyTooShort", func(t *testing.T) {
		e := env("short")
		FromEnv(e, &fakeStore{})
		if err := e.Err(); err == nil || !strings.Contains(err.Error(), "at least") {
			t.Fatalf("env.Err() = %v: FromEnv accepted a 5-byte hashing key", err)
		}
	})
	t.Run("ErrKeyMissingIsReportedOnce", func(t *testing.T) {
		e := env("")
		FromEnv(e, &fakeStore{})
		if err := e.Err(); err == nil || err.Error() != "missing environment variables: TOKEN_HASH_KEY" {
			t.Fatalf("env.Err() = %v", err)
		}
	})
	t.Run("CachesForCacheTTL", func(t *testing.T) {
		e := env(strings.Repeat("k", MinKeyLength))
		a := FromEnv(e, &fakeStore{})
		if err := e.Err(); err != nil {
			t.Fatal(err)
		}
		if got, want := a.ttl, CacheTTL; got != want {
			t.Errorf("ttl = %v, want %v", got, want)
		}
	})
}
