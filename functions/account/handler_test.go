package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

func TestMain(m *testing.M) { functest.Main(m) }

// client sends requests with one token.
type client struct {
	s     *functest.Stack
	token string
}

func (c client) do(method, path, query, body string, headers ...string) functest.Response {
	h := map[string]string{"authorization": "Bearer " + c.token, "content-type": "application/json"}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	return c.s.Invoke(functest.Request(method, path, query, h, body))
}

// wantError checks that resp is the error envelope of status naming field
// (when not "") with a message containing msg.
func wantError(t *testing.T, resp functest.Response, status int, field, msg string) {
	t.Helper()
	if resp.Status != status {
		t.Fatalf("status %d, want %d: %s", resp.Status, status, resp.Body)
	}
	e := resp.Error(t)
	if !strings.Contains(e.Error.Message, msg) && !slices.ContainsFunc(e.Error.Details.Errors, func(d function.DetailError) bool { return strings.Contains(d.Message, msg) }) {
		t.Errorf("%s: no message says %q", resp.Body, msg)
	}
	if field != "" && !slices.Contains(e.Paths(), field) {
		t.Errorf("%s: names %v, want %s", resp.Body, e.Paths(), field)
	}
}

// keys returns the member names of a JSON object, sorted.
func keys(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return functest.JSONKeys(m)
}

type accountBody struct {
	Data struct {
		Balance, Held                               string
		Available, CreditLimit, LowBalanceThreshold *string
		Currency                                    string
		Livemode                                    bool
		UpdatedAt                                   *string
	} `json:"data"`
}

type entryBody struct {
	ID, Type, Amount, BalanceAfter, HeldAfter string
	Order, Fulfillment, Reference, Note       *string
	By, CreatedAt                             string
}

type entriesBody struct {
	Data []entryBody `json:"data"`
	Meta struct {
		Pagination struct {
			Page, PageSize, PageCount, Total *int
		} `json:"pagination"`
		NextCursor *string `json:"nextCursor"`
	} `json:"meta"`
}

