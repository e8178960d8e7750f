package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// sendTo runs one request of the console's admin routes as claims, with a
// query and headers.
func sendTo(t *testing.T, s *functest.Stack, claims map[string]string, method, path, query string, headers map[string]string, body string) functest.Response {
	t.Helper()
	if headers == nil {
		headers = map[string]string{}
	}
	if body != "" {
		headers["content-type"] = "application/json"
	}
	ev := functest.Request(method, path, query, headers, body)
	if claims != nil {
		ev = functest.AsStaff(ev, claims)
	}
	return s.Invoke(ev)
}

// TestAccounts: an admin reads a caller's account and its entries, records
// a credit (once per reference), an adjustment (once per request, never
// below zero available) and sets its limit (confirmed below what is held);
// the entries name the admin by sub; an operator gets 403 with nothing
// read or written.
func TestAccounts(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	owner := localdb.DevOwner
	orders := functest.AddOrders(t, s.Env, owner, 2) // each held
	base := "/api/console/accounts/" + owner
	var calls []storetest.ProxyCall
	admin := func(method, path, query string, headers map[string]string, body string) functest.Response {
		t.Helper()
		s.Proxy.Take()
		r := sendTo(t, s, adminClaims, method, path, query, headers, body)
		calls = append(calls, s.Proxy.Take()...)
		return r
	}
	sub := adminClaims["sub"]

	t.Run("TheAccountAsTheCallerSeesItWithItsOwner", func(t *testing.T) {
		a := functest.OK[accountResponse](t, admin(http.MethodGet, base, "", nil, "")).Data
		want := functest.Account(t, s.Env, owner)
		if a.Owner != owner || a.Held != want.Held.String() || a.Balance != want.Balance.String() || a.CreditLimit != nil ||
			a.Available != nil || a.Currency != "INR" || !a.Livemode {
			t.Errorf("account %+v, want %s's: held %s, unlimited, live", a, owner, want.Held)
		}
	})
	var credit recordedResponse
	t.Run("ACreditIsRecordedByTheAdminsSub", func(t *testing.T) {
		r := admin(http.MethodPost, base+"/credits", "", nil, `{"data":{"amount":"10.00","reference":"utr-0001","note":"NEFT"}}`)
		credit = answer[recordedResponse](t, r, http.StatusCreated)
		e := credit.Data.Entry
		if e.Type != accounts.TypeCredit || e.Amount != "10.00" || e.Reference == nil || *e.Reference != "UTR-0001" || e.By != accounts.ByAdmin ||
			credit.Meta.Replayed || credit.Data.Account.Balance != "10.00" {
			t.Errorf("credit %+v", credit)
		}
		es, err := s.Env.DB().Ledger(s.Env.Table("LedgerTable")).Entries(t.Context(), owner, 1, 100)
		if err != nil || len(es) == 0 || es[0].Sub != sub {
			t.Errorf("newest entry %+v, %v; want the admin's sub %s", es, err, sub)
		}
	})
	t.Run("TheSameReferenceAnswersTheFirstCredit", func(t *testing.T) {
		again := functest.OK[recordedResponse](t, admin(http.MethodPost, base+"/credits", "", nil, `{"data":{"amount":"10.00","reference":"UTR-0001"}}`))
		if !again.Meta.Replayed || again.Data.Entry.ID != credit.Data.Entry.ID || again.Data.Account.Balance != "10.00" {
			t.Errorf("again %+v, want the first credit, replayed", again)
		}
		r := admin(http.MethodPost, base+"/credits", "", nil, `{"data":{"amount":"9.00","reference":"UTR-0001"}}`)
		refused(t, r, http.StatusConflict, "")
		if got := functest.Account(t, s.Env, owner).Balance; got != accounts.Rupees(10) {
			t.Errorf("balance %s after the conflict, want 10.00", got)
		}
	})
	t.Run("BadBodiesAreRefusedNamingTheField", func(t *testing.T) {
		before := functest.Account(t, s.Env, owner)
		for _, tt := range []struct{ path, body, field string }{
			{"/credits", `{"data":{"amount":1000,"reference":"U1"}}`, "amount"},
			{"/credits", `{"data":{"amount":"1000.5","reference":"U1"}}`, "amount"},
			{"/credits", `{"data":{"amount":"-1.00","reference":"U1"}}`, "amount"},
			{"/credits", `{"data":{"reference":"U1"}}`, "amount"},
			{"/credits", `{"data":{"amount":"1.00"}}`, "reference"},
			{"/credits", `{"data":{"amount":"1.00","reference":"U1","by":"x"}}`, "by"},
			{"/adjustments", `{"data":{"amount":"-1.00"}}`, "note"},
			{"/adjustments", `{"data":{"amount":"0.00","note":"x"}}`, "amount"},
			{"/adjustments", `{"data":{"amount":"1.00","note":"x","reference":"R"}}`, "reference"},
			{"/limit", `{"data":{"creditLimit":0}}`, "creditLimit"},
			{"/limit", `{"data":{}}`, "creditLimit"},
			{"/limit", `{"data":{"creditLimit":"1.00","confirm":"yes"}}`, "confirm"},
		} {
			method := http.MethodPost
			if tt.path == "/limit" {
				method = http.MethodPut
			}
			r := admin(method, base+tt.path, "", nil, tt.body)
			if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `"path":["`+tt.field+`"]`) {
				t.Errorf("%s %s: %d %s; want 400 naming %s", tt.path, tt.body, r.Status, r.Body, tt.field)
			}
		}
		if after := functest.Account(t, s.Env, owner); after.Seq != before.Seq || (after.Limit == nil) != (before.Limit == nil) {
			t.Errorf("account %+v after refused bodies, want %+v", after, before)
		}
	})
	t.Run("AnAdjustmentIsOncePerIdempotencyKey", func(t *testing.T) {
		h := map[string]string{"Idempotency-Key": "adj-1"}
		first := answer[recordedResponse](t, admin(http.MethodPost, base+"/adjustments", "", h, `{"data":{"amount":"-5.50","note":"bank charge"}}`), http.StatusCreated)
		again := functest.OK[recordedResponse](t, admin(http.MethodPost, base+"/adjustments", "", map[string]string{"Idempotency-Key": "adj-1"}, `{"data":{"amount":"-5.50","note":"bank charge"}}`))
		if first.Data.Entry.Amount != "-5.50" || !again.Meta.Replayed || again.Data.Entry.ID != first.Data.Entry.ID {
			t.Errorf("first %+v, again %+v", first.Data.Entry, again)
		}
		if got, want := functest.Account(t, s.Env, owner).Balance, accounts.Rupees(10)-550; got != want {
			t.Errorf("balance %s, want %s", got, want)
		}
	})
	t.Run("ALimitBelowHeldNeedsConfirming", func(t *testing.T) {
		r := admin(http.MethodPut, base+"/limit", "", nil, `{"data":{"creditLimit":"0.00"}}`)
		refused(t, r, http.StatusConflict, "")
		if !strings.Contains(r.Body, "Confirm") {
			t.Errorf("the refusal does not ask to confirm: %s", r.Body)
		}
		if functest.Account(t, s.Env, owner).Limit != nil {
			t.Fatal("the limit was saved without confirming")
		}
		a := functest.OK[accountResponse](t, admin(http.MethodPut, base+"/limit", "", nil, `{"data":{"creditLimit":"0.00","confirm":true}}`)).Data
		held := functest.Account(t, s.Env, owner).Held
		want := (accounts.Rupees(10) - 550 - held).String()
		if a.CreditLimit == nil || *a.CreditLimit != "0.00" || a.Available == nil || *a.Available != want || !strings.HasPrefix(want, "-") {
			t.Errorf("account %+v, want limit 0.00, available %s (negative: %d orders held)", a, want, len(orders))
		}
	})
	t.Run("AnAdjustmentBelowZeroAvailableIsRefused", func(t *testing.T) {
		before := functest.Account(t, s.Env, owner)
		refused(t, admin(http.MethodPost, base+"/adjustments", "", map[string]string{"Idempotency-Key": "adj-2"}, `{"data":{"amount":"-1.00","note":"x"}}`), http.StatusConflict, "")
		if after := functest.Account(t, s.Env, owner); after.Seq != before.Seq {
			t.Errorf("seq %d, want %d: the refusal wrote", after.Seq, before.Seq)
		}
	})
	t.Run("EntriesNewestFirstByPageAndCursor", func(t *testing.T) {
		a := functest.Account(t, s.Env, owner)
		all := functest.OK[entriesResponse](t, admin(http.MethodGet, base+"/entries", "", nil, ""))
		if got, want := int64(len(all.Data)), a.Seq; got != want || all.Meta.Pagination.Total != a.Seq || all.Meta.NextCursor != nil {
			t.Fatalf("%d entries (%+v), want %d, no next page", got, all.Meta, want)
		}
		if all.Data[0].Type != accounts.TypeAdjustment || all.Data[len(all.Data)-1].Type != accounts.TypeHold {
			t.Errorf("first %s, last %s: want newest first", all.Data[0].Type, all.Data[len(all.Data)-1].Type)
		}
		var walked []string
		query := "pagination[pageSize]=2"
		for range 10 {
			page := functest.OK[entriesResponse](t, admin(http.MethodGet, base+"/entries", query, nil, ""))
			for _, e := range page.Data {
				walked = append(walked, e.ID)
			}
			if page.Meta.NextCursor == nil {
				break
			}
			query = "pagination[pageSize]=2&cursor=" + *page.Meta.NextCursor
		}
		var ids []string
		for _, e := range all.Data {
			ids = append(ids, e.ID)
		}
		if fmt.Sprint(walked) != fmt.Sprint(ids) {
			t.Errorf("by cursor %v, want %v", walked, ids)
		}
		p2 := functest.OK[entriesResponse](t, admin(http.MethodGet, base+"/entries", "pagination[page]=2&pagination[pageSize]=2", nil, ""))
		if len(p2.Data) == 0 || p2.Data[0].ID != ids[2] || p2.Meta.Pagination.Page != 2 {
			t.Errorf("page 2: %+v, want from %s", p2, ids[2])
		}
		refused(t, admin(http.MethodGet, base+"/entries", "pagination[pageSize]=101", nil, ""), http.StatusBadRequest, "")
	})
	t.Run("TheTestAccountIsTheCallersWithModeTest", func(t *testing.T) {
		a := functest.OK[accountResponse](t, admin(http.MethodGet, base, "mode=test", nil, "")).Data
		if a.Livemode || a.Balance != accounts.TestOpening.String() || a.CreditLimit == nil || *a.CreditLimit != "0.00" {
			t.Errorf("test account %+v, want its opening credit, limit 0.00", a)
		}
		c := answer[recordedResponse](t, admin(http.MethodPost, base+"/credits", "mode=test", nil, `{"data":{"amount":"5.00","reference":"UTR-0001"}}`), http.StatusCreated)
		if c.Data.Account.Livemode || c.Data.Account.Balance != (accounts.TestOpening+500).String() {
			t.Errorf("test credit %+v: want its own account", c.Data.Account)
		}
		if got := functest.Account(t, s.Env, stampduty.TestOwnerOf(owner)).Balance; got != accounts.TestOpening+500 {
			t.Errorf("stored test balance %s", got)
		}
	})
	t.Run("AnUnknownCallerIsNotFound", func(t *testing.T) {
		refused(t, admin(http.MethodGet, "/api/console/accounts/nobody", "", nil, ""), http.StatusNotFound, "no caller nobody")
		refused(t, admin(http.MethodPost, "/api/console/accounts/nobody/credits", "", nil, `{"data":{"amount":"5.00","reference":"U"}}`), http.StatusNotFound, "no caller nobody")
		if a := functest.Account(t, s.Env, "nobody"); a.Opened {
			t.Errorf("an account was stored for an unknown caller: %+v", a)
		}
	})
	t.Run("OnlyAnAdminReachesTheAccounts", func(t *testing.T) {
		before := functest.Account(t, s.Env, owner)
		for _, route := range []struct{ method, path, body string }{
			{http.MethodGet, base, ""},
			{http.MethodGet, base + "/entries", ""},
			{http.MethodPost, base + "/credits", `{"data":{"amount":"5.00","reference":"SNEAKY"}}`},
			{http.MethodPost, base + "/adjustments", `{"data":{"amount":"5.00","note":"sneaky"}}`},
			{http.MethodPut, base + "/limit", `{"data":{"creditLimit":null}}`},
		} {
			for _, tc := range []struct {
				name   string
				claims map[string]string
				status int
			}{
				{"Operator", operatorClaims, http.StatusForbidden},
				{"Neither", nobodyClaims, http.StatusForbidden},
				{"NoClaims", nil, http.StatusUnauthorized},
			} {
				s.Proxy.Take()
				r := sendTo(t, s, tc.claims, route.method, route.path, "", nil, route.body)
				if r.Status != tc.status {
					t.Errorf("%s %s as %s: %d, want %d", route.method, route.path, tc.name, r.Status, tc.status)
				}
				if got := s.Proxy.Take(); len(got) != 0 {
					t.Errorf("%s %s as %s: %d DynamoDB calls before the role was checked", route.method, route.path, tc.name, len(got))
				}
			}
		}
		if after := functest.Account(t, s.Env, owner); after.Seq != before.Seq || after.Limit == nil {
			t.Errorf("account %+v after refused staff, want %+v", after, before)
		}
	})
	t.Run("TheSubIsLoggedNeverTheEmail", func(t *testing.T) {
		logs := s.Logs.String()
		if !strings.Contains(logs, "staff "+sub) || strings.Contains(logs, "admin@console.local") {
			t.Errorf("the log lines do not name the admin by sub alone:\n%s", logs)
		}
	})
	if len(calls) == 0 {
		t.Error("no DynamoDB call was recorded")
	}
}

