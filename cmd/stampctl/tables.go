package main

// The commands that work straight in the service's tables, through
// shared/store: tokens, the articles catalogue, the failing webhooks.

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
	"stampduty/shared/store"
	"stampduty/shared/webhooks"
)

// tokenCreate issues a token for an owner: `token create --owner NAME`. Only
// the token's hash is stored; the token itself is printed once, alone on the
// last line of stdout, and nowhere else. An owner without a caller's record
// (a new name, or a caller from before records) gets one first, as
// `callers create` makes it. With --test the token is a test token
// (sdt_test_…): it works as the caller's test principal and sees only its
// test data (test-mode.md, "Test tokens").
func (c *cli) tokenCreate(fs *flag.FlagSet, args []string) error {
	owner := fs.String("owner", "", "the owner the token identifies")
	test := fs.Bool("test", false, "issue a test token, which sees only the caller's test data")
	by := byFlag(fs)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *owner == "" {
		return usagef("token create: --owner is required")
	}
	if !auth.ValidOwner(*owner) {
		return fmt.Errorf("invalid owner %s: use 1 to 64 ASCII letters, digits, '.', '_' or '-'", strconv.Quote(*owner))
	}
	who, err := c.actor(*by)
	if err != nil {
		return err
	}
	admin, ts, err := c.callersAdmin(true)
	if err != nil {
		return err
	}
	if _, err := admin.Tokens.Caller(c.ctx, *owner); stampduty.ErrorCode(err) == stampduty.ENOTFOUND {
		if _, err := admin.Create(c.ctx, who, *owner); err != nil && stampduty.ErrorCode(err) != stampduty.ECONFLICT {
			return storeErr("create the caller", err, ts...)
		}
		fmt.Fprintf(c.stdout, "created caller %s\n", *owner)
		if err := c.openCaller(*owner); err != nil {
			return err
		}
	} else if err != nil {
		return storeErr("read the caller", err, ts...)
	}
	secret, t, err := admin.Issue(c.ctx, who, *owner, *test)
	if err != nil {
		return storeErr("store the token", err, ts...)
	}
	kind := "token"
	if t.Test {
		kind = "test token (it sees only the caller's test data)"
	}
	fmt.Fprintf(c.stdout, "created %s %s for owner %s. It is shown once, below, and cannot be recovered; keep it secret:\n",
		kind, tokenID(t), t.Owner)
	fmt.Fprintln(c.stdout, secret)
	return nil
}

// tokenList prints every token, oldest first: `token list`. MODE is test
// for a test token (auth.TestPrefix, which sees only its caller's test
// data) and live otherwise; it is the last column, so that scripts that
// read the columns before it (the README's `awk '$4 == "active"'`) read
// them as before.
func (c *cli) tokenList(fs *flag.FlagSet, args []string) error {
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	ts, err := storeCall(c, tokensSpec, "list tokens", func(db *store.DB, name string) ([]auth.Token, error) {
		return db.Tokens(name).List(c.ctx)
	})
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tOWNER\tCREATED\tSTATUS\tMODE")
	for _, t := range ts {
		status := "active"
		if t.Revoked() {
			status = "revoked " + formatTime(t.RevokedAt)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", tokenID(t), printableOwner(t.Owner), formatTime(t.CreatedAt), status, tokenMode(t))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the list: %w", err)
	}
	return nil
}

// tokenRevoke revokes the token with a given ID: `token revoke ID`. Revoking
// a revoked token changes nothing and succeeds.
func (c *cli) tokenRevoke(fs *flag.FlagSet, args []string) error {
	rest, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	id := strings.ToLower(rest[0])
	if !validID(id) {
		return fmt.Errorf("invalid token id %s: use the 12 hex digits of the ID column of `stampctl token list`", strconv.Quote(rest[0]))
	}
	now := c.now().UTC()
	t, err := storeCall(c, tokensSpec, "revoke token "+id, func(db *store.DB, name string) (auth.Token, error) {
		return db.Tokens(name).Revoke(c.ctx, id, now)
	})
	if err != nil {
		return err
	}
	if !t.RevokedAt.Equal(now) {
		fmt.Fprintf(c.stdout, "token %s of owner %s was already revoked at %s\n", tokenID(t), printableOwner(t.Owner), formatTime(t.RevokedAt))
		return nil
	}
	fmt.Fprintf(c.stdout, "revoked token %s of owner %s at %s; it stops working everywhere within %v\n",
		tokenID(t), printableOwner(t.Owner), formatTime(t.RevokedAt), auth.CacheTTL)
	return nil
}

// tokenMode is the mode the list shows for t: test or live.
func tokenMode(t auth.Token) string {
	if t.Test {
		return "test"
	}
	return "live"
}

// validID reports whether id can name a token: 12 to 64 lower-case hex
// digits (an ID as the list shows it, up to the whole hash). Shorter
// prefixes are refused so that a typo cannot revoke some other token.
func validID(id string) bool {
	return len(id) >= 12 && len(id) <= 64 && strings.Trim(id, "0123456789abcdef") == ""
}

// tokenID returns t.ID(), or the whole hash of a malformed record whose hash
// is too short to have an ID.
func tokenID(t auth.Token) string {
	if len(t.Hash) < 12 {
		return strconv.Quote(t.Hash)
	}
	return t.ID()
}

// printableOwner returns owner as is when it is a valid owner name, quoted
// otherwise, so a stray record cannot garble the terminal or the table.
func printableOwner(owner string) string {
	if auth.ValidOwner(owner) {
		return owner
	}
	return strconv.Quote(owner)
}

