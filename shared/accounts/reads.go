package accounts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"stampduty/shared/stampduty"
)

// India is the zone of the caller's dates (statements' months, the CSV's
// from and to): +05:30 all year, no daylight saving.
var India = time.FixedZone("IST", 5*3600+1800)

// EntryFilter keeps the entries of the given types (any when empty) about
// the given order (any when "").
type EntryFilter struct {
	Types []string
	Order string
}

// Keeps says whether f keeps e.
func (f EntryFilter) Keeps(e Entry) bool {
	return (len(f.Types) == 0 || slices.Contains(f.Types, e.Type)) && (f.Order == "" || f.Order == e.Order)
}

// empty says whether f keeps every entry.
func (f EntryFilter) empty() bool { return len(f.Types) == 0 && f.Order == "" }

// Reads is what the caller's reads need of the ledger's store, besides
// Store: the account with its newest entry in one read, ranges of entries
// by seq, one entry by seq, and a range read through a filter.
type Reads interface {
	// Head returns owner's account and its newest entry (nil when none),
	// from the account item alone.
	Head(ctx context.Context, owner string) (Account, *Entry, error)
	// Entries returns the entries lo … hi that are stored, newest first.
	Entries(ctx context.Context, owner string, lo, hi int64) ([]Entry, error)
	// EntryAt returns entry seq, nil when its item is not stored.
	EntryAt(ctx context.Context, owner string, seq int64) (*Entry, error)
	// EntriesWhere returns up to limit entries of lo … hi that f keeps,
	// newest first, and next: the highest seq it has not read.
	EntriesWhere(ctx context.Context, owner string, lo, hi int64, f EntryFilter, limit int) ([]Entry, int64, error)
}

// Caller is the caller's account API (accounts.md, Caller endpoints): its
// reads (the account, entries, statements, the CSV's rows) and its two
// writes (the low-balance threshold, test credits).
type Caller struct {
	*Ledger
	Reads Reads
}

// head returns owner's account and newest entry; a test principal's
// account never touched reads as it will open (its opening credit, limit
// 0, the opening entry as seq 1), with nothing written.
func (c *Caller) head(ctx context.Context, owner string) (Account, *Entry, error) {
	a, last, err := c.Reads.Head(ctx, owner)
	if err != nil || a.Opened || !MustOpen(owner) {
		return a, last, err
	}
	a, e := c.opening(owner)
	bal, held := e.Effects()
	e.Seq, e.BalanceAfter, e.HeldAfter, e.Totals = 1, bal, held, Totals{}.Add(e.Type, e.Amount)
	a.Balance, a.Held, a.Seq, a.Totals, a.UpdatedAt = bal, held, 1, e.Totals, e.CreatedAt
	return a, e, nil
}

// View returns owner's account as GET /api/account shows it: one read.
func (c *Caller) View(ctx context.Context, owner string) (Account, error) {
	a, _, err := c.head(ctx, owner)
	return a, err
}

// span reads entries lo … hi (newest first) with the newest entry merged
// in when its own item is not written yet (its writer is between its two
// calls): the account item's last is it.
func (c *Caller) span(ctx context.Context, owner string, lo, hi int64, last *Entry) ([]Entry, error) {
	es, err := c.Reads.Entries(ctx, owner, lo, hi)
	if err != nil {
		return nil, err
	}
	return mergeNewest(es, lo, hi, last), nil
}

// mergeNewest puts last at the head of es (lo … hi, newest first) when it
// falls in the range and es lacks it.
func mergeNewest(es []Entry, lo, hi int64, last *Entry) []Entry {
	if last == nil || last.Seq < lo || last.Seq > hi || (len(es) > 0 && es[0].Seq == last.Seq) {
		return es
	}
	return append([]Entry{*last}, es...)
}

// entryAt returns entry seq (1 … the account's newest), from the account
// item when it is the newest; an entry whose item is missing (a writer
// stopped between its calls, which the next change or the reconciler
// repairs) is looked for at the next seqs.
func (c *Caller) entryAt(ctx context.Context, owner string, seq int64, a Account, last *Entry) (*Entry, error) {
	for s := seq; s <= a.Seq; s++ {
		if last != nil && s == last.Seq {
			return last, nil
		}
		e, err := c.Reads.EntryAt(ctx, owner, s)
		if err != nil || e != nil {
			return e, err
		}
	}
	return nil, nil
}