// str writes p, nil as "null".
func str(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

// TestAccount drives the account routes over one set of tables, each
// subtest in turn, then checks the function against template.yaml with
// every call they made.
func TestAccount(t *testing.T) {
	ctx := context.Background()
	s := functest.New(t, "AccountFunction", wire)
	live, test := functest.AddLiveAndTestTokens(t, s.Env, "acme")
	dev, acme, acmeTest := client{s, localdb.DevToken}, client{s, live}, client{s, test}
	ledger := s.Env.DB().Ledger(s.Env.Table("LedgerTable"))

	t.Run("ErrWithoutToken", func(t *testing.T) {
		wantError(t, s.Invoke(functest.Request("GET", "/api/account", "", nil, "")), http.StatusForbidden, "", "")
	})
	t.Run("EventFiles", func(t *testing.T) {
		s.CheckEvents(t, map[string]int{"account-get": 200})
	})
	t.Run("ReadIsOneCall", func(t *testing.T) {
		o := functest.AddOrders(t, s.Env, localdb.DevOwner, 1)[0] // held on create
		s.Proxy.SetMode(storetest.Account)
		defer s.Proxy.SetMode(storetest.Record)
		s.Proxy.Take()
		resp := dev.do("GET", "/api/account", "", "")
		calls := s.Proxy.Take()
		got := functest.OK[accountBody](t, resp).Data
		if want := fmt.Sprintf("%d.00", o.StampDuty.TotalAmount); got.Held != want || got.Balance != "0.00" || got.Currency != "INR" || !got.Livemode {
			t.Errorf("account %+v, want %s held, live, INR", got, want)
		}
		if got.Available != nil || got.CreditLimit != nil || got.LowBalanceThreshold != nil || got.UpdatedAt == nil {
			t.Errorf("account %s, want available, creditLimit and lowBalanceThreshold null (unlimited, none)", resp.Body)
		}
		var raw struct{ Data json.RawMessage }
		_ = json.Unmarshal([]byte(resp.Body), &raw)
		if got, want := keys(t, raw.Data), "available,balance,creditLimit,currency,held,livemode,lowBalanceThreshold,updatedAt"; got != want {
			t.Errorf("members %s, want %s", got, want)
		}
		rcu := 0.0
		for _, c := range calls {
			if c.Table == s.Env.Table("LedgerTable") {
				rcu += c.Billed.Read
			}
		}
		if got, want := s.Env.Operations(calls), "GetItem:LedgerTable=1"; got != want {
			t.Errorf("calls %s, want %s", got, want)
		}
		t.Logf("GET /api/account: %s, %.1f RCU", s.Env.Operations(calls), rcu)
	})
	t.Run("TestTokenReadsItsOpeningWithoutWriting", func(t *testing.T) {
		s.Proxy.Take()
		got := functest.OK[accountBody](t, acmeTest.do("GET", "/api/account", "", "")).Data
		if got.Balance != "10000000.00" || str(got.CreditLimit) != "0.00" || str(got.Available) != "10000000.00" || got.Livemode {
			t.Errorf("test account %+v, want the opening credit, limit 0.00, not live", got)
		}
		if ops := s.Env.Operations(s.Proxy.Take()); ops != "GetItem:LedgerTable=1" {
			t.Errorf("calls %s, want the one read", ops)
		}
		if a := functest.Account(t, s.Env, stampduty.TestOwnerOf("acme")); a.Opened {
			t.Errorf("the read opened the test account")
		}
		wantError(t, acmeTest.do("GET", "/api/account", "mode=live", ""), http.StatusForbidden, "", "test token")
	})
	t.Run("PutThreshold", func(t *testing.T) {
		limit := accounts.Rupees(1000)
		if _, err := ledger.Configure(ctx, "acme", 0, &limit, nil, false, time.Now()); err != nil {
			t.Fatal(err)
		}
		got := functest.OK[accountBody](t, acme.do("PUT", "/api/account", "", `{"data": {"lowBalanceThreshold": "5000.00"}}`)).Data
		if str(got.LowBalanceThreshold) != "5000.00" || str(got.CreditLimit) != "1000.00" || str(got.Available) != "1000.00" {
			t.Errorf("account %+v, want threshold 5000.00, the limit 1000.00 kept", got)
		}
		if a := functest.Account(t, s.Env, "acme"); a.Threshold == nil || *a.Threshold != accounts.Rupees(5000) {
			t.Errorf("stored %+v, want the threshold", a)
		}
		got = functest.OK[accountBody](t, acme.do("PUT", "/api/account", "", `{"data": {"lowBalanceThreshold": null}}`)).Data
		if got.LowBalanceThreshold != nil || str(got.CreditLimit) != "1000.00" {
			t.Errorf("account %+v, want no threshold, the limit kept", got)
		}
	})
	t.Run("ErrPutRefusesAllButTheThreshold", func(t *testing.T) {
		for _, c := range []struct{ name, body, field, msg string }{
			{"OtherField", `{"data": {"lowBalanceThreshold": "1.00", "creditLimit": null}}`, "creditLimit", "creditLimit is not a field"},
			{"Balance", `{"data": {"balance": "1.00"}}`, "balance", "balance is not a field"},
			{"Number", `{"data": {"lowBalanceThreshold": 5000}}`, "lowBalanceThreshold", "must be a string"},
			{"ThreeDecimals", `{"data": {"lowBalanceThreshold": "5000.001"}}`, "lowBalanceThreshold", "two decimals"},
			{"Negative", `{"data": {"lowBalanceThreshold": "-1.00"}}`, "lowBalanceThreshold", "negative"},
			{"SixteenDigits", `{"data": {"lowBalanceThreshold": "1234567890123456.00"}}`, "lowBalanceThreshold", "15 digits"},
			{"Missing", `{"data": {}}`, "lowBalanceThreshold", "required"},
		} {
			t.Run(c.name, func(t *testing.T) {
				wantError(t, acme.do("PUT", "/api/account", "", c.body), http.StatusBadRequest, c.field, c.msg)
			})
		}
		if a := functest.Account(t, s.Env, "acme"); a.Threshold != nil {
			t.Errorf("a refused PUT set %s", *a.Threshold)
		}
	})
	t.Run("TestCredits", func(t *testing.T) { testCredits(t, s, acme, acmeTest) })
	t.Run("Entries", func(t *testing.T) { entries(t, s, ledger, acme) })
	// beta's ledger, made in createdAt order as entries always are: a
	// credit in January, three entries in February.
	betaToken := "sdt_" + strings.Repeat("B", 43)
	functest.AddToken(t, s.Env, betaToken, "beta")
	beta := client{s, betaToken}
	feb := func(d int) time.Time { return time.Date(2026, 2, d, 0, 0, 0, 0, accounts.India) }
	apply(t, ledger, "beta",
		credit("UTR-jan", 60, feb(1).AddDate(0, 0, -15)),
		credit("=HYPERLINK(\"http://x\",\"y\")", 5, feb(1)),
		credit("+91", 1, feb(2).Add(-time.Millisecond)),
		accounts.Change{Entry: accounts.Entry{ID: accounts.AdjustmentID("r1"), Type: accounts.TypeAdjustment, Amount: -40_50, Note: "@bank charge", By: accounts.ByAdmin, CreatedAt: feb(2)}},
	)
	t.Run("CSV", func(t *testing.T) { exportCSV(t, beta) })
	t.Run("Statement", func(t *testing.T) { statement(t, beta) })
	s.CheckTemplate(s.Proxy.All())
	s.CheckRoutes()
}

func testCredits(t *testing.T, s *functest.Stack, acme, acmeTest client) {
	type credited struct {
		Data struct {
			Account json.RawMessage
			Entry   entryBody
		} `json:"data"`
	}
	owner := stampduty.TestOwnerOf("acme")
	t.Run("ErrLiveToken", func(t *testing.T) {
		s.Proxy.Take()
		wantError(t, acme.do("POST", "/api/account/test-credits", "", `{"data": {"amount": "10.00"}}`), http.StatusForbidden, "", "test token")
		if ops := s.Env.Operations(s.Proxy.Take()); ops != "" {
			t.Errorf("calls %s, want none", ops)
		}
	})
	t.Run("ErrFullAccountSaysTheMost", func(t *testing.T) {
		wantError(t, acmeTest.do("POST", "/api/account/test-credits", "", `{"data": {"amount": "0.01"}}`), http.StatusBadRequest, "amount", "at most 0.00")
	})
	// Spend some: a test order held and its paper charged.
	o := functest.AddOrders(t, s.Env, owner, 1)[0]
	if err := (&accounts.Ledger{Store: s.Env.DB().Ledger(s.Env.Table("LedgerTable")), Now: time.Now}).Charge(context.Background(), owner, o, "paper1", accounts.BySystem); err != nil {
		t.Fatal(err)
	}
	spent := fmt.Sprintf("%d.00", o.StampDuty.Amount)
	t.Run("ErrTooMuch", func(t *testing.T) {
		wantError(t, acmeTest.do("POST", "/api/account/test-credits", "", `{"data": {"amount": "100.00"}}`), http.StatusBadRequest, "amount", "at most "+spent)
	})
	t.Run("ErrAmountAsNumber", func(t *testing.T) {
		wantError(t, acmeTest.do("POST", "/api/account/test-credits", "", `{"data": {"amount": 10}}`), http.StatusBadRequest, "amount", "must be a string")
	})
	t.Run("RequestsWithoutAKeyAreEachTheirOwn", func(t *testing.T) {
		one := functest.OK[credited](t, acmeTest.do("POST", "/api/account/test-credits", "", `{"data": {"amount": "1.00"}}`)).Data
		two := functest.OK[credited](t, acmeTest.do("POST", "/api/account/test-credits", "", `{"data": {"amount": "1.00"}}`)).Data
		if one.Entry.ID == two.Entry.ID {
			t.Errorf("two requests without a key wrote one credit, %s", one.Entry.ID)
		}
		if a := functest.Account(t, s.Env, owner); a.Balance != accounts.TestOpening-accounts.Rupees(o.StampDuty.Amount)+accounts.Rupees(2) {
			t.Errorf("balance %s, want both credits of 1.00", a.Balance)
		}
	})
	t.Run("RetriedRequestWritesOnce", func(t *testing.T) {
		body := fmt.Sprintf(`{"data": {"amount": "%d.00"}}`, o.StampDuty.Amount-2)
		first := functest.OK[credited](t, acmeTest.do("POST", "/api/account/test-credits", "", body, "Idempotency-Key", "topup-1")).Data
		again := functest.OK[credited](t, acmeTest.do("POST", "/api/account/test-credits", "", body, "Idempotency-Key", "topup-1")).Data
		if first.Entry.ID != again.Entry.ID || first.Entry.Type != "credit" || first.Entry.By != "caller" || str(first.Entry.Reference) != "test-credit" {
			t.Errorf("first %+v, again %+v; want one credit by the caller", first.Entry, again.Entry)
		}
		if a := functest.Account(t, s.Env, owner); a.Balance != accounts.TestOpening {
			t.Errorf("balance %s, want back at the opening %s once", a.Balance, accounts.TestOpening)
		}
		if got, want := keys(t, first.Account), "available,balance,creditLimit,currency,held,livemode,lowBalanceThreshold,updatedAt"; got != want {
			t.Errorf("account members %s, want %s", got, want)
		}
	})
}

// apply applies changes to owner's ledger straight.
func apply(t *testing.T, ledger *store.Ledger, owner string, chs ...accounts.Change) {
	t.Helper()
	for _, ch := range chs {
		if _, err := ledger.Apply(context.Background(), owner, ch); err != nil {
			t.Fatal(err)
		}
	}
}

// credit is a credit of rupees under reference ref, made at.
func credit(ref string, rupees int64, at time.Time) accounts.Change {
	return accounts.Change{Entry: accounts.Entry{ID: accounts.CreditID(ref), Type: accounts.TypeCredit, Amount: accounts.Rupees(rupees),
		Reference: ref, By: accounts.ByAdmin, Sub: "admin-sub", CreatedAt: at}}
}

func entries(t *testing.T, s *functest.Stack, ledger *store.Ledger, acme client) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var chs []accounts.Change
	for i := range 60 {
		chs = append(chs, credit(fmt.Sprintf("UTR%02d", i), 1, start.Add(time.Duration(i)*time.Hour)))
	}
	apply(t, ledger, "acme", chs...)
	orders := functest.AddOrders(t, s.Env, "acme", 2) // seqs 61, 62: holds
	get := func(t *testing.T, query string) entriesBody {
		t.Helper()
		return functest.OK[entriesBody](t, acme.do("GET", "/api/account/entries", query, ""))
	}
	t.Run("NewestFirstExactMembers", func(t *testing.T) {
		resp := acme.do("GET", "/api/account/entries", "", "")
		var raw struct{ Data []json.RawMessage }
		if err := json.Unmarshal([]byte(resp.Body), &raw); err != nil || len(raw.Data) != 25 {
			t.Fatalf("%d entries (%v), want 25", len(raw.Data), err)
		}
		if got, want := keys(t, raw.Data[0]), "amount,balanceAfter,by,createdAt,fulfillment,heldAfter,id,note,order,reference,type"; got != want {
			t.Errorf("members %s, want %s", got, want)
		}
		if strings.Contains(resp.Body, "admin-sub") || strings.Contains(resp.Body, `"sub"`) {
			t.Errorf("an entry shows the admin's sub: %s", resp.Body)
		}
		p := get(t, "")
		if p.Data[0].ID != accounts.HoldID(orders[1].DocumentID) || str(p.Data[0].Order) != orders[1].DocumentID || p.Data[0].Reference != nil {
			t.Errorf("newest %+v, want the hold of %s", p.Data[0], orders[1].DocumentID)
		}
		if pg := p.Meta.Pagination; pg.Page == nil || *pg.Page != 1 || *pg.PageSize != 25 || *pg.Total != 62 || *pg.PageCount != 3 || str(p.Meta.NextCursor) != "s37" {
			t.Errorf("meta %+v (next %s), want page 1 of 3, 62 in all, next s37", pg, str(p.Meta.NextCursor))
		}
	})
	t.Run("PageNCostsWhatPageOneCosts", func(t *testing.T) {
		ops := func(query string) (string, []string) {
			s.Proxy.Take()
			p := get(t, query)
			var ids []string
			for _, e := range p.Data {
				ids = append(ids, e.ID)
			}
			return s.Env.Operations(s.Proxy.Take()), ids
		}
		ops1, _ := ops("pagination[page]=1&pagination[pageSize]=10")
		ops7, ids := ops("pagination[page]=7&pagination[pageSize]=10")
		if ops1 != ops7 || ops1 != "GetItem:LedgerTable=1 Query:LedgerTable=1" {
			t.Errorf("page 1: %s, page 7: %s; want one read of the account and one Query each", ops1, ops7)
		}
		if want := []string{"credit_UTR01", "credit_UTR00"}; !slices.Equal(ids, want) {
			t.Errorf("page 7 of 10: %v, want %v", ids, want)
		}
	})
	t.Run("CursorWalksEveryEntryOnce", func(t *testing.T) {
		seen := map[string]bool{}
		query := "pagination[pageSize]=7"
		for range 20 {
			p := get(t, query)
			for _, e := range p.Data {
				if seen[e.ID] {
					t.Fatalf("%s twice", e.ID)
				}
				seen[e.ID] = true
			}
			if p.Meta.NextCursor == nil {
				break
			}
			query = "pagination[pageSize]=7&cursor=" + *p.Meta.NextCursor
		}
		if len(seen) != 62 {
			t.Errorf("%d entries by cursor, want 62", len(seen))
		}
	})
	t.Run("Filters", func(t *testing.T) {
		for _, c := range []struct {
			name, query string
			want        []string
		}{
			{"TypeEq", "filters[type][$eq]=hold", []string{accounts.HoldID(orders[1].DocumentID), accounts.HoldID(orders[0].DocumentID)}},
			{"TypeIn", "filters[type][$in][0]=hold&filters[type][$in][1]=charge", []string{accounts.HoldID(orders[1].DocumentID), accounts.HoldID(orders[0].DocumentID)}},
			{"Order", "filters[order][$eq]=" + orders[0].DocumentID, []string{accounts.HoldID(orders[0].DocumentID)}},
			{"CreatedAtRange", "filters[createdAt][$gte]=2026-01-01T10:00:00Z&filters[createdAt][$lt]=2026-01-01T12:00:00Z", []string{"credit_UTR11", "credit_UTR10"}},
			{"CreatedAtDate", "filters[createdAt][$lt]=2026-01-01", nil}, // India's midnight: before the first entry (05:30 IST)
			{"TypeAndCreatedAt", "filters[type][$eq]=credit&filters[createdAt][$gte]=2026-01-03T10:00:00Z", []string{"credit_UTR59", "credit_UTR58"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				var got []string
				for _, e := range get(t, c.query).Data {
					got = append(got, e.ID)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("%v, want %v", got, c.want)
				}
			})
		}
	})
	t.Run("ErrQueries", func(t *testing.T) {
		refused(t, acme, "/api/account/entries", []refusal{
			{"OtherField", "filters[amount][$eq]=1.00", "filters", "Invalid key amount"},
			{"OtherOperator", "filters[type][$ne]=hold", "filters", "Invalid key $ne"},
			{"Or", "filters[$or][0][type][$eq]=hold", "filters", "Invalid key $or"},
			{"UnknownType", "filters[type][$eq]=refund", "filters[type][$eq]", "must be one of"},
			{"BadTime", "filters[createdAt][$gte]=yesterday", "filters[createdAt][$gte]", "must be a time"},
			{"Offset", "pagination[start]=10", "pagination", "paged by"},
			{"CursorAndPage", "cursor=s5&pagination[page]=2", "cursor", "not both"},
			{"BadCursor", "cursor=abc", "cursor", "nextCursor"},
			{"AscendingSort", "sort=createdAt:asc", "sort", "newest first"},
		})
	})
}