// TestDefaultCreditLimit: a caller created while the stack's
// DefaultCreditLimit is money opens its account with it; one created with
// the default (unlimited) stores no account and stays unlimited.
func TestDefaultCreditLimit(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	answer[callerResponse](t, send(t, s, adminClaims, http.MethodPost, "/api/console/callers", `{"owner":"free-1"}`), http.StatusCreated)
	if a := functest.Account(t, s.Env, "free-1"); a.Opened || a.Limit != nil {
		t.Errorf("a caller created with the default: %+v, want no account stored, unlimited", a)
	}
	s.Restart(func(d function.Deps) http.Handler {
		h := newHandler(d)
		zero := accounts.Money(0)
		h.accounts.(staffLedger).DefaultLimit = &zero // as DEFAULT_CREDIT_LIMIT=0.00 sets it
		return h.routes()
	})
	answer[callerResponse](t, send(t, s, adminClaims, http.MethodPost, "/api/console/callers", `{"owner":"prepaid-1"}`), http.StatusCreated)
	a := functest.Account(t, s.Env, "prepaid-1")
	if !a.Opened || a.Limit == nil || *a.Limit != 0 {
		t.Errorf("a caller created with DefaultCreditLimit 0.00: %+v, want its account opened with limit 0.00", a)
	}
	got := functest.OK[accountResponse](t, sendTo(t, s, adminClaims, http.MethodGet, "/api/console/accounts/prepaid-1", "", nil, ""))
	if got.Data.Available == nil || *got.Data.Available != "0.00" {
		t.Errorf("prepaid-1's account %+v, want 0.00 available", got.Data)
	}
}

