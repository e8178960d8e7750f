package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit"
	"stampduty/shared/testkit/localdb"
)

// listRow returns the fields of the `token list` row of id, nil when absent.
func listRow(list, id string) []string {
	for _, l := range lines(list)[1:] {
		if f := strings.Fields(l); len(f) > 0 && f[0] == id {
			return f
		}
	}
	return nil
}

// tokensFixture runs stampctl against one test's tables, with the token
// TestTokens's first step creates: its secret and its id.
type tokensFixture struct {
	*harness
	ctx        context.Context
	tokens     *store.Tokens
	secret, id string
}

// TestTokens: stampctl token creates a token shown once and stored as its
// keyed hash, lists it, revokes it by its id, and refuses bad owners, ids
// and keys.
func TestTokens(t *testing.T) {
	h := newHarness(t)
	f := &tokensFixture{harness: h, ctx: context.Background(), tokens: h.db.Tokens(h.vars["TOKENS_TABLE"])}
	t.Run("CreatePrintsTheTokenAloneOnTheLastLine", f.createPrintsTheTokenAloneOnTheLastLine)
	if f.secret == "" {
		t.FailNow()
	}
	testkit.Steps(t, f.createStoresTheHashNotTheToken, f.createMakesADifferentTokenEachTime, f.listShowsItActive,
		f.revokeByIDRevokes, f.revokeTwiceKeepsTheFirstTime, f.revokeUnknownIDFails, f.revokeAmbiguousIDFails,
		f.revokeRefusesAShortOrMalformedID, f.badOwnerFails, f.hashedWithTheGivenKey, f.shortKeyRefused,
		f.missingOwnerIsAUsageError, f.createTestTokenIsTheTestPrincipal)
}

func (f *tokensFixture) createTestTokenIsTheTestPrincipal(t *testing.T) {
	r := f.mustRun(t, "", "token", "create", "--owner", "alice", "--test")
	ls := lines(r.stdout)
	secret := ls[len(ls)-1]
	if !strings.HasPrefix(secret, auth.TestPrefix) || !auth.WellFormed(secret) {
		t.Fatalf("last line %.12q is not a test token", secret)
	}
	if head := strings.Join(ls[:len(ls)-1], "\n"); !strings.Contains(head, "test token") || strings.Contains(head, secret) {
		t.Errorf("message %q does not say test token, or holds the token", head)
	}
	stored, err := f.tokens.Token(f.ctx, localdb.Hasher().Hash(secret))
	if err != nil || !stored.Test || stored.Owner != "alice" {
		t.Fatalf("stored %+v, %v; want a test token of alice", stored, err)
	}
	owner, err := auth.NewAuthenticator(f.tokens, localdb.Hasher(), auth.CacheTTL).Owner(f.ctx, "Bearer "+secret)
	if got, want := owner, stampduty.TestOwnerOf("alice"); err != nil || got != want {
		t.Errorf("Owner = %q, %v; want %q", got, err, want)
	}
	list := f.mustRun(t, "", "token", "list").stdout
	if row := listRow(list, stored.ID()); len(row) != 5 || row[1] != "alice" || row[3] != "active" || row[4] != "test" {
		t.Errorf("the test token's row = %q; want alice, active, test\n%s", row, list)
	}
	if row := listRow(list, f.id); len(row) == 0 || row[len(row)-1] != "live" {
		t.Errorf("the live token's row = %q; want its mode live, last\n%s", row, list)
	}
}

