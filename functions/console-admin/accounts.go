package main

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/function"
	"stampduty/shared/function/staffauth"
	"stampduty/shared/jsonobj"
	"stampduty/shared/stampduty"
)

// accountAdmin is the admins' workflows on the callers' accounts
// (accounts.Staff) and the ledger's entries by seq (store.Ledger).
type accountAdmin interface {
	View(ctx context.Context, owner string) (accounts.Account, error)
	Credit(ctx context.Context, owner string, amount accounts.Money, reference, note, sub string) (accounts.Applied, error)
	Adjust(ctx context.Context, owner string, amount accounts.Money, note, request, sub string) (accounts.Applied, error)
	SetLimit(ctx context.Context, owner string, limit *accounts.Money, confirm bool, sub string) (accounts.Account, error)
	OpenCaller(ctx context.Context, owner string) error
	Entries(ctx context.Context, owner string, lo, hi int64) ([]accounts.Entry, error)
	Export(ctx context.Context, owner string, start, end time.Time, rows func([]accounts.Entry) error) (int64, error)
}

// staffLedger is accounts.Staff with the entries' reads of the store and
// the caller's export (accounts.Caller: a range of days found by binary
// search, never a read of the whole ledger).
type staffLedger struct {
	*accounts.Staff
	entries func(ctx context.Context, owner string, lo, hi int64) ([]accounts.Entry, error)
	export  func(ctx context.Context, owner string, start, end time.Time, rows func([]accounts.Entry) error) (int64, error)
}

// Export writes owner's entries made in [start, end) (zero: unbounded),
// oldest first, to rows.
func (s staffLedger) Export(ctx context.Context, owner string, start, end time.Time, rows func([]accounts.Entry) error) (int64, error) {
	return s.export(ctx, owner, start, end, rows)
}

// Entries returns owner's entries lo … hi, newest first.
func (s staffLedger) Entries(ctx context.Context, owner string, lo, hi int64) ([]accounts.Entry, error) {
	return s.entries(ctx, owner, lo, hi)
}

// account is a caller's account as the console shows it: as GET
// /api/account answers it (accounts.md), with its owner (the caller's
// name; its test account is the caller's with livemode false).
type account struct {
	Owner string `json:"owner"`
	accounts.AccountJSON
}

// entry is a ledger entry as accounts.md shows it (GET /api/account/entries).
type entry = accounts.EntryJSON

// The accounts' routes' answers: the account; a page of entries (meta:
// Strapi's pagination and the cursor of the next page, null on the last);
// an entry just recorded with the account after it (meta.replayed: a
// credit whose reference was recorded before, answered with its first
// entry, or a retried adjustment).
type (
	accountResponse = response[account]
	entriesResponse struct {
		Data []entry     `json:"data"`
		Meta entriesMeta `json:"meta"`
	}
	entriesMeta struct {
		Pagination pagination `json:"pagination"`
		NextCursor *string    `json:"nextCursor"`
	}
	pagination struct {
		Page      int64 `json:"page"`
		PageSize  int64 `json:"pageSize"`
		PageCount int64 `json:"pageCount"`
		Total     int64 `json:"total"`
	}
	recordedResponse struct {
		Data struct {
			Entry   entry   `json:"entry"`
			Account account `json:"account"`
		} `json:"data"`
		Meta struct {
			Replayed bool `json:"replayed"`
		} `json:"meta"`
	}
)

const accountPath = "/api/console/accounts/{owner}"

// accountRoutes are the accounts' admin routes (accounts.md, Staff).
func (h *handler) accountRoutes() []function.Path {
	return []function.Path{
		{Method: http.MethodGet, Pattern: accountPath, Serve: staffauth.AsAdmin(h.showAccount)},
		{Method: http.MethodGet, Pattern: accountPath + "/entries", Serve: staffauth.AsAdmin(h.listEntries)},
		{Method: http.MethodPost, Pattern: accountPath + "/credits", Serve: staffauth.AsAdmin(h.recordCredit)},
		{Method: http.MethodPost, Pattern: accountPath + "/adjustments", Serve: staffauth.AsAdmin(h.recordAdjustment)},
		{Method: http.MethodPut, Pattern: accountPath + "/limit", Serve: staffauth.AsAdmin(h.saveLimit)},
	}
}