// firstAt returns the seq of owner's first entry made at or after t (the
// account's Seq+1 when none): a binary search with point reads of entries
// (about log2 of the ledger's length, 18 for 100,000 entries; one when t
// is before the first entry, none when after the newest), never a read of
// the range. Entries' createdAt grows with their seq: each is stamped
// by the function that applies it, in seq order (only the writers'
// clock skew, milliseconds, can disorder neighbours).
func (c *Caller) firstAt(ctx context.Context, owner string, t time.Time, a Account, last *Entry) (int64, error) {
	lo, hi := int64(1), a.Seq+1 // the answer is in [lo, hi]
	if last == nil || last.CreatedAt.Before(t) {
		return hi, nil // every entry is before t
	}
	// The ends first: a range that starts before the ledger (the usual
	// export, a first statement) costs one read.
	if first, err := c.entryAt(ctx, owner, 1, a, last); err != nil || first == nil || !first.CreatedAt.Before(t) {
		return 1, err
	}
	// Each step halves [lo, hi], so 64 steps cover any int64 range: a
	// search still going after them is a bug, answered as one rather than
	// looping (and reading) forever.
	for step := 0; lo < hi; step++ {
		if step == 64 {
			return 0, stampduty.Internal(fmt.Errorf("the search of %s's entries for %s did not end in 64 steps", owner, t.Format(time.RFC3339)))
		}
		mid := lo + (hi-lo)/2
		e, err := c.entryAt(ctx, owner, mid, a, last)
		if err != nil {
			return 0, err
		}
		if e == nil || !e.CreatedAt.Before(t) {
			hi = mid
		} else {
			lo = max(mid, e.Seq) + 1
		}
	}
	return lo, nil
}

// EntryQuery is a caller's query of its entries (GET /api/account/entries).
type EntryQuery struct {
	Filter EntryFilter
	// From and Before bound createdAt: at or after From, before Before
	// (zero: no bound).
	From, Before time.Time
	// Page and PageSize: Page 0 means a cursor page (Cursor).
	Page, PageSize int
	// Cursor is where a cursor page starts: the highest seq it may hold;
	// 0 starts from the newest.
	Cursor int64
}

// EntryPage is a page of entries, newest first. Total is the number of
// entries the query selects, -1 when unknown without reading them (a type
// or order filter); Next is the cursor of the next page, 0 when none.
type EntryPage struct {
	Entries []Entry
	Total   int64
	Next    int64
}

// MaxCursor is the largest cursor a caller may send: a seq of 12 digits.
const MaxCursor = 999_999_999_999

// Entries answers q over owner's entries, newest first. Page N of a query
// without a type or order filter is the seq range [hi−N·size+1,
// hi−(N−1)·size] of the range its createdAt bounds select (hi the newest),
// one Query whatever N is: it costs what page 1 costs. A type or order
// filter reads the range through a FilterExpression, from the cursor down.
func (c *Caller) Entries(ctx context.Context, owner string, q EntryQuery) (EntryPage, error) {
	a, last, err := c.head(ctx, owner)
	if err != nil {
		return EntryPage{}, err
	}
	lo, hi, err := c.bounds(ctx, owner, q.From, q.Before, a, last)
	if err != nil {
		return EntryPage{}, err
	}
	total := max(hi-lo+1, 0)
	if q.Cursor > 0 {
		hi = min(hi, q.Cursor)
	}
	size := int64(q.PageSize)
	if q.Filter.empty() {
		top := hi
		if q.Page > 0 {
			top = hi - int64(q.Page-1)*size
		}
		bottom := max(lo, top-size+1)
		es, err := c.span(ctx, owner, bottom, top, last)
		if err != nil || top < lo {
			return EntryPage{Entries: []Entry{}, Total: total}, err
		}
		page := EntryPage{Entries: es, Total: total}
		if bottom > lo {
			page.Next = bottom - 1
		}
		return page, nil
	}
	// Filtered: skip the pages before Page (reading them), then read one.
	skip := 0
	if q.Page > 0 {
		skip = (q.Page - 1) * q.PageSize
	}
	page := EntryPage{Entries: []Entry{}, Total: -1}
	for hi >= lo {
		want := q.PageSize - len(page.Entries)
		if skip > 0 {
			want = skip
		}
		es, next, err := c.Reads.EntriesWhere(ctx, owner, lo, hi, q.Filter, want)
		if err != nil {
			return EntryPage{}, err
		}
		if last != nil && last.Seq >= lo && last.Seq <= hi && q.Filter.Keeps(*last) && (len(es) == 0 || es[0].Seq != last.Seq) {
			es = append([]Entry{*last}, es...) // its item is not written yet
			if len(es) > want {
				next, es = es[want-1].Seq-1, es[:want]
			}
		}
		hi = next
		if skip > 0 {
			skip -= len(es)
			continue
		}
		page.Entries = append(page.Entries, es...)
		if len(page.Entries) == q.PageSize || q.Page == 0 {
			break // a cursor page is one read: a short one says where to go on
		}
	}
	if hi >= lo {
		page.Next = hi
	}
	return page, nil
}