func (f *tokensFixture) createPrintsTheTokenAloneOnTheLastLine(t *testing.T) {
	r := f.mustRun(t, "", "token", "create", "--owner", "alice")
	ls := lines(r.stdout)
	if len(ls) < 2 {
		t.Fatalf("stdout has %d lines, want a message and the token:\n%s", len(ls), r.stdout)
	}
	f.secret = ls[len(ls)-1]
	if !auth.WellFormed(f.secret) {
		t.Fatalf("last line %q is not a well-formed token", f.secret)
	}
	f.id = localdb.Hasher().Hash(f.secret)[:12]
	head := strings.Join(ls[:len(ls)-1], "\n")
	for _, want := range []string{f.id, "alice", "shown once"} {
		if !strings.Contains(head, want) {
			t.Errorf("message %q does not mention %q", head, want)
		}
	}
	if strings.Contains(head, f.secret) || strings.Contains(r.stderr, f.secret) {
		t.Errorf("the token appears outside the last line:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}

func (f *tokensFixture) createStoresTheHashNotTheToken(t *testing.T) {
	got, err := f.tokens.Token(f.ctx, localdb.Hasher().Hash(f.secret))
	if err != nil {
		t.Fatalf("Token(hash) = %v", err)
	}
	if got.Owner != "alice" || got.Revoked() || time.Since(got.CreatedAt) > time.Minute {
		t.Errorf("stored token = %+v", got)
	}
	scan, err := f.env.Client.Scan(f.ctx, &dynamodb.ScanInput{TableName: aws.String(f.env.Table("TokensTable"))})
	if err != nil {
		t.Fatal(err)
	}
	var items []map[string]types.AttributeValue
	for _, it := range scan.Items {
		if hv, ok := it["hash"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(hv.Value, "caller#") {
			continue // alice's caller record, which token create made
		}
		items = append(items, it)
	}
	if len(items) != 1 {
		t.Fatalf("%d items, want 1", len(items))
	}
	if hv, ok := items[0]["hash"].(*types.AttributeValueMemberS); !ok || hv.Value != localdb.Hasher().Hash(f.secret) {
		t.Errorf("hash attribute = %v, want the token's HMAC-SHA256", items[0]["hash"])
	}
	for name, v := range items[0] {
		if s, ok := v.(*types.AttributeValueMemberS); ok && strings.Contains(s.Value, f.secret) {
			t.Errorf("attribute %s holds the token", name)
		}
	}
}

func (f *tokensFixture) createMakesADifferentTokenEachTime(t *testing.T) {
	r := f.mustRun(t, "", "token", "create", "--owner", "bob")
	if other := lines(r.stdout)[len(lines(r.stdout))-1]; other == f.secret || !auth.WellFormed(other) {
		t.Errorf("second token %q", other)
	}
}

func (f *tokensFixture) listShowsItActive(t *testing.T) {
	r := f.mustRun(t, "", "token", "list")
	if head := strings.Fields(lines(r.stdout)[0]); strings.Join(head, " ") != "ID OWNER CREATED STATUS MODE" {
		t.Errorf("header = %q", head)
	}
	row := listRow(r.stdout, f.id)
	if len(row) != 5 || row[1] != "alice" || row[3] != "active" || row[4] != "live" {
		t.Fatalf("row of %s = %q\n%s", f.id, row, r.stdout)
	}
	if _, err := time.Parse(time.RFC3339, row[2]); err != nil {
		t.Errorf("CREATED %q is not RFC 3339: %v", row[2], err)
	}
	if strings.Contains(r.stdout, f.secret) || strings.Contains(r.stdout, localdb.Hasher().Hash(f.secret)) {
		t.Errorf("list shows a secret or a whole hash:\n%s", r.stdout)
	}
}

func (f *tokensFixture) revokeByIDRevokes(t *testing.T) {
	r := f.mustRun(t, "", "token", "revoke", f.id)
	if !strings.Contains(r.stdout, f.id) || !strings.Contains(r.stdout, "alice") {
		t.Errorf("revoke said %q, want the id and the owner", r.stdout)
	}
	if !strings.Contains(r.stdout, "stops working everywhere within 5s") {
		t.Errorf("revoke said %q, want how long until the token stops working (5s)", r.stdout)
	}
	got, err := f.tokens.Token(f.ctx, localdb.Hasher().Hash(f.secret))
	if err != nil || !got.Revoked() {
		t.Fatalf("Token after revoke = %+v, %v; want revoked", got, err)
	}
	row := listRow(f.mustRun(t, "", "token", "list").stdout, f.id)
	if len(row) != 6 || row[3] != "revoked" || row[5] != "live" {
		t.Fatalf("row after revoke = %q", row)
	}
	if at, err := time.Parse(time.RFC3339, row[4]); err != nil || !at.Equal(got.RevokedAt.Truncate(time.Second)) {
		t.Errorf("revoked at %q (%v), want %v", row[4], err, got.RevokedAt)
	}
}

func (f *tokensFixture) revokeTwiceKeepsTheFirstTime(t *testing.T) {
	before, _ := f.tokens.Token(f.ctx, localdb.Hasher().Hash(f.secret))
	r := f.mustRun(t, "", "token", "revoke", strings.ToUpper(f.id))
	if !strings.Contains(r.stdout, "already revoked") {
		t.Errorf("second revoke said %q", r.stdout)
	}
	after, _ := f.tokens.Token(f.ctx, localdb.Hasher().Hash(f.secret))
	if !after.RevokedAt.Equal(before.RevokedAt) {
		t.Errorf("revoked at changed from %v to %v", before.RevokedAt, after.RevokedAt)
	}
}

func (f *tokensFixture) revokeUnknownIDFails(t *testing.T) {
	r := f.run(t, "", nil, "token", "revoke", "0123456789ab")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "stampctl: ") || !strings.Contains(r.stderr, "no token") {
		t.Errorf("exit %d, stderr %q; want 1 and no token", r.code, r.stderr)
	}
}

func (f *tokensFixture) revokeAmbiguousIDFails(t *testing.T) {
	for _, suffix := range []string{"0", "1"} {
		hash := "abcdef012345" + strings.Repeat(suffix, 52)
		if err := f.tokens.Create(f.ctx, auth.Token{Hash: hash, Owner: "twin", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	r := f.run(t, "", nil, "token", "revoke", "abcdef012345")
	if r.code != 1 || !strings.Contains(r.stderr, "2 tokens") {
		t.Errorf("exit %d, stderr %q; want 1 and 2 tokens", r.code, r.stderr)
	}
	for _, suffix := range []string{"0", "1"} {
		if got, _ := f.tokens.Token(f.ctx, "abcdef012345"+strings.Repeat(suffix, 52)); got.Revoked() {
			t.Errorf("an ambiguous revoke revoked %s", got.Hash)
		}
	}
}

func (f *tokensFixture) revokeRefusesAShortOrMalformedID(t *testing.T) {
	for _, bad := range []string{"a", "abcdef", "zzzzzzzzzzzz", strings.Repeat("a", 65)} {
		r := f.run(t, "", nil, "token", "revoke", bad)
		if r.code != 1 || !strings.Contains(r.stderr, "invalid token id") {
			t.Errorf("revoke %q: exit %d, stderr %q; want 1 and invalid token id", bad, r.code, r.stderr)
		}
	}
}

func (f *tokensFixture) badOwnerFails(t *testing.T) {
	n := len(mustList(t, f.tokens))
	for _, bad := range []string{"bad owner", "a/b", strings.Repeat("x", 65), "é"} {
		r := f.run(t, "", nil, "token", "create", "--owner", bad)
		if r.code != 1 || !strings.Contains(r.stderr, "invalid owner") || r.stdout != "" {
			t.Errorf("owner %q: exit %d, stdout %q, stderr %q; want 1 and invalid owner", bad, r.code, r.stdout, r.stderr)
		}
	}
	if got := len(mustList(t, f.tokens)); got != n {
		t.Errorf("%d tokens after bad creates, want %d", got, n)
	}
}

func (f *tokensFixture) hashedWithTheGivenKey(t *testing.T) {
	key := strings.Repeat("operator-key-", 4)
	r := f.run(t, "", map[string]string{"TOKEN_HASH_KEY": key}, "token", "create", "--owner", "keyed")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	secret := lines(r.stdout)[len(lines(r.stdout))-1]
	hasher, _ := auth.NewHasher(key)
	if _, err := f.tokens.Token(f.ctx, hasher.Hash(secret)); err != nil {
		t.Errorf("not stored under the given key's hash: %v", err)
	}
	if _, err := f.tokens.Token(f.ctx, localdb.Hasher().Hash(secret)); err == nil {
		t.Error("stored under the local key although TOKEN_HASH_KEY was given")
	}
}

func (f *tokensFixture) shortKeyRefused(t *testing.T) {
	r := f.run(t, "", map[string]string{"TOKEN_HASH_KEY": "too-short"}, "token", "create", "--owner", "keyed")
	if r.code != 1 || !strings.Contains(r.stderr, "at least 32") {
		t.Errorf("exit %d, stderr %q; want 1 and the key length rule", r.code, r.stderr)
	}
}

func (f *tokensFixture) missingOwnerIsAUsageError(t *testing.T) {
	r := f.run(t, "", nil, "token", "create")
	if r.code != 2 || !strings.Contains(r.stderr, "--owner is required") || !strings.Contains(r.stderr, "usage:") {
		t.Errorf("exit %d, stderr %q; want 2 and usage", r.code, r.stderr)
	}
}

// mustList returns every stored token.
func mustList(t *testing.T, tokens *store.Tokens) []auth.Token {
	t.Helper()
	ts, err := tokens.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
