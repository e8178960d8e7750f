package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// TestMain runs the tests against dynalite, in a process with no AWS
// configuration at all (no credentials, region, profile or config files),
// as on a fresh machine: stampctl must fall back to the local defaults.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "AWS_") {
			os.Unsetenv(name)
		}
	}
	none := filepath.Join(os.TempDir(), "stampctl-test-no-such-aws-dir", "none")
	os.Setenv("AWS_CONFIG_FILE", none)
	os.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	storetest.Main(m)
}

// harness runs stampctl against one test's fresh tables.
type harness struct {
	env *storetest.Env
	db  *store.DB
	// vars is stampctl's environment: the engine and the tables, no AWS settings.
	vars map[string]string
}

// newHarness creates fresh tables and the environment that points stampctl at them.
func newHarness(t *testing.T) *harness {
	t.Helper()
	env := storetest.New(t)
	return &harness{env: env, db: env.DB(), vars: map[string]string{
		"DYNAMODB_ENDPOINT": env.Endpoint,
		"ARTICLES_TABLE":    env.Table("ArticlesTable"),
		"TOKENS_TABLE":      env.Table("TokensTable"),
		"COUNTERS_TABLE":    env.Table("CountersTable"),
	}}
}

// result is what one run of stampctl did.
type result struct {
	code           int
	stdout, stderr string
}