// The accounts' routes, each as an admin, for TestGrants: a caller created
// with a limit (its account opened), the account, a credit (and its
// repeat), an adjustment, the limit, the entries.
func init() {
	exercises["accounts"] = func(t *testing.T, s *functest.Stack) {
		base := "/api/console/accounts/" + localdb.DevOwner
		answer[recordedResponse](t, sendTo(t, s, adminClaims, http.MethodPost, base+"/credits", "", nil, `{"data":{"amount":"10.00","reference":"G1"}}`), http.StatusCreated)
		answer[recordedResponse](t, sendTo(t, s, adminClaims, http.MethodPost, base+"/credits", "", nil, `{"data":{"amount":"10.00","reference":"G1"}}`), http.StatusOK)
		answer[recordedResponse](t, sendTo(t, s, adminClaims, http.MethodPost, base+"/adjustments", "", nil, `{"data":{"amount":"1.00","note":"g"}}`), http.StatusCreated)
		answer[accountResponse](t, sendTo(t, s, adminClaims, http.MethodPut, base+"/limit", "", nil, `{"data":{"creditLimit":"5.00"}}`), http.StatusOK)
		answer[accountResponse](t, sendTo(t, s, adminClaims, http.MethodGet, base, "", nil, ""), http.StatusOK)
		answer[entriesResponse](t, sendTo(t, s, adminClaims, http.MethodGet, base+"/entries", "", nil, ""), http.StatusOK)
	}
}