// refusal is a query a route refuses: 400 naming field, its message
// holding msg.
type refusal struct{ name, query, field, msg string }

// refused checks that GET path refuses each of cases, one subtest each.
func refused(t *testing.T, acme client, path string, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, acme.do("GET", path, c.query, ""), http.StatusBadRequest, c.field, c.msg)
		})
	}
}

func exportCSV(t *testing.T, acme client) {
	t.Run("RedirectsToTheRowsOldestFirst", func(t *testing.T) {
		resp := acme.do("GET", "/api/account/entries.csv", "from=2026-02-01&to=2026-02-02", "")
		if resp.Status != http.StatusFound || resp.Headers["Cache-Control"] != "no-store" {
			t.Fatalf("status %d %v, want 302, not cached: %s", resp.Status, resp.Headers, resp.Body)
		}
		file := functest.Download(t, resp.Headers["Location"])
		if file.Status != http.StatusOK {
			t.Fatalf("download: %d %s", file.Status, file.Body)
		}
		if !strings.HasPrefix(file.Body, strings.Join(accounts.CSVHeader, ",")+"\r\n") {
			t.Errorf("CSV begins %q, want the header row and CRLF", file.Body[:min(len(file.Body), 120)])
		}
		rows, err := csv.NewReader(strings.NewReader(file.Body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows[1:] {
			got = append(got, r[slices.Index(accounts.CSVHeader, "reference")]+"|"+r[slices.Index(accounts.CSVHeader, "note")]+"|"+r[slices.Index(accounts.CSVHeader, "amount")])
		}
		want := []string{`'=HYPERLINK("http://x","y")||5.00`, `'+91||1.00`, `|'@bank charge|-40.50`}
		if !slices.Equal(got, want) {
			t.Errorf("rows %q, want %q", got, want)
		}
	})
	t.Run("ErrRanges", func(t *testing.T) {
		refused(t, acme, "/api/account/entries.csv", []refusal{
			{"MissingFrom", "to=2026-02-01", "from", "required"},
			{"MissingTo", "from=2026-02-01", "to", "required"},
			{"BadDate", "from=2026-02-30&to=2026-03-01", "from", "YYYY-MM-DD"},
			{"ToBeforeFrom", "from=2026-02-02&to=2026-02-01", "to", "not be before"},
			{"TooLong", "from=2025-01-01&to=2026-01-02", "to", "at most 366 days"},
			{"Twice", "from=2026-02-01&from=2026-02-02&to=2026-02-03", "from", "once"},
		})
	})
}

func statement(t *testing.T, acme client) {
	type statementBody struct {
		Data map[string]string `json:"data"`
	}
	t.Run("IdentitiesHold", func(t *testing.T) {
		for _, month := range []string{"2026-01", "2026-02", time.Now().In(accounts.India).Format("2006-01")} {
			st := functest.OK[statementBody](t, acme.do("GET", "/api/account/statements/"+month, "", "")).Data
			m := map[string]accounts.Money{}
			for k, v := range st {
				if k == "month" {
					continue
				}
				var err error
				if m[k], err = accounts.ParseMoney(k, v, accounts.Signed); err != nil {
					t.Fatalf("%s: %v", k, err)
				}
			}
			if len(m) != 9 || st["month"] != month {
				t.Fatalf("statement %v, want month %s and nine amounts", st, month)
			}
			if m["openingBalance"]+m["credits"]-m["charges"]+m["adjustments"] != m["closingBalance"] ||
				m["openingHeld"]+m["holds"]-m["releases"]-m["charges"] != m["closingHeld"] {
				t.Errorf("statement %v breaks an identity", st)
			}
			if month == "2026-02" && (st["openingBalance"] != "60.00" || st["credits"] != "6.00" || st["adjustments"] != "-40.50") {
				t.Errorf("February %v, want opening 60.00 (January's credits), credits 6.00, adjustments -40.50", st)
			}
		}
	})
	t.Run("ErrMonths", func(t *testing.T) {
		next := time.Now().In(accounts.India).AddDate(0, 1, 0).Format("2006-01")
		for _, m := range []string{next, "2026-13", "2026-1", "january"} {
			wantError(t, acme.do("GET", "/api/account/statements/"+m, "", ""), http.StatusBadRequest, "month", "month")
		}
	})
}
