package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/store"
)

// tokenCreate issues a token for an owner: `token create --owner NAME`. Only
// the token's hash is stored; the token itself is printed once, alone on the
// last line of stdout, and nowhere else.
func (c *cli) tokenCreate(fs *flag.FlagSet, args []string) error {
	owner := fs.String("owner", "", "the owner the token identifies")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *owner == "" {
		return usagef("token create: --owner is required")
	}
	if !auth.ValidOwner(*owner) {
		return fmt.Errorf("invalid owner %s: use 1 to 64 ASCII letters, digits, '.', '_' or '-'", strconv.Quote(*owner))
	}
	tokens, err := c.table(tokensSpec)
	if err != nil {
		return err
	}
	db, err := c.openDB()
	if err != nil {
		return err
	}
	hasher, err := c.hasher()
	if err != nil {
		return err
	}
	secret, hash, err := hasher.NewToken()
	if err != nil {
		return fmt.Errorf("make a token: %w", err)
	}
	t := auth.Token{Hash: hash, Owner: *owner, CreatedAt: c.now().UTC()}
	if err := db.Tokens(tokens.name).Create(c.ctx, t); err != nil {
		return storeErr("store the token", err, tokens)
	}
	fmt.Fprintf(c.stdout, "created token %s for owner %s. It is shown once, below, and cannot be recovered; keep it secret:\n",
		tokenID(t), t.Owner)
	fmt.Fprintln(c.stdout, secret)
	return nil
}

// tokenList prints every token, oldest first: `token list`.
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
	fmt.Fprintln(w, "ID\tOWNER\tCREATED\tSTATUS")
	for _, t := range ts {
		status := "active"
		if t.Revoked() {
			status = "revoked " + formatTime(t.RevokedAt)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", tokenID(t), printableOwner(t.Owner), formatTime(t.CreatedAt), status)
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
