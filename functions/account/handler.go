package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/auth"
	"stampduty/shared/files"
	"stampduty/shared/function"
	"stampduty/shared/jsonobj"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// handler answers the caller's account routes.
type handler struct {
	auth     *auth.Authenticator
	accounts interface {
		View(ctx context.Context, owner string) (accounts.Account, error)
		SetThreshold(ctx context.Context, owner string, threshold *accounts.Money) (accounts.Account, error)
		Entries(ctx context.Context, owner string, q accounts.EntryQuery) (accounts.EntryPage, error)
		Export(ctx context.Context, owner string, start, end time.Time, rows func([]accounts.Entry) error) (int64, error)
		Statement(ctx context.Context, owner, month string) (accounts.Statement, error)
		TestCredit(ctx context.Context, owner string, amount accounts.Money, key string) (accounts.Applied, error)
	}
	files interface {
		Export(ctx context.Context, key, mediaType, name string, write func(io.Writer) error) (string, error)
	}
	// newKey makes the request id of a test credit sent without an
	// Idempotency-Key.
	newKey func() string
}

// newKey returns 16 random bytes in hex.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

// response is {"data": …, "meta": {}}.
type response[T any] struct {
	Data T        `json:"data"`
	Meta struct{} `json:"meta"`
}

// routes answers the six account routes, each for the token's owner.
func (h *handler) routes() http.Handler {
	return function.Routes(
		function.Path{Method: http.MethodGet, Pattern: "/api/account", Serve: function.AsCaller(h.auth, h.get)},
		function.Path{Method: http.MethodPut, Pattern: "/api/account", Serve: function.AsCaller(h.auth, h.put)},
		function.Path{Method: http.MethodGet, Pattern: "/api/account/entries", Serve: function.AsCaller(h.auth, h.entries)},
		function.Path{Method: http.MethodGet, Pattern: "/api/account/entries.csv", Serve: function.AsCaller(h.auth, h.csv)},
		function.Path{Method: http.MethodGet, Pattern: "/api/account/statements/{month}", Serve: function.AsCaller(h.auth, h.statement)},
		function.Path{Method: http.MethodPost, Pattern: "/api/account/test-credits", Serve: function.AsCaller(h.auth, h.testCredit)},
	)
}

// get answers with the caller's account: one read (a test principal's
// account never touched shows its opening, nothing written).
func (h *handler) get(r *http.Request, owner string) (any, error) {
	if err := function.CheckMode(r, owner); err != nil {
		return nil, err
	}
	a, err := h.accounts.View(r.Context(), owner)
	if err != nil {
		return nil, err
	}
	return response[accounts.AccountJSON]{Data: newAccountJSON(a)}, nil
}

// put reads {"data": {"lowBalanceThreshold": "5000.00" | null}}, the one
// field a caller sets (any other is 400 naming it), and sets it, keeping
// the limit.
func (h *handler) put(r *http.Request, owner string) (any, error) {
	members, err := readData(r)
	if err != nil {
		return nil, err
	}
	const field = "lowBalanceThreshold"
	v, found, bad := function.OneField(members, field, func(v jsonobj.Value) bool { return v.Kind == jsonobj.String || v.Kind == jsonobj.Null },
		field+` must be a string of rupees with exactly two decimals, such as "5000.00", or null`, "an account a caller sets")
	if !found && bad == nil {
		bad = append(bad, stampduty.FieldError{Path: field, Message: field + " is required"})
	}
	if bad != nil {
		return nil, stampduty.Invalid(bad)
	}
	var threshold *accounts.Money
	if v.Kind == jsonobj.String {
		m, err := accounts.ParseMoney(field, v.Text, accounts.Unsigned)
		if err != nil {
			return nil, err
		}
		threshold = &m
	}
	a, err := h.accounts.SetThreshold(r.Context(), owner, threshold)
	if err != nil {
		return nil, err
	}
	return response[accounts.AccountJSON]{Data: newAccountJSON(a)}, nil
}