// ownerKey returns the owner key of the account r names: the caller's (the
// path's {owner}), or its test principal's with ?mode=test; the caller
// must exist (404 otherwise, before the ledger is read).
func (h *handler) ownerKey(r *http.Request) (key string, live bool, err error) {
	name := r.PathValue("owner")
	live = true
	switch mode := r.URL.Query().Get("mode"); mode {
	case "", modeLive:
	case modeTest:
		live = false
	default:
		return "", false, stampduty.Invalid([]stampduty.FieldError{{Path: "mode", Message: "mode must be live or test"}})
	}
	if err := h.callers.Known(r.Context(), name); err != nil {
		return "", false, err
	}
	if !live {
		return stampduty.TestOwnerOf(name), false, nil
	}
	return name, true, nil
}

// accountOf is a as the console shows it: as GET /api/account answers it,
// with its owner.
func accountOf(name string, live bool, a accounts.Account) account {
	return account{Owner: name, AccountJSON: accounts.AccountView(a, live)}
}

// showAccount answers the account of the caller the path names (?mode=test:
// its test account): the caller's record (one GetItem) and the account
// (one GetItem).
func (h *handler) showAccount(r *http.Request, _ string) (any, error) {
	key, live, err := h.ownerKey(r)
	if err != nil {
		return nil, err
	}
	a, err := h.accounts.View(r.Context(), key)
	if err != nil {
		return nil, err
	}
	return accountResponse{Data: accountOf(r.PathValue("owner"), live, a)}, nil
}

// The entries' page sizes.
const (
	defaultPageSize = 25
	maxPageSize     = 100
)

// listEntries answers a page of the account's entries, newest first:
// pagination[page] and pagination[pageSize] (≤ 100), or cursor (the
// nextCursor of the page before). An entry's seq places it, so page N is
// one Query of its seqs, as page 1 is.
func (h *handler) listEntries(r *http.Request, _ string) (any, error) {
	q := r.URL.Query()
	var bad []stampduty.FieldError
	num := func(key string, def, most int64) int64 {
		s := q.Get(key)
		if s == "" {
			return def
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 1 || v > most {
			bad = append(bad, stampduty.FieldError{Path: key, Message: key + " must be a whole number from 1 to " + strconv.FormatInt(most, 10)})
		}
		return v
	}
	size := num("pagination[pageSize]", defaultPageSize, maxPageSize)
	page := num("pagination[page]", 1, 1<<40)
	cursor := num("cursor", 0, 1<<50)
	if q.Has("cursor") && q.Has("pagination[page]") {
		bad = append(bad, stampduty.FieldError{Path: "cursor", Message: "cursor and pagination[page] are not given together"})
	}
	if bad != nil {
		return nil, stampduty.Invalid(bad)
	}
	key, _, err := h.ownerKey(r)
	if err != nil {
		return nil, err
	}
	a, err := h.accounts.View(r.Context(), key)
	if err != nil {
		return nil, err
	}
	hi := a.Seq - (page-1)*size
	if cursor > 0 {
		hi = min(cursor-1, a.Seq)
		page = (a.Seq-hi)/size + 1
	}
	lo := hi - size + 1
	es, err := h.accounts.Entries(r.Context(), key, lo, hi)
	if err != nil {
		return nil, err
	}
	out := entriesResponse{Data: make([]entry, 0, len(es)),
		Meta: entriesMeta{Pagination: pagination{Page: page, PageSize: size, PageCount: (a.Seq + size - 1) / size, Total: a.Seq}}}
	for _, e := range es {
		out.Data = append(out.Data, accounts.EntryView(e))
	}
	if lo > 1 && hi >= 1 {
		next := strconv.FormatInt(lo, 10)
		out.Meta.NextCursor = &next
	}
	return out, nil
}

// staffChange is a credit's or adjustment's body: {"data": {"amount",
// "reference", "note"}}, each a string (a reference only for a credit).
type staffChange struct {
	amount          accounts.Money
	reference, note string
}

// readChange reads a credit's or adjustment's body; sign is the amount's.
// Every field in error is named at once; amount is required.
func readChange(r *http.Request, sign accounts.Sign, withReference bool) (staffChange, error) {
	body, err := function.ReadJSONBody(r)
	if err != nil {
		return staffChange{}, err
	}
	members, err := function.DecodeData(body)
	if err != nil {
		return staffChange{}, err
	}
	var c staffChange
	var bad []stampduty.FieldError
	given := map[string]bool{}
	for _, m := range members {
		known := m.Key == "amount" || m.Key == "note" || (m.Key == "reference" && withReference)
		switch {
		case !known:
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " is not a field of this change"})
		case m.Value.Kind == jsonobj.Null && m.Key != "amount":
		case m.Value.Kind != jsonobj.String:
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + ` must be a string, such as "1000.00"`})
		case m.Key == "amount":
			given["amount"] = true
			v, err := accounts.ParseMoney("amount", m.Value.Text, sign)
			var e *stampduty.Error
			if errors.As(err, &e) {
				bad = append(bad, e.Fields...)
			}
			c.amount = v
		case m.Key == "reference":
			c.reference = m.Value.Text
		case m.Key == "note":
			c.note = m.Value.Text
		}
	}
	if bad != nil || !given["amount"] {
		return staffChange{}, stampduty.Required(bad, given, "amount")
	}
	return c, nil
}