// run runs stampctl with args and stdin, in h's environment with the
// variables of over on top ("" unsets one).
func (h *harness) run(t *testing.T, stdin string, over map[string]string, args ...string) result {
	t.Helper()
	vars := map[string]string{}
	if h != nil {
		for k, v := range h.vars {
			vars[k] = v
		}
	}
	for k, v := range over {
		vars[k] = v
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut, func(k string) string { return vars[k] })
	if strings.Contains(errOut.String(), "goroutine ") {
		t.Errorf("stampctl %s printed a stack trace:\n%s", strings.Join(args, " "), errOut.String())
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// mustRun runs stampctl and fails the test unless it exits with 0.
func (h *harness) mustRun(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	r := h.run(t, stdin, nil, args...)
	if r.code != 0 {
		t.Fatalf("stampctl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// lines returns the lines of s without the final newline.
func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// listRow returns the fields of the `token list` row of id, nil when absent.
func listRow(list, id string) []string {
	for _, l := range lines(list)[1:] {
		if f := strings.Fields(l); len(f) > 0 && f[0] == id {
			return f
		}
	}
	return nil
}

func TestTokens(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	tokens := h.db.Tokens(h.vars["TOKENS_TABLE"])

	var secret, id string
	t.Run("CreatePrintsTheTokenAloneOnTheLastLine", func(t *testing.T) {
		r := h.mustRun(t, "", "token", "create", "--owner", "alice")
		ls := lines(r.stdout)
		if len(ls) < 2 {
			t.Fatalf("stdout has %d lines, want a message and the token:\n%s", len(ls), r.stdout)
		}
		secret = ls[len(ls)-1]
		if !auth.WellFormed(secret) {
			t.Fatalf("last line %q is not a well-formed token", secret)
		}
		id = localdb.Hasher().Hash(secret)[:12]
		head := strings.Join(ls[:len(ls)-1], "\n")
		for _, want := range []string{id, "alice", "shown once"} {
			if !strings.Contains(head, want) {
				t.Errorf("message %q does not mention %q", head, want)
			}
		}
		if strings.Contains(head, secret) || strings.Contains(r.stderr, secret) {
			t.Errorf("the token appears outside the last line:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		}
	})
	if secret == "" {
		t.FailNow()
	}
	t.Run("CreateStoresTheHashNotTheToken", func(t *testing.T) {
		got, err := tokens.Token(ctx, localdb.Hasher().Hash(secret))
		if err != nil {
			t.Fatalf("Token(hash) = %v", err)
		}
		if got.Owner != "alice" || got.Revoked() || time.Since(got.CreatedAt) > time.Minute {
			t.Errorf("stored token = %+v", got)
		}
		out, err := h.env.Client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(h.vars["TOKENS_TABLE"])})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Items) != 1 {
			t.Fatalf("%d items, want 1", len(out.Items))
		}
		if hv, ok := out.Items[0]["hash"].(*types.AttributeValueMemberS); !ok || hv.Value != localdb.Hasher().Hash(secret) {
			t.Errorf("hash attribute = %v, want the token's HMAC-SHA256", out.Items[0]["hash"])
		}
		for name, v := range out.Items[0] {
			if s, ok := v.(*types.AttributeValueMemberS); ok && strings.Contains(s.Value, secret) {
				t.Errorf("attribute %s holds the token", name)
			}
		}
	})
	t.Run("CreateMakesADifferentTokenEachTime", func(t *testing.T) {
		r := h.mustRun(t, "", "token", "create", "--owner", "bob")
		if other := lines(r.stdout)[len(lines(r.stdout))-1]; other == secret || !auth.WellFormed(other) {
			t.Errorf("second token %q", other)
		}
	})
	t.Run("ListShowsItActive", func(t *testing.T) {
		r := h.mustRun(t, "", "token", "list")
		if head := strings.Fields(lines(r.stdout)[0]); strings.Join(head, " ") != "ID OWNER CREATED STATUS" {
			t.Errorf("header = %q", head)
		}
		row := listRow(r.stdout, id)
		if len(row) != 4 || row[1] != "alice" || row[3] != "active" {
			t.Fatalf("row of %s = %q\n%s", id, row, r.stdout)
		}
		if _, err := time.Parse(time.RFC3339, row[2]); err != nil {
			t.Errorf("CREATED %q is not RFC 3339: %v", row[2], err)
		}
		if strings.Contains(r.stdout, secret) || strings.Contains(r.stdout, localdb.Hasher().Hash(secret)) {
			t.Errorf("list shows a secret or a whole hash:\n%s", r.stdout)
		}
	})
	t.Run("RevokeByIDRevokes", func(t *testing.T) {
		r := h.mustRun(t, "", "token", "revoke", id)
		if !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "alice") {
			t.Errorf("revoke said %q, want the id and the owner", r.stdout)
		}
		if !strings.Contains(r.stdout, "stops working everywhere within 5s") {
			t.Errorf("revoke said %q, want how long until the token stops working (5s)", r.stdout)
		}
		got, err := tokens.Token(ctx, localdb.Hasher().Hash(secret))
		if err != nil || !got.Revoked() {
			t.Fatalf("Token after revoke = %+v, %v; want revoked", got, err)
		}
		row := listRow(h.mustRun(t, "", "token", "list").stdout, id)
		if len(row) != 5 || row[3] != "revoked" {
			t.Fatalf("row after revoke = %q", row)
		}
		if at, err := time.Parse(time.RFC3339, row[4]); err != nil || !at.Equal(got.RevokedAt.Truncate(time.Second)) {
			t.Errorf("revoked at %q (%v), want %v", row[4], err, got.RevokedAt)
		}
	})
	t.Run("RevokeTwiceKeepsTheFirstTime", func(t *testing.T) {
		before, _ := tokens.Token(ctx, localdb.Hasher().Hash(secret))
		r := h.mustRun(t, "", "token", "revoke", strings.ToUpper(id))
		if !strings.Contains(r.stdout, "already revoked") {
			t.Errorf("second revoke said %q", r.stdout)
		}
		after, _ := tokens.Token(ctx, localdb.Hasher().Hash(secret))
		if !after.RevokedAt.Equal(before.RevokedAt) {
			t.Errorf("revoked at changed from %v to %v", before.RevokedAt, after.RevokedAt)
		}
	})
	t.Run("RevokeUnknownIDFails", func(t *testing.T) {
		r := h.run(t, "", nil, "token", "revoke", "0123456789ab")
		if r.code != 1 || !strings.HasPrefix(r.stderr, "stampctl: ") || !strings.Contains(r.stderr, "no token") {
			t.Errorf("exit %d, stderr %q; want 1 and no token", r.code, r.stderr)
		}
	})
	t.Run("RevokeAmbiguousIDFails", func(t *testing.T) {
		for _, suffix := range []string{"0", "1"} {
			hash := "abcdef012345" + strings.Repeat(suffix, 52)
			if err := tokens.Create(ctx, auth.Token{Hash: hash, Owner: "twin", CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		r := h.run(t, "", nil, "token", "revoke", "abcdef012345")
		if r.code != 1 || !strings.Contains(r.stderr, "2 tokens") {
			t.Errorf("exit %d, stderr %q; want 1 and 2 tokens", r.code, r.stderr)
		}
		for _, suffix := range []string{"0", "1"} {
			if got, _ := tokens.Token(ctx, "abcdef012345"+strings.Repeat(suffix, 52)); got.Revoked() {
				t.Errorf("an ambiguous revoke revoked %s", got.Hash)
			}
		}
	})
	t.Run("RevokeRefusesAShortOrMalformedID", func(t *testing.T) {
		for _, bad := range []string{"a", "abcdef", "zzzzzzzzzzzz", strings.Repeat("a", 65)} {
			r := h.run(t, "", nil, "token", "revoke", bad)
			if r.code != 1 || !strings.Contains(r.stderr, "invalid token id") {
				t.Errorf("revoke %q: exit %d, stderr %q; want 1 and invalid token id", bad, r.code, r.stderr)
			}
		}
	})
	t.Run("BadOwnerFails", func(t *testing.T) {
		n := len(mustList(t, tokens))
		for _, bad := range []string{"bad owner", "a/b", strings.Repeat("x", 65), "é"} {
			r := h.run(t, "", nil, "token", "create", "--owner", bad)
			if r.code != 1 || !strings.Contains(r.stderr, "invalid owner") || r.stdout != "" {
				t.Errorf("owner %q: exit %d, stdout %q, stderr %q; want 1 and invalid owner", bad, r.code, r.stdout, r.stderr)
			}
		}
		if got := len(mustList(t, tokens)); got != n {
			t.Errorf("%d tokens after bad creates, want %d", got, n)
		}
	})
	t.Run("HashedWithTheGivenKey", func(t *testing.T) {
		key := strings.Repeat("operator-key-", 4)
		r := h.run(t, "", map[string]string{"TOKEN_HASH_KEY": key}, "token", "create", "--owner", "keyed")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		secret := lines(r.stdout)[len(lines(r.stdout))-1]
		hasher, _ := auth.NewHasher(key)
		if _, err := tokens.Token(ctx, hasher.Hash(secret)); err != nil {
			t.Errorf("not stored under the given key's hash: %v", err)
		}
		if _, err := tokens.Token(ctx, localdb.Hasher().Hash(secret)); err == nil {
			t.Error("stored under the local key although TOKEN_HASH_KEY was given")
		}
	})
	t.Run("ShortKeyRefused", func(t *testing.T) {
		r := h.run(t, "", map[string]string{"TOKEN_HASH_KEY": "too-short"}, "token", "create", "--owner", "keyed")
		if r.code != 1 || !strings.Contains(r.stderr, "at least 32") {
			t.Errorf("exit %d, stderr %q; want 1 and the key length rule", r.code, r.stderr)
		}
	})
	t.Run("MissingOwnerIsAUsageError", func(t *testing.T) {
		r := h.run(t, "", nil, "token", "create")
		if r.code != 2 || !strings.Contains(r.stderr, "--owner is required") || !strings.Contains(r.stderr, "usage:") {
			t.Errorf("exit %d, stderr %q; want 2 and usage", r.code, r.stderr)
		}
	})
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

const goodArticles = `[
  {"purpose_name": "Affidavit", "state": "Karnataka", "min": 20, "max": 20, "fixed": 20, "toFollowConsiderationPrice": false, "amountPercentConsideration": null},
  {"purpose_name": "Rent Agreement", "state": "Karnataka", "min": 100, "max": 500, "fixed": null, "toFollowConsiderationPrice": false},
  {"purpose_name": "Sale Deed", "state": "Delhi", "min": 100, "max": 1000000, "toFollowConsiderationPrice": true, "amountPercentConsideration": 0.06}
]`

func TestArticles(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	arts := h.db.Articles(h.vars["ARTICLES_TABLE"])
	dir := t.TempDir()
	write := func(t *testing.T, name, data string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := func(t *testing.T) string {
		t.Helper()
		a, err := arts.All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := stampduty.EncodeArticles(a)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	var first stampduty.Article
	t.Run("ImportCreates", func(t *testing.T) {
		r := h.mustRun(t, "", "articles", "import", write(t, "good.json", goodArticles))
		if got, want := r.stdout, "imported 3 articles: 3 created, 0 updated\n"; got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
		var err error
		if first, err = arts.Get(ctx, "Rent Agreement", "Karnataka"); err != nil {
			t.Fatal(err)
		}
		if first.ID == 0 || first.DocumentID == "" || first.Min != 100 || first.Max != 500 || first.Fixed != nil {
			t.Errorf("stored article = %+v", first)
		}
		sale, err := arts.Get(ctx, "Sale Deed", "Delhi")
		if err != nil || !sale.FollowsConsideration || sale.Factor == nil || sale.Factor.String() != "0.06" {
			t.Errorf("Sale Deed = %+v, %v", sale, err)
		}
	})
	t.Run("ReimportUpdatesAndKeepsIDs", func(t *testing.T) {
		changed := strings.Replace(goodArticles, `"max": 500`, `"max": 900`, 1)
		r := h.mustRun(t, "", "articles", "import", write(t, "changed.json", changed))
		if got, want := r.stdout, "imported 3 articles: 0 created, 3 updated\n"; got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
		got, err := arts.Get(ctx, "Rent Agreement", "Karnataka")
		if err != nil {
			t.Fatal(err)
		}
		if got.Max != 900 || got.ID != first.ID || got.DocumentID != first.DocumentID {
			t.Errorf("after reimport %+v, before %+v", got, first)
		}
	})
	t.Run("BadRowsWriteNothingAndAreAllReported", func(t *testing.T) {
		before := all(t)
		bad := `[
  {"purpose_name": "Affidavit", "state": "Karnataka", "min": 20, "max": 99, "fixed": 20, "toFollowConsiderationPrice": false},
  {"purpose_name": "Affidavit", "state": "Atlantis", "min": 20, "max": 20, "fixed": 20, "toFollowConsiderationPrice": false},
  {"purpose_name": "Lease", "state": "Delhi", "min": 50, "max": 20, "toFollowConsiderationPrice": false},
  {"purpose_name": "Gift Deed", "state": "Delhi", "min": 0, "max": 20, "fixed": 30, "toFollowConsiderationPrice": true, "amountPercentConsideration": 1.5},
  {"purpose_name": "Will", "state": "Delhi", "min": -1, "max": 20, "toFollowConsiderationPrice": true},
  {"purpose_name": "Affidavit", "state": "Karnataka", "min": 1, "max": 2, "toFollowConsiderationPrice": false}
]`
		r := h.run(t, "", nil, "articles", "import", write(t, "bad.json", bad))
		if r.code != 1 {
			t.Errorf("exit %d, want 1", r.code)
		}
		for _, want := range []string{
			"[1].state: ",
			"[2].max: ",
			"[3].fixed: ",
			"[3].amountPercentConsideration: ",
			"[4].min: ",
			"[4].amountPercentConsideration: ",
			"[5].purpose_name: ",
		} {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `\S`).MatchString(r.stderr) {
				t.Errorf("stderr has no line %q...:\n%s", want, r.stderr)
			}
		}
		if !strings.Contains(r.stderr, "stampctl: ") || !strings.Contains(r.stderr, "5 articles are invalid") ||
			!strings.Contains(r.stderr, "nothing was imported") {
			t.Errorf("stderr has no summary:\n%s", r.stderr)
		}
		if regexp.MustCompile(`(?m)^\[0\]`).MatchString(r.stderr) {
			t.Errorf("the valid row [0] is reported:\n%s", r.stderr)
		}
		if after := all(t); after != before {
			t.Errorf("the articles changed:\nbefore\n%s\nafter\n%s", before, after)
		}
	})
	t.Run("UnknownKeyIsRefused", func(t *testing.T) {
		before := all(t)
		withExtra := strings.Replace(goodArticles, `"max": 500,`, `"max": 500, "colour": "red",`, 1)
		r := h.run(t, withExtra, nil, "articles", "import", "-")
		if r.code != 1 || !strings.Contains(r.stderr, "[1].colour: colour is not an allowed field") {
			t.Errorf("exit %d, stderr %q; want 1 and [1].colour", r.code, r.stderr)
		}
		if after := all(t); after != before {
			t.Errorf("the articles changed")
		}
	})
	t.Run("MalformedFileIsRefused", func(t *testing.T) {
		for in, want := range map[string]string{
			"[\n  {\"min\": 1,}\n]": "line 2, column 13",
			`{}`:                    "must be a JSON array",
			"":                      "not valid JSON",
		} {
			r := h.run(t, in, nil, "articles", "import", "-")
			if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("import %q: exit %d, stderr %q; want 1 and one line with %q", in, r.code, r.stderr, want)
			}
		}
	})
	t.Run("ImportReadsStdin", func(t *testing.T) {
		more := `[{"purpose_name": "Indemnity Bond", "state": "West Bengal", "min": 10, "max": 500, "toFollowConsiderationPrice": false}]`
		r := h.mustRun(t, more, "articles", "import", "-")
		if got, want := r.stdout, "imported 1 articles: 1 created, 0 updated\n"; got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
		if _, err := arts.Get(ctx, "Indemnity Bond", "West Bengal"); err != nil {
			t.Errorf("Get = %v", err)
		}
	})
	t.Run("ExportImportRoundTripIsStable", func(t *testing.T) {
		exported := h.mustRun(t, "", "articles", "export").stdout
		if exported != all(t) {
			t.Errorf("export differs from the stored articles:\n%s", exported)
		}
		if _, err := stampduty.DecodeArticles([]byte(exported)); err != nil {
			t.Fatalf("export does not decode: %v", err)
		}
		r := h.mustRun(t, "", "articles", "import", write(t, "export.json", exported))
		if got, want := r.stdout, "imported 4 articles: 0 created, 4 updated\n"; got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
		if again := h.mustRun(t, "", "articles", "export").stdout; again != exported {
			t.Errorf("second export differs:\nfirst\n%s\nsecond\n%s", exported, again)
		}
	})
	t.Run("ExportWritesAFile", func(t *testing.T) {
		p := filepath.Join(dir, "out.json")
		r := h.mustRun(t, "", "articles", "export", p)
		if !strings.Contains(r.stdout, "exported 4 articles") {
			t.Errorf("stdout = %q", r.stdout)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != all(t) {
			t.Errorf("file = %q, %v", b, err)
		}
	})
	t.Run("ExportOfAnEmptyCatalogueIsAnEmptyArray", func(t *testing.T) {
		r := newHarness(t).run(t, "", nil, "articles", "export")
		if r.code != 0 || r.stdout != "[]\n" {
			t.Errorf("exit %d, stdout %q, stderr %q; want 0 and []", r.code, r.stdout, r.stderr)
		}
	})
}

func TestEnvironment(t *testing.T) {
	h := newHarness(t)
	t.Run("LocalEndpointNeedsNoAWSSetup", func(t *testing.T) {
		c := &cli{ctx: context.Background(), getenv: func(k string) string { return h.vars[k] }}
		db, err := c.openDB()
		if err != nil {
			t.Fatal(err)
		}
		o := db.Client().Options()
		if o.Region != localdb.Region || aws.ToString(o.BaseEndpoint) != h.env.Endpoint {
			t.Errorf("region %q, endpoint %q", o.Region, aws.ToString(o.BaseEndpoint))
		}
		creds, err := o.Credentials.Retrieve(context.Background())
		if err != nil || creds.AccessKeyID != localdb.AccessKeyID {
			t.Errorf("credentials %q, %v; want the local ones", creds.AccessKeyID, err)
		}
	})
	t.Run("LocallyTablesDefaultToTheLogicalIDs", func(t *testing.T) {
		c := &cli{getenv: func(k string) string { return map[string]string{"DYNAMODB_ENDPOINT": localDynamoDB}[k] }}
		for _, spec := range []tableSpec{articlesSpec, tokensSpec, countersSpec, ordersSpec, webhooksSpec, deliveriesSpec} {
			got, err := c.table(spec)
			if err != nil || got.name != spec.logicalID {
				t.Errorf("%s: got %v, %v; want %s", spec.envVar, got, err, spec.logicalID)
			}
			if _, ok := h.env.Names[spec.logicalID]; !ok {
				t.Errorf("template.yaml has no table %s", spec.logicalID)
			}
		}
	})
	t.Run("ATableVariableWins", func(t *testing.T) {
		c := &cli{getenv: func(k string) string {
			return map[string]string{"DYNAMODB_ENDPOINT": localDynamoDB, "TOKENS_TABLE": "mine"}[k]
		}}
		if got, err := c.table(tokensSpec); err != nil || got.name != "mine" || got.from != "TOKENS_TABLE" {
			t.Errorf("got %+v, %v; want mine from TOKENS_TABLE", got, err)
		}
	})
	t.Run("MissingTableNamesTheVariable", func(t *testing.T) {
		r := h.run(t, "", map[string]string{"TOKENS_TABLE": "NoSuchTable"}, "token", "list")
		if r.code != 1 || !strings.Contains(r.stderr, "NoSuchTable (TOKENS_TABLE)") || !strings.Contains(r.stderr, "--stack") {
			t.Errorf("exit %d, stderr %q; want 1, NoSuchTable (TOKENS_TABLE) and --stack", r.code, r.stderr)
		}
	})
	t.Run("AWSWithoutARegionFails", func(t *testing.T) {
		r := h.run(t, "", map[string]string{"DYNAMODB_ENDPOINT": ""}, "token", "list")
		if r.code != 1 || !strings.Contains(r.stderr, "AWS_REGION") {
			t.Errorf("exit %d, stderr %q; want 1 and AWS_REGION", r.code, r.stderr)
		}
	})
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
		// cmd is the command whose usage line follows the message; "" for
		// the overview.
		cmd string
	}{
		{"NoCommand", nil, "no command", ""},
		{"UnknownCommand", []string{"frobnicate"}, `unknown command "frobnicate"`, ""},
		{"UnknownSubcommand", []string{"token", "frobnicate"}, `unknown command "token frobnicate"`, ""},
		{"HelpOfAnUnknownCommand", []string{"help", "token", "frobnicate"}, `unknown command "token frobnicate"`, ""},
		{"GroupWithoutCommand", []string{"articles"}, "which command", ""},
		{"UnknownFlag", []string{"token", "list", "-x"}, "flag provided but not defined", "token list"},
		{"ExtraArgument", []string{"token", "revoke", "abcdef012345", "more"}, `unexpected argument "more"`, "token revoke"},
		{"MissingArgument", []string{"articles", "import"}, "missing argument", "articles import"},
		{"OwnerWithoutValue", []string{"token", "create", "--owner"}, "flag needs an argument", "token create"},
		{"NegativeMinAttempts", []string{"webhooks", "failing", "--min-attempts", "-1"}, "--min-attempts must be 0 or more", "webhooks failing"},
		{"NotAnAPIURL", []string{"orders", "show", "o1", "--api-url", "127.0.0.1:3000"}, `"127.0.0.1:3000" is not an http(s) URL`, "orders show"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h *harness // usage errors never reach DynamoDB
			r := h.run(t, "", nil, tc.args...)
			want := overview("")
			if tc.cmd != "" {
				want = "usage: stampctl " + tc.cmd
			}
			if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, want) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant 2 and %q with %q", r.code, r.stdout, r.stderr, want, tc.want)
			}
		})
	}
}

// TestUsageTellsTheTruth pins what the help says about tokens to what the
// code does: keyed hashes, and how long a revocation takes.
func TestUsageTellsTheTruth(t *testing.T) {
	for _, want := range []string{"HMAC-SHA256", "within 5 seconds"} {
		if !strings.Contains(overview(""), want) {
			t.Errorf("usage does not say %q", want)
		}
	}
	if strings.Contains(overview(""), "only its SHA-256") {
		t.Error("usage says tokens are stored as plain SHA-256 hashes; they are HMACs")
	}
	if got, want := auth.CacheTTL, 5*time.Second; got != want {
		t.Errorf("auth.CacheTTL = %v, but the usage says %v", got, want)
	}
}
