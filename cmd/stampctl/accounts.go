package main

// The accounts' admin commands (accounts.md, Staff), straight in the
// ledger table through shared/accounts: the same workflows, checks and
// idempotency as the console's admin routes.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"stampduty/shared/accounts"
	"stampduty/shared/callers"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/webhooks"
)

// ledgerSpec is the ledger table: the callers' accounts and their entries.
var ledgerSpec = tableSpec{"LEDGER_TABLE", "LedgerTable", "LedgerTableName"}

// defaultLimitParam is the stack's parameter giving a new caller's credit
// limit, and its variable.
const (
	defaultLimitParam = "DefaultCreditLimit"
	defaultLimitVar   = "DEFAULT_CREDIT_LIMIT"
)

// defaultLimit returns the credit limit a new caller's account opens
// with: DEFAULT_CREDIT_LIMIT, else the stack's DefaultCreditLimit, else
// (the local stack, or a stack from before the parameter) unlimited.
func (c *cli) defaultLimit() (*accounts.Money, error) {
	v := strings.TrimSpace(c.getenv(defaultLimitVar))
	if v == "" {
		st, err := c.stack()
		if err != nil {
			return nil, err
		}
		if st != nil {
			v = st.params[defaultLimitParam]
		}
	}
	if v == "" {
		return nil, nil
	}
	limit, err := accounts.ParseLimit(defaultLimitVar, v)
	if err != nil {
		return nil, fmt.Errorf("the default credit limit %q: want unlimited or rupees with two decimals, such as 0.00", v)
	}
	return limit, nil
}

// openCaller opens the account of the caller just created with the
// stack's DefaultCreditLimit (accounts.Ledger.OpenCaller); with the
// default, unlimited, it reads no table and stores nothing.
func (c *cli) openCaller(owner string) error {
	limit, err := c.defaultLimit()
	if err != nil || limit == nil {
		return err
	}
	db, ts, err := c.open(ledgerSpec)
	if err != nil {
		return err
	}
	l := &accounts.Ledger{Store: db.Ledger(ts[0].name), DefaultLimit: limit, Now: c.now}
	if err := l.OpenCaller(c.ctx, owner); err != nil {
		return storeErr("open the caller's account with its credit limit (set it with stampctl accounts limit)", err, ts...)
	}
	fmt.Fprintf(c.stdout, "opened its account with a credit limit of %s (the stack's %s)\n", limit, defaultLimitParam)
	return nil
}

// accountFlags are the flags every accounts command takes: whose account.
type accountFlags struct {
	owner *string
	test  *bool
}

func defineAccountFlags(fs *flag.FlagSet) accountFlags {
	return accountFlags{
		owner: fs.String("owner", "", "the caller whose account it is"),
		test:  fs.Bool("test", false, "the caller's test account (its test tokens' orders), not its live one"),
	}
}

// accountsCtx is an accounts command ready to run: the workflows over the
// ledger table, the owner key of the account, and the tables for errors.
type accountsCtx struct {
	staff  *accounts.Staff
	ledger *store.Ledger
	name   string // the caller's name
	key    string // the account's owner key: name, or its test principal's
	mode   string
	tables []table
}

// accountsOpen checks the caller exists (its record, or its tokens for a
// caller from before records) and opens the ledger table; with tell (the
// commands that change the account), also the webhooks and deliveries
// tables, where its changes put the account events they tell
// (accounts.md, Events) for the dispatch function to deliver.
func (c *cli) accountsOpen(f accountFlags, tell bool) (*accountsCtx, error) {
	if *f.owner == "" {
		return nil, usagef("--owner is required")
	}
	specs := []tableSpec{tokensSpec, ledgerSpec}
	if tell {
		specs = append(specs, webhooksSpec, deliveriesSpec)
	}
	db, ts, err := c.open(specs...)
	if err != nil {
		return nil, err
	}
	admin := &callers.Admin{Tokens: db.Tokens(ts[0].name), Now: c.now}
	if err := admin.Known(c.ctx, *f.owner); err != nil {
		return nil, storeErr("find the caller", err, ts...)
	}
	l := db.Ledger(ts[1].name)
	ledger := &accounts.Ledger{Store: l, Now: c.now}
	if tell {
		ledger.Events = &webhooks.Publisher{Hooks: db.Webhooks(ts[2].name), Jobs: db.Deliveries(ts[3].name)}
	}
	a := &accountsCtx{staff: &accounts.Staff{Ledger: ledger, Refs: l.References()},
		ledger: l, name: *f.owner, key: *f.owner, mode: "live", tables: ts}
	if *f.test {
		a.key, a.mode = stampduty.TestOwnerOf(*f.owner), "test"
	}
	return a, nil
}