// bounds returns the seqs of the first and last entries made in [from,
// before) (zero times: unbounded), by binary search; hi < lo when none.
func (c *Caller) bounds(ctx context.Context, owner string, from, before time.Time, a Account, last *Entry) (lo, hi int64, err error) {
	lo, hi = 1, a.Seq
	if !from.IsZero() {
		if lo, err = c.firstAt(ctx, owner, from, a, last); err != nil {
			return 0, 0, err
		}
	}
	if !before.IsZero() {
		end, err := c.firstAt(ctx, owner, before, a, last)
		if err != nil {
			return 0, 0, err
		}
		hi = end - 1
	}
	return lo, hi, nil
}

// Statement is a month's statement (GET /api/account/statements/YYYY-MM):
// openingBalance + credits − charges + adjustments = closingBalance and
// openingHeld + holds − releases − charges = closingHeld, exactly.
type Statement struct {
	Month                                                     string
	OpeningBalance, Credits, Charges, Adjustments             Money
	ClosingBalance, OpeningHeld, Holds, Releases, ClosingHeld Money
}

// StatementOf subtracts the running totals before a month (opening) from
// those at its end (closing).
func StatementOf(month string, opening, closing Totals) Statement {
	return Statement{Month: month,
		OpeningBalance: opening.Balance(), ClosingBalance: closing.Balance(),
		Credits: closing.Credits - opening.Credits, Charges: closing.Charges - opening.Charges,
		Adjustments: closing.Adjustments - opening.Adjustments,
		OpeningHeld: opening.Held(), ClosingHeld: closing.Held(),
		Holds: closing.Holds - opening.Holds, Releases: closing.Releases - opening.Releases}
}

// ParseMonth reads a statement's month, YYYY-MM, as the India month's
// bounds [start, end); a month that has not begun at now is EINVALID,
// and so is anything else than YYYY-MM.
func ParseMonth(s string, now time.Time) (start, end time.Time, err error) {
	t, perr := time.ParseInLocation("2006-01", s, India)
	if perr != nil || len(s) != 7 {
		return time.Time{}, time.Time{}, stampduty.Invalid([]stampduty.FieldError{{Path: "month", Message: "month must be a month as YYYY-MM, such as 2026-04"}})
	}
	if t.After(now) {
		return time.Time{}, time.Time{}, stampduty.Invalid([]stampduty.FieldError{{Path: "month", Message: "month " + s + " has not begun yet"}})
	}
	return t, t.AddDate(0, 1, 0), nil
}

// Statement returns owner's statement of month (YYYY-MM, India's; the
// current month runs to now) from the running totals of two entries: the
// last before the month (opening) and the last in it (closing), found by
// binary search (firstAt; none for an end after the newest entry, as the
// current month's is). It never reads the month's entries.
func (c *Caller) Statement(ctx context.Context, owner, month string) (Statement, error) {
	now := c.now()
	start, end, err := ParseMonth(month, now)
	if err != nil {
		return Statement{}, err
	}
	a, last, err := c.head(ctx, owner)
	if err != nil {
		return Statement{}, err
	}
	totalsBefore := func(t time.Time) (Totals, error) {
		first, err := c.firstAt(ctx, owner, t, a, last)
		if err != nil {
			return Totals{}, err
		}
		if first <= 1 {
			return Totals{}, nil
		}
		e, err := c.entryAt(ctx, owner, first-1, a, last)
		switch {
		case err != nil:
			return Totals{}, err
		case e == nil || e.Seq != first-1:
			return Totals{}, stampduty.Internal(fmt.Errorf("entry %d of %s is not stored", first-1, owner))
		}
		return e.Totals, nil
	}
	opening, err := totalsBefore(start)
	if err != nil {
		return Statement{}, err
	}
	closing, err := totalsBefore(end)
	if err != nil {
		return Statement{}, err
	}
	return StatementOf(month, opening, closing), nil
}

// MaxCSVRows is the most rows one CSV export holds (accounts.md).
const MaxCSVRows = 100_000

// MaxCSVDays is the longest range one CSV export covers, both days counted.
const MaxCSVDays = 366

// ParseDay reads a CSV bound, YYYY-MM-DD, as India's midnight starting it;
// anything else is EINVALID naming param.
func ParseDay(param, s string) (time.Time, error) {
	t, err := time.ParseInLocation("2006-01-02", s, India)
	if err != nil || len(s) != 10 {
		return time.Time{}, stampduty.Invalid([]stampduty.FieldError{{Path: param, Message: param + " must be a date as YYYY-MM-DD, such as 2026-04-01"}})
	}
	return t, nil
}