// TestAccountCSV: an admin downloads a caller's entries as CSV, oldest
// first, money plain, a text cell that could start a formula prefixed
// with '; a day range keeps its entries; an operator gets 403.
func TestAccountCSV(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	owner := localdb.DevOwner
	base := "/api/console/accounts/" + owner
	functest.AddOrders(t, s.Env, owner, 1)
	answer[recordedResponse](t, sendTo(t, s, adminClaims, http.MethodPost, base+"/credits", "", nil, `{"data":{"amount":"10.00","reference":"=HYPERLINK(1)","note":"+1 \"quoted\", with a comma"}}`), http.StatusCreated)
	answer[recordedResponse](t, sendTo(t, s, adminClaims, http.MethodPost, base+"/adjustments", "", map[string]string{"Idempotency-Key": "csv-1"}, `{"data":{"amount":"-40.50","note":"@bank"}}`), http.StatusCreated)

	r := sendTo(t, s, adminClaims, http.MethodGet, base+"/entries.csv", "", nil, "")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Headers["Content-Type"], "text/csv") {
		t.Fatalf("%d %v: %s", r.Status, r.Headers, r.Body)
	}
	ls := strings.Split(strings.TrimSuffix(r.Body, "\r\n"), "\r\n")
	if len(ls) != 4 {
		t.Fatalf("%d lines, want the header and 3 entries:\n%s", len(ls), r.Body)
	}
	if got, want := ls[0], "id,type,amount,balanceAfter,heldAfter,order,fulfillment,reference,note,by,createdAt"; got != want {
		t.Errorf("header %q, want %q", got, want)
	}
	if !strings.HasPrefix(ls[1], "hold_") {
		t.Errorf("first row %q, want the hold (oldest first)", ls[1])
	}
	if want := `credit_=HYPERLINK(1),credit,10.00,10.00,20.00,,,'=HYPERLINK(1),"'+1 ""quoted"", with a comma",admin,`; !strings.HasPrefix(ls[2], want) {
		t.Errorf("credit row %q, want it to start %q", ls[2], want)
	}
	if want := `adjustment_csv-1,adjustment,-40.50,-30.50,20.00,,,,'@bank,admin,`; !strings.HasPrefix(ls[3], want) {
		t.Errorf("adjustment row %q, want it to start %q", ls[3], want)
	}
	today := time.Now().In(time.FixedZone("IST", 5*3600+1800))
	for _, tt := range []struct {
		query string
		rows  int
	}{
		{"from=" + today.Format(time.DateOnly) + "&to=" + today.Format(time.DateOnly), 3},
		{"to=" + today.AddDate(0, 0, -1).Format(time.DateOnly), 0},
		{"from=" + today.AddDate(0, 0, 1).Format(time.DateOnly), 0},
	} {
		r := sendTo(t, s, adminClaims, http.MethodGet, base+"/entries.csv", tt.query, nil, "")
		if got := strings.Count(r.Body, "\r\n") - 1; r.Status != http.StatusOK || got != tt.rows {
			t.Errorf("%s: %d, %d rows; want %d:\n%s", tt.query, r.Status, got, tt.rows, r.Body)
		}
	}
	for _, q := range []string{"from=2026-13-01", "from=2025-01-01&to=2026-01-02", "from=2026-01-02&to=2026-01-01"} {
		refused(t, sendTo(t, s, adminClaims, http.MethodGet, base+"/entries.csv", q, nil, ""), http.StatusBadRequest, "")
	}
	refused(t, sendTo(t, s, adminClaims, http.MethodGet, "/api/console/accounts/nobody/entries.csv", "", nil, ""), http.StatusNotFound, "no caller nobody")
	s.Proxy.Take()
	refused(t, sendTo(t, s, operatorClaims, http.MethodGet, base+"/entries.csv", "", nil, ""), http.StatusForbidden, "")
	if calls := s.Proxy.Take(); len(calls) != 0 {
		t.Errorf("an operator's CSV request called %s", s.Env.Operations(calls))
	}
}