// printAccount prints account a of ac's caller, a field a line.
func (c *cli) printAccount(ac *accountsCtx, a accounts.Account) error {
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	orNone := func(m *accounts.Money, none string) string {
		if m == nil {
			return none
		}
		return m.String()
	}
	fmt.Fprintf(w, "owner\t%s\n", ac.name)
	fmt.Fprintf(w, "mode\t%s\n", ac.mode)
	fmt.Fprintf(w, "balance\t%s\n", a.Balance)
	fmt.Fprintf(w, "held\t%s\n", a.Held)
	fmt.Fprintf(w, "available\t%s\n", orNone(a.Available(), "unlimited"))
	fmt.Fprintf(w, "credit limit\t%s\n", orNone(a.Limit, "unlimited"))
	fmt.Fprintf(w, "low-balance threshold\t%s\n", orNone(a.Threshold, "none"))
	fmt.Fprintf(w, "entries\t%d\n", a.Seq)
	fmt.Fprintf(w, "updated\t%s\n", formatTime(a.UpdatedAt))
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the account: %w", err)
	}
	return nil
}

// accountsShow prints a caller's account: `accounts show --owner NAME`.
func (c *cli) accountsShow(fs *flag.FlagSet, args []string) error {
	f := defineAccountFlags(fs)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	ac, err := c.accountsOpen(f, false)
	if err != nil {
		return err
	}
	a, err := ac.staff.View(c.ctx, ac.key)
	if err != nil {
		return storeErr("read the account", err, ac.tables...)
	}
	return c.printAccount(ac, a)
}

// accountsEntries prints a page of a caller's entries, newest first:
// `accounts entries --owner NAME [--limit N] [--before SEQ]`.
func (c *cli) accountsEntries(fs *flag.FlagSet, args []string) error {
	f := defineAccountFlags(fs)
	size := fs.Int64("page-size", 25, "how many entries (1 to 100)")
	before := fs.Int64("before", 0, "the entries before this seq (the command for the next page gives it)")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *size < 1 || *size > 100 || *before < 0 {
		return usagef("accounts entries: --page-size is 1 to 100, --before a seq")
	}
	ac, err := c.accountsOpen(f, false)
	if err != nil {
		return err
	}
	a, err := ac.staff.View(c.ctx, ac.key)
	if err != nil {
		return storeErr("read the account", err, ac.tables...)
	}
	hi := a.Seq
	if *before > 0 {
		hi = min(hi, *before-1)
	}
	es, err := ac.ledger.Entries(c.ctx, ac.key, hi-*size+1, hi)
	if err != nil {
		return storeErr("read the entries", err, ac.tables...)
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SEQ\tCREATED\tTYPE\tAMOUNT\tBALANCE AFTER\tHELD AFTER\tORDER\tREFERENCE\tBY\tNOTE")
	for _, e := range es {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, formatTime(e.CreatedAt), e.Type, e.Amount, e.BalanceAfter, e.HeldAfter,
			dash(e.Order), dash(e.Reference), e.By, printableNote(e.Note))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the entries: %w", err)
	}
	if lo := hi - *size + 1; lo > 1 {
		test := ""
		if *f.test {
			test = " --test"
		}
		fmt.Fprintf(c.stderr, "next page: stampctl accounts entries --owner %s%s --page-size %d --before %d\n", ac.name, test, *size, lo)
	}
	return nil
}

// printableNote is a note as the entries' table shows it: "-" for none,
// quoted when it has spaces or characters a terminal might act on.
func printableNote(note string) string {
	if note == "" {
		return "-"
	}
	return fmt.Sprintf("%q", note)
}

// accountsCredit records a credit: `accounts credit --owner NAME --amount
// A --reference R [--note N]`, as the IAM identity (or --by).
func (c *cli) accountsCredit(fs *flag.FlagSet, args []string) error {
	f := defineAccountFlags(fs)
	amount := fs.String("amount", "", "the money received, in rupees with two decimals (1000.00)")
	ref := fs.String("reference", "", "the bank transfer's UTR (a credit is recorded once per reference)")
	note := fs.String("note", "", "a note for the ledger (optional)")
	by := byFlag(fs)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	m, err := accounts.ParseMoney("--amount", *amount, accounts.Unsigned)
	if err != nil {
		return usagef("accounts credit: %v", fieldMessages(err))
	}
	who, ac, err := c.accountsAct(f, *by)
	if err != nil {
		return err
	}
	a, err := ac.staff.Credit(c.ctx, ac.key, m, *ref, *note, who)
	if err != nil {
		return storeErr("record the credit", err, ac.tables...)
	}
	c.printRecorded(ac, a, "credit of "+a.Entry.Amount.String()+" reference "+a.Entry.Reference)
	return nil
}