// CSVRange reads from and to (both India's dates, both included) as the
// range [start, end) of an export: from at most to, at most MaxCSVDays
// days counting both; each is required.
func CSVRange(from, to string) (start, end time.Time, err error) {
	var bad []stampduty.FieldError
	for _, p := range []struct{ name, v string }{{"from", from}, {"to", to}} {
		if p.v == "" {
			bad = append(bad, stampduty.FieldError{Path: p.name, Message: p.name + " is required, as YYYY-MM-DD"})
		}
	}
	if bad != nil {
		return time.Time{}, time.Time{}, stampduty.Invalid(bad)
	}
	if start, err = ParseDay("from", from); err != nil {
		return time.Time{}, time.Time{}, err
	}
	last, err := ParseDay("to", to)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	end = last.AddDate(0, 0, 1)
	switch days := int(end.Sub(start).Hours()) / 24; {
	case last.Before(start):
		return time.Time{}, time.Time{}, stampduty.Invalid([]stampduty.FieldError{{Path: "to", Message: "to must not be before from"}})
	case days > MaxCSVDays:
		return time.Time{}, time.Time{}, stampduty.Invalid([]stampduty.FieldError{{Path: "to",
			Message: fmt.Sprintf("The range from %s to %s is %d days; an export covers at most %d days, both counted", from, to, days, MaxCSVDays)}})
	}
	return start, end, nil
}

// csvChunk is how many entries an export reads per Query: about 800 KB,
// under a Query page's 1 MB, so one call each.
const csvChunk = 4000

// ErrTooManyRows is the 400 of an export whose range holds more than
// MaxCSVRows entries.
func tooManyRows(n int64) error {
	msg := fmt.Sprintf("The range holds %d entries; an export holds at most %d. Ask for a shorter range.", n, MaxCSVRows)
	return stampduty.Invalid([]stampduty.FieldError{{Path: "to", Message: msg}})
}

// Export writes owner's entries made in [start, end), oldest first, to
// rows (the CSV: WriteCSV's), after checking how many there are (the
// seqs the binary searches find) and refusing more than MaxCSVRows before
// any is read. rows is called once per chunk of entries, in order.
func (c *Caller) Export(ctx context.Context, owner string, start, end time.Time, rows func([]Entry) error) (int64, error) {
	a, last, err := c.head(ctx, owner)
	if err != nil {
		return 0, err
	}
	lo, hi, err := c.bounds(ctx, owner, start, end, a, last)
	if err != nil {
		return 0, err
	}
	n := max(hi-lo+1, 0)
	if n > MaxCSVRows {
		return 0, tooManyRows(n)
	}
	for s := lo; s <= hi; s += csvChunk {
		es, err := c.span(ctx, owner, s, min(s+csvChunk-1, hi), last)
		if err != nil {
			return 0, err
		}
		slices.Reverse(es)
		if err := rows(es); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// SetThreshold sets owner's low-balance threshold (nil: none), keeping its
// limit: Configure on the seq just read, read again and retried when a
// change came in between. The Low flag is set from available against the
// new threshold, so that a threshold above available does not tell the
// caller (the crossing happens with a change, not a setting).
func (c *Caller) SetThreshold(ctx context.Context, owner string, threshold *Money) (Account, error) {
	for range configureTries {
		a, err := c.ensureOpen(ctx, owner)
		if err != nil {
			return Account{}, err
		}
		low := false
		if v := a.Available(); v != nil && threshold != nil {
			low = *v < *threshold
		}
		out, err := c.Store.Configure(ctx, owner, a.Seq, a.Limit, threshold, low, c.now())
		if errors.Is(err, ErrChanged) {
			continue
		}
		return out, err
	}
	return Account{}, stampduty.Errorf(stampduty.ECONFLICT, "The account changed while it was being set; try again")
}

// configureTries is how many times a setting is read and written again
// when the account changes in between.
const configureTries = 5

// ParseCursor reads a cursor an entries page gave (Next, written by
// FormatCursor); anything else is EINVALID naming cursor.
func ParseCursor(s string) (int64, error) {
	v, ok := strings.CutPrefix(s, "s")
	n, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil || n < 1 || n > MaxCursor || strconv.FormatInt(n, 10) != v {
		return 0, stampduty.Invalid([]stampduty.FieldError{{Path: "cursor", Message: "cursor must be the nextCursor of an entries page"}})
	}
	return n, nil
}

// FormatCursor writes the cursor of a page starting at seq.
func FormatCursor(seq int64) string { return "s" + strconv.FormatInt(seq, 10) }