// recorded answers an entry just recorded (201), or replayed (200).
func (h *handler) recorded(name string, live bool, a accounts.Applied) any {
	var out recordedResponse
	out.Data.Entry, out.Data.Account, out.Meta.Replayed = accounts.EntryView(a.Entry), accountOf(name, live, a.Account), a.Replayed
	if a.Replayed {
		return out
	}
	return function.Status{Code: http.StatusCreated, Body: out}
}

// recordCredit records a credit of money received (accounts.Staff.Credit)
// by the admin signed in (their sub): 201 with the entry and the account,
// or 200 with the first entry when the reference was recorded before with
// the same amount (409 with another).
func (h *handler) recordCredit(r *http.Request, _ string) (any, error) {
	c, err := readChange(r, accounts.Unsigned, true)
	if err != nil {
		return nil, err
	}
	key, live, err := h.ownerKey(r)
	if err != nil {
		return nil, err
	}
	a, err := h.accounts.Credit(r.Context(), key, c.amount, c.reference, c.note, staffauth.Sub(r))
	if err != nil {
		return nil, err
	}
	return h.recorded(r.PathValue("owner"), live, a), nil
}

// recordAdjustment records an adjustment (accounts.Staff.Adjust), its id
// the request's Idempotency-Key when sent (the console sends one per
// confirmed form, so a retry writes it once), else API Gateway's request
// id.
func (h *handler) recordAdjustment(r *http.Request, _ string) (any, error) {
	c, err := readChange(r, accounts.Signed, false)
	if err != nil {
		return nil, err
	}
	request := r.Header.Get("Idempotency-Key")
	if request != "" && !validRequestKey(request) {
		return nil, stampduty.Invalid([]stampduty.FieldError{{Path: "Idempotency-Key", Message: "Idempotency-Key must be 1 to 64 letters, digits, '-' or '_'"}})
	}
	if request == "" {
		request = staffauth.RequestID(r)
	}
	key, live, err := h.ownerKey(r)
	if err != nil {
		return nil, err
	}
	a, err := h.accounts.Adjust(r.Context(), key, c.amount, c.note, request, staffauth.Sub(r))
	if err != nil {
		return nil, err
	}
	return h.recorded(r.PathValue("owner"), live, a), nil
}

// validRequestKey reports whether k can be an adjustment's request id.
func validRequestKey(k string) bool {
	if len(k) > 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return k != ""
}

// saveLimit sets the account's credit limit: {"data": {"creditLimit":
// "…" | null, "confirm": true?}}. A limit below what is held is 409
// asking to confirm unless confirm is true (accounts.Staff.SetLimit).
func (h *handler) saveLimit(r *http.Request, _ string) (any, error) {
	body, err := function.ReadJSONBody(r)
	if err != nil {
		return nil, err
	}
	members, err := function.DecodeData(body)
	if err != nil {
		return nil, err
	}
	var limit *accounts.Money
	confirm := false
	var bad []stampduty.FieldError
	given := map[string]bool{}
	for _, m := range members {
		switch {
		case m.Key == "creditLimit" && m.Value.Kind == jsonobj.Null:
			given[m.Key], limit = true, nil
		case m.Key == "creditLimit" && m.Value.Kind == jsonobj.String:
			given[m.Key] = true
			v, err := accounts.ParseMoney("creditLimit", m.Value.Text, accounts.Unsigned)
			var e *stampduty.Error
			if errors.As(err, &e) {
				bad = append(bad, e.Fields...)
			}
			limit = &v
		case m.Key == "creditLimit":
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: `creditLimit must be a string, such as "50000.00", or null (unlimited)`})
		case m.Key == "confirm" && m.Value.Kind == jsonobj.Bool:
			confirm = m.Value.Bool
		case m.Key == "confirm":
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: "confirm must be true or false"})
		default:
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " is not a field of a credit limit"})
		}
	}
	if err := stampduty.Required(bad, given, "creditLimit"); err != nil {
		return nil, err
	}
	key, live, err := h.ownerKey(r)
	if err != nil {
		return nil, err
	}
	a, err := h.accounts.SetLimit(r.Context(), key, limit, confirm, staffauth.Sub(r))
	if err != nil {
		return nil, err
	}
	return accountResponse{Data: accountOf(r.PathValue("owner"), live, a)}, nil
}