// accountsAdjust records an adjustment: `accounts adjust --owner NAME
// --amount -40.50 --note N`. Its id is --request, else one made for this
// run: to retry a run whose outcome is unknown, give the id it printed.
func (c *cli) accountsAdjust(fs *flag.FlagSet, args []string) error {
	f := defineAccountFlags(fs)
	amount := fs.String("amount", "", "the adjustment in rupees with two decimals, its sign its direction (-40.50 takes 40.50 off)")
	note := fs.String("note", "", "why (required)")
	request := fs.String("request", "", "the adjustment's request id, to retry a run whose outcome is unknown (default: a new one)")
	by := byFlag(fs)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	m, err := accounts.ParseMoney("--amount", *amount, accounts.Signed)
	if err != nil {
		return usagef("accounts adjust: %v", fieldMessages(err))
	}
	req := *request
	if req == "" {
		b := make([]byte, 12)
		if _, err := rand.Read(b); err != nil {
			return fmt.Errorf("make a request id: %w", err)
		}
		req = "cli-" + hex.EncodeToString(b)
	}
	who, ac, err := c.accountsAct(f, *by)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "request %s (to retry this adjustment if its outcome is unknown: --request %s)\n", req, req)
	a, err := ac.staff.Adjust(c.ctx, ac.key, m, *note, req, who)
	if err != nil {
		return storeErr("record the adjustment", err, ac.tables...)
	}
	c.printRecorded(ac, a, "adjustment of "+a.Entry.Amount.String())
	return nil
}

// accountsAct names who acts (--by, else the IAM identity) and opens the
// account f names for a change that tells its webhooks.
func (c *cli) accountsAct(f accountFlags, by string) (string, *accountsCtx, error) {
	who, err := c.actor(by)
	if err != nil {
		return "", nil, err
	}
	ac, err := c.accountsOpen(f, true)
	return who, ac, err
}

// printRecorded says what was recorded (or found recorded before) and the
// account after it.
func (c *cli) printRecorded(ac *accountsCtx, a accounts.Applied, what string) {
	if a.Replayed {
		fmt.Fprintf(c.stdout, "already recorded: %s (entry %d, %s by %s); nothing written\n", what, a.Entry.Seq, formatTime(a.Entry.CreatedAt), a.Entry.Sub)
	} else {
		fmt.Fprintf(c.stdout, "recorded %s as entry %d\n", what, a.Entry.Seq)
	}
	c.printAccount(ac, a.Account)
}

// accountsLimit sets a caller's credit limit: `accounts limit --owner
// NAME --limit 0.00|unlimited [--yes]`; --yes confirms a limit below what
// is held.
func (c *cli) accountsLimit(fs *flag.FlagSet, args []string) error {
	f := defineAccountFlags(fs)
	limit := fs.String("limit", "", "the credit limit: rupees with two decimals (0.00: prepaid) or unlimited")
	yes := fs.Bool("yes", false, "confirm a limit below what is held (every new order is refused until available is back at zero)")
	by := byFlag(fs)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	l, err := accounts.ParseLimit("--limit", *limit)
	if err != nil {
		return usagef("accounts limit: --limit is unlimited or rupees with two decimals, such as 0.00")
	}
	who, ac, err := c.accountsAct(f, *by)
	if err != nil {
		return err
	}
	a, err := ac.staff.SetLimit(c.ctx, ac.key, l, *yes, who)
	if stampduty.ErrorCode(err) == stampduty.ECONFLICT && !*yes {
		return fmt.Errorf("%v (stampctl: run again with --yes)", err)
	}
	if err != nil {
		return storeErr("set the credit limit", err, ac.tables...)
	}
	fmt.Fprintf(c.stdout, "set the credit limit to %s\n", *limit)
	return c.printAccount(ac, a)
}

// fieldMessages returns the messages of a refused field, joined.
func fieldMessages(err error) string {
	var e *stampduty.Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return err.Error()
	}
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Message)
	}
	return strings.Join(out, "; ")
}