// formatTime renders t in RFC 3339, UTC, to the second; "-" for the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// idBlock is how many article ids an import reserves per counter update.
const idBlock = 10

// articlesPublish publishes the articles table as the catalogue the public
// routes serve: `articles publish`. Import does it too; this is the step
// for a stack whose articles were imported before snapshots, or after a
// publish that failed.
func (c *cli) articlesPublish(fs *flag.FlagSet, args []string) error {
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	db, ts, err := c.open(articlesSpec, catalogueSpec)
	if err != nil {
		return err
	}
	return c.publish(db, ts[0], ts[1])
}

// publish publishes the articles table's content (store.Catalogue.Publish)
// and says so on stderr, so that import's stdout stays one line.
func (c *cli) publish(db *store.DB, articles, catalogue table) error {
	s, err := db.Catalogue(catalogue.name).Publish(c.ctx, db.Articles(articles.name), c.now())
	if err != nil {
		return storeErr("publish the catalogue (run `stampctl articles publish` again)", err, articles, catalogue)
	}
	fmt.Fprintf(c.stderr, "published the catalogue: version %s, %d articles; every instance serves it within a minute\n", s.Version, s.Articles)
	return nil
}

// reportInvalid prints each failing article field of an invalid catalogue
// (data, read from name) to stderr, one "path: message" per line, and
// returns the summary error.
func (c *cli) reportInvalid(name string, data []byte, err error) error {
	var e *stampduty.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("read %s: %w", name, err)
	}
	for _, f := range e.Fields {
		if f.Path != "" { // a file-level problem is the summary itself
			fmt.Fprintf(c.stderr, "%s: %s\n", f.Path, f.Message)
		}
	}
	msg := e.Message
	var syn *json.SyntaxError
	if errors.As(e.Err, &syn) {
		line, col := position(data, syn.Offset)
		msg = fmt.Sprintf("%s: line %d, column %d: %v", msg, line, col, syn)
	}
	return fmt.Errorf("%s: %s; nothing was imported", name, msg)
}

// position returns the 1-based line and column (in bytes) just before
// offset in data, where encoding/json reports a syntax error.
func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset-1, 0), int64(len(data)))
	before := data[:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = 1 + len(before) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, col
}

// readInput reads the file at path, or stdin when path is "-", and returns
// the name to use in messages with the contents.
func (c *cli) readInput(path string) (string, []byte, error) {
	if path == "-" {
		data, err := io.ReadAll(c.stdin)
		if err != nil {
			return "stdin", nil, fmt.Errorf("read stdin: %w", err)
		}
		return "stdin", data, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return path, nil, fmt.Errorf("read the articles: %w", err)
	}
	return path, data, nil
}

// articlesExport writes the whole catalogue in the format import reads:
// `articles export [FILE]`, to stdout when FILE is absent or "-".
func (c *cli) articlesExport(fs *flag.FlagSet, args []string) error {
	rest, err := parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	arts, err := storeCall(c, articlesSpec, "read the articles", func(db *store.DB, name string) ([]stampduty.Article, error) {
		return db.Articles(name).All(c.ctx)
	})
	if err != nil {
		return err
	}
	data, err := stampjson.EncodeArticles(arts)
	if err != nil {
		return err
	}
	if len(rest) == 0 || rest[0] == "-" {
		_, err = c.stdout.Write(data)
	} else if err = os.WriteFile(rest[0], data, 0o644); err == nil {
		fmt.Fprintf(c.stdout, "exported %d articles to %s\n", len(arts), rest[0])
	}
	if err != nil {
		return fmt.Errorf("write the articles: %w", err)
	}
	return nil
}

// webhooksFailing lists, across all callers, the webhooks whose events
// wait after failed attempts and those a 410 disabled (webhooks.Failures):
// an aligned table, or JSON with --json.
func (c *cli) webhooksFailing(fs *flag.FlagSet, args []string) error {
	min := fs.Int("min-attempts", 1, "list events waiting after at least this many attempts")
	asJSON := fs.Bool("json", false, "print JSON (a list of objects) instead of the table")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *min < 0 {
		return usagef("webhooks failing: --min-attempts must be 0 or more")
	}
	db, ts, err := c.open(webhooksSpec, deliveriesSpec)
	if err != nil {
		return err
	}
	list, err := webhooks.Failures(c.ctx, db.Deliveries(ts[1].name), db.Webhooks(ts[0].name), *min)
	if err != nil {
		return storeErr("list the failing webhooks", err, ts...)
	}
	if *asJSON {
		return c.printJSON(list)
	}
	if len(list) == 0 {
		fmt.Fprintf(c.stdout, "no webhook is failing: no event waits after %d or more attempts, and no webhook is disabled\n", *min)
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "OWNER\tWEBHOOK\tENABLED\tWAITING\tOLDEST EVENT\tMAX ATTEMPTS\tLAST ATTEMPT\tNEXT DUE\tURL")
	for _, f := range list {
		last := "-"
		if a := f.LastAttempt; a != nil {
			status := fmt.Sprint(a.Status)
			if a.Status == 0 {
				status = "no answer"
			}
			last = status + " at " + a.At
		}
		owner := f.Owner
		if !f.Livemode {
			owner += " (test)"
		}
		fmt.Fprintf(w, "%s\t%s\t%v\t%d\t%s\t%d\t%s\t%s\t%s\n", owner, f.Webhook, f.Enabled, f.Waiting,
			orDash(f.OldestEventAt), f.MaxAttempts, last, orDash(f.NextAttemptAt), f.URL)
	}
	return w.Flush()
}

// orDash returns *s, or "-" when s is nil.
func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