// TestAccountCSVReadsOnlyItsRange: a day's CSV of a long ledger reads that
// day's entries, found by binary search as the caller's export finds
// them, not the whole ledger: its Queries read under a fifth of the bytes
// the whole ledger's CSV reads (a tenth is the day's share).
func TestAccountCSVReadsOnlyItsRange(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	owner := localdb.DevOwner
	base := "/api/console/accounts/" + owner
	ledger := s.Env.DB().Ledger(s.Env.Table("LedgerTable"))
	const days, perDay = 10, 30
	first := time.Now().In(accounts.India).AddDate(0, 0, -days)
	first = time.Date(first.Year(), first.Month(), first.Day(), 9, 0, 0, 0, accounts.India)
	for d := range days {
		for i := range perDay {
			ref := fmt.Sprintf("UTR-%d-%d", d, i)
			if _, err := ledger.Apply(t.Context(), owner, accounts.Change{Entry: accounts.Entry{ID: accounts.CreditID(ref), Type: accounts.TypeCredit,
				Amount: accounts.Rupees(1), Reference: ref, By: accounts.ByAdmin, CreatedAt: first.AddDate(0, 0, d).Add(time.Duration(i) * time.Minute)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Proxy.SetMode(storetest.Account)
	queried := func(query string, rows int) int {
		t.Helper()
		s.Proxy.Take()
		r := sendTo(t, s, adminClaims, http.MethodGet, base+"/entries.csv", query, nil, "")
		if got := strings.Count(r.Body, "\r\n") - 1; r.Status != http.StatusOK || got != rows {
			t.Fatalf("%q: %d, %d rows; want %d", query, r.Status, got, rows)
		}
		n := 0
		for _, c := range s.Env.Made(s.Proxy.Take()) {
			if c.Operation == "Query" {
				n += c.ItemBytes
			}
		}
		return n
	}
	all := queried("", days*perDay)
	day := first.AddDate(0, 0, 4).Format(time.DateOnly)
	one := queried("from="+day+"&to="+day, perDay)
	t.Logf("the whole ledger's CSV queried %d bytes, one day's %d", all, one)
	if one*5 > all {
		t.Errorf("one day of %d queried %d bytes, the whole ledger %d: want under a fifth", days, one, all)
	}
}
