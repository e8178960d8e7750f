package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"stampduty/shared/auth"
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
		"CATALOGUE_TABLE":   env.Table("CatalogueTable"),
		"ARTICLE_LOG_TABLE": env.Table("ArticleLogTable"),
		"ORDERS_TABLE":      env.Table("OrdersTable"),
	}}
}

// result is what one run of stampctl did.
type result struct {
	code           int
	stdout, stderr string
}

// ok runs stampctl with args as run does, with no stdin, and fails t
// unless it exits 0.
func (h *harness) ok(t *testing.T, over map[string]string, args ...string) result {
	t.Helper()
	r := h.run(t, "", over, args...)
	if r.code != 0 {
		t.Fatalf("stampctl %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
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
		{"RulesWithoutCommand", []string{"articles", "rules"}, `articles rules: which command?`, ""},
		{"UnknownRulesCommand", []string{"articles", "rules", "frobnicate"}, `unknown command "articles rules frobnicate"`, ""},
		{"RulesWithoutArticle", []string{"articles", "rules", "show"}, "--purpose and --state are required", "articles rules show"},
		{"QuoteWithoutArticle", []string{"quote", "considerationPrice=5"}, "--purpose and --state are required", "quote"},
		{"BadVersionIndex", []string{"articles", "rules", "edit", "--purpose", "P", "--state", "S", "--file", "f"}, "--version-index and --file are required", "articles rules edit"},
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