// readData reads a JSON body in Strapi's shape {"data": {…}} (or bare) as
// its members.
func readData(r *http.Request) ([]jsonobj.Member, error) {
	body, err := function.ReadJSONBody(r)
	if err != nil {
		return nil, err
	}
	return function.DecodeData(body)
}

// testCredit reads {"data": {"amount": "…"}} and adds that much test
// credit, once per Idempotency-Key (a request without one is its own).
func (h *handler) testCredit(r *http.Request, owner string) (any, error) {
	key := h.newKey()
	if vals, ok := r.Header["Idempotency-Key"]; ok {
		key = strings.Join(vals, ",")
		if err := orders.CheckKey(key); err != nil {
			return nil, err
		}
	}
	if !stampduty.IsTestOwner(owner) { // before the body: a live token learns nothing more
		return nil, stampduty.Errorf(stampduty.EFORBIDDEN, "Forbidden: test credits are for test accounts; use a test token (%s…)", auth.TestPrefix)
	}
	members, err := readData(r)
	if err != nil {
		return nil, err
	}
	v, found, bad := function.OneField(members, "amount", func(v jsonobj.Value) bool { return v.Kind == jsonobj.String },
		`amount must be a string of rupees with exactly two decimals, such as "1000.00"`, "a test credit")
	if !found && bad == nil {
		bad = append(bad, stampduty.FieldError{Path: "amount", Message: "amount is required"})
	}
	if bad != nil {
		return nil, stampduty.Invalid(bad)
	}
	amount, err := accounts.ParseMoney("amount", v.Text, accounts.Unsigned)
	if err != nil {
		return nil, err
	}
	a, err := h.accounts.TestCredit(r.Context(), owner, amount, key)
	if err != nil {
		return nil, err
	}
	return response[creditJSON]{Data: creditJSON{Account: newAccountJSON(a.Account), Entry: accounts.EntryView(a.Entry)}}, nil
}

// statement answers with the statement of one India month.
func (h *handler) statement(r *http.Request, owner string) (any, error) {
	if err := function.CheckMode(r, owner); err != nil {
		return nil, err
	}
	s, err := h.accounts.Statement(r.Context(), owner, r.PathValue("month"))
	if err != nil {
		return nil, err
	}
	return response[statementJSON]{Data: newStatementJSON(s)}, nil
}

// csv writes the entries made from the from date to the to date (India's,
// both included) to the files bucket as CSV, streamed as it is read, and
// answers 302 to a pre-signed address of it: an HTTP API cannot stream a
// Lambda's answer, which is at most 6 MB, and 100,000 rows are about 15.
func (h *handler) csv(r *http.Request, owner string) (any, error) {
	if err := function.CheckMode(r, owner); err != nil {
		return nil, err
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, stampduty.Invalid([]stampduty.FieldError{{Path: "query", Message: "The query string is malformed"}})
	}
	for _, p := range []string{"from", "to"} {
		if len(q[p]) > 1 {
			return nil, stampduty.Invalid([]stampduty.FieldError{{Path: p, Message: p + " must be given once"}})
		}
	}
	from, to := q.Get("from"), q.Get("to")
	start, end, err := accounts.CSVRange(from, to)
	if err != nil {
		return nil, err
	}
	name := "entries-" + from + "-to-" + to + ".csv"
	u, err := h.files.Export(r.Context(), files.ExportKey(".csv"), "text/csv; charset=utf-8", name, func(w io.Writer) error {
		cw, err := accounts.NewCSVWriter(w)
		if err != nil {
			return err
		}
		if _, err := h.accounts.Export(r.Context(), owner, start, end, cw.Write); err != nil {
			return err
		}
		return cw.Flush()
	})
	if err != nil {
		return nil, err
	}
	return function.Found{Location: u}, nil
}
