package store_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
)

// readsFixture is a ledger table behind a proxy, and the caller's account
// API over it.
type readsFixture struct {
	env    *storetest.Env
	proxy  *storetest.Proxy
	ledger *store.Ledger
	caller *accounts.Caller
	now    time.Time
}

func newReadsFixture(t *testing.T) *readsFixture {
	env, db, proxy, _ := proxiedStore(t, 10)
	l := db.Ledger(env.Table("LedgerTable"))
	f := &readsFixture{env: env, proxy: proxy, ledger: l, now: time.Date(2026, 12, 6, 23, 41, 0, 0, time.UTC)}
	f.caller = &accounts.Caller{Ledger: &accounts.Ledger{Store: l, Now: func() time.Time { return f.now }}, Reads: l}
	return f
}

// change is an entry of type typ and rupees about order (hold, charge,
// release) or with reference ref (credit, adjustment) made at.
func change(typ string, rupees int64, name string, at time.Time) accounts.Change {
	e := accounts.Entry{Type: typ, Amount: accounts.Rupees(rupees), By: accounts.BySystem, CreatedAt: at}
	switch typ {
	case accounts.TypeHold:
		e.ID, e.Order = accounts.HoldID(name), name
	case accounts.TypeCharge:
		e.ID, e.Order, e.Fulfillment = accounts.ChargeID(name+"-p"), name, name+"-p"
	case accounts.TypeRelease:
		e.ID, e.Order = accounts.ReleaseID(name), name
	case accounts.TypeCredit:
		e.ID, e.Reference = accounts.CreditID(name), name
	case accounts.TypeAdjustment:
		e.ID, e.Note = accounts.AdjustmentID(name), "note "+name
	}
	return accounts.Change{Entry: e}
}

// apply applies chs to owner's ledger in order.
func (f *readsFixture) apply(t *testing.T, owner string, chs ...accounts.Change) {
	t.Helper()
	for _, ch := range chs {
		if _, err := f.ledger.Apply(context.Background(), owner, ch); err != nil {
			t.Fatalf("apply %s: %v", ch.Entry.ID, err)
		}
	}
}

// seqs returns the seqs of es.
func seqs(es []accounts.Entry) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

// span returns hi, hi−1 … lo.
func span(hi, lo int64) []int64 {
	var out []int64
	for s := hi; s >= lo; s-- {
		out = append(out, s)
	}
	return out
}

// deleteEntry removes entry seq of owner, as if its writer stopped
// between the account's update and the entry's put.
func (f *readsFixture) deleteEntry(t *testing.T, owner string, seq int64) {
	t.Helper()
	if _, err := f.env.Client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(f.env.Table("LedgerTable")),
		Key: map[string]types.AttributeValue{"owner": &types.AttributeValueMemberS{Value: owner},
			"k": &types.AttributeValueMemberS{Value: fmt.Sprintf("e#%012d", seq)}}}); err != nil {
		t.Fatal(err)
	}
}

// cost returns the calls and read units of calls.
func (f *readsFixture) cost(calls []storetest.ProxyCall) (string, float64) {
	rcu := 0.0
	for _, c := range calls {
		rcu += c.Billed.Read
	}
	return f.env.Operations(calls), rcu
}

func TestEntriesPages(t *testing.T) {
	ctx := context.Background()
	f := newReadsFixture(t)
	const n = 1300
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		f.apply(t, "acme", change(accounts.TypeCredit, 1, fmt.Sprintf("c%d", i), start.Add(time.Duration(i)*time.Minute)))
	}
	t.Run("PageNIsTheSeqRangeFromTheNewest", func(t *testing.T) {
		for _, tc := range []struct {
			page, size int
			want       []int64
		}{{1, 25, span(n, n-24)}, {2, 25, span(n-25, n-49)}, {52, 25, span(25, 1)}, {53, 25, nil}, {14, 100, nil}, {13, 100, span(100, 1)}, {1, 1, []int64{n}}} {
			p, err := f.caller.Entries(ctx, "acme", accounts.EntryQuery{Page: tc.page, PageSize: tc.size})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(seqs(p.Entries), tc.want) || p.Total != n {
				t.Errorf("page %d of %d: seqs %v, total %d; want %v, %d", tc.page, tc.size, seqs(p.Entries), p.Total, tc.want, n)
			}
		}
	})
	t.Run("PageFiftyCostsWhatPageOneCosts", func(t *testing.T) {
		f.proxy.SetMode(storetest.Account)
		defer f.proxy.SetMode(storetest.Record)
		measure := func(page int) (string, float64) {
			f.proxy.Take()
			if _, err := f.caller.Entries(ctx, "acme", accounts.EntryQuery{Page: page, PageSize: 25}); err != nil {
				t.Fatal(err)
			}
			return f.cost(f.proxy.Take())
		}
		ops1, rcu1 := measure(1)
		ops50, rcu50 := measure(50)
		if want := "GetItem:LedgerTable=1 Query:LedgerTable=1"; ops1 != want || ops50 != want {
			t.Errorf("page 1: %s, page 50: %s; want %s each", ops1, ops50, want)
		}
		if rcu50 != rcu1 {
			t.Errorf("page 50 reads %.1f RCU, page 1 %.1f", rcu50, rcu1)
		}
		t.Logf("entries of a ledger of %d, 25 a page: page 1 %s %.1f RCU; page 50 %s %.1f RCU", n, ops1, rcu1, ops50, rcu50)
	})
	t.Run("CursorWalksEveryEntryOnce", func(t *testing.T) {
		var got []int64
		q := accounts.EntryQuery{PageSize: 100}
		for range 20 {
			p, err := f.caller.Entries(ctx, "acme", q)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, seqs(p.Entries)...)
			if p.Next == 0 {
				break
			}
			q.Cursor = p.Next
		}
		if !slices.Equal(got, span(n, 1)) {
			t.Errorf("the cursor pages hold %d entries, want %d … 1 once each", len(got), n)
		}
	})
	t.Run("CreatedAtBoundsFoundByPointReads", func(t *testing.T) {
		f.proxy.Take()
		// Entry i (seq i+1) is made at start + i minutes.
		from, before := start.Add(100*time.Minute), start.Add(130*time.Minute)
		p, err := f.caller.Entries(ctx, "acme", accounts.EntryQuery{From: from, Before: before, Page: 1, PageSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(seqs(p.Entries), span(130, 101)) || p.Total != 30 {
			t.Errorf("seqs %v, total %d; want 130 … 101, 30", seqs(p.Entries), p.Total)
		}
		calls := storetest.Requests(f.proxy.Take())
		gets := 0
		for _, c := range calls {
			if c.Operation == "GetItem" {
				gets++
			}
			if c.Operation == "Query" && gets == 0 {
				t.Errorf("a Query before the bounds were found")
			}
		}
		if gets > 2*12+1 {
			t.Errorf("%d GetItems for the bounds in %d entries, want about 2·log2", gets, n)
		}
		t.Logf("createdAt bounds in %d entries: %s", n, f.env.Operations(calls))
	})
	t.Run("ExportReadsEachEntryOnce", func(t *testing.T) {
		f.proxy.SetMode(storetest.Account)
		defer f.proxy.SetMode(storetest.Record)
		f.proxy.Take()
		var got []int64
		n, err := f.caller.Export(ctx, "acme", start, start.Add(n*time.Minute), func(es []accounts.Entry) error {
			got = append(got, seqs(es)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Reverse(got)
		if n != 1300 || !slices.Equal(got, span(1300, 1)) {
			t.Errorf("%d rows, seqs %d … ; want 1,300 oldest first", n, got[0])
		}
		ops, rcu := f.cost(f.proxy.Take())
		t.Logf("a CSV of %d rows: %s, %.1f RCU", n, ops, rcu)
	})
	t.Run("BoundBetweenEntries", func(t *testing.T) {
		p, err := f.caller.Entries(ctx, "acme", accounts.EntryQuery{From: start.Add(99*time.Minute + 30*time.Second), Page: 1, PageSize: 5})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != n-100 {
			t.Errorf("total %d from between entries 100 and 101, want %d", p.Total, n-100)
		}
	})
}

func TestEntriesMergeTheNewestNotYetWritten(t *testing.T) {
	ctx := context.Background()
	f := newReadsFixture(t)
	at := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	f.apply(t, "acme", change(accounts.TypeCredit, 100, "c1", at), change(accounts.TypeHold, 20, "o1", at.Add(time.Second)),
		change(accounts.TypeHold, 30, "o2", at.Add(2*time.Second)))
	f.deleteEntry(t, "acme", 3)
	for _, tc := range []struct {
		name string
		q    accounts.EntryQuery
		want []int64
	}{
		{"Page", accounts.EntryQuery{Page: 1, PageSize: 25}, []int64{3, 2, 1}},
		{"TypeFilter", accounts.EntryQuery{Page: 1, PageSize: 25, Filter: accounts.EntryFilter{Types: []string{accounts.TypeHold}}}, []int64{3, 2}},
		{"OrderFilter", accounts.EntryQuery{PageSize: 25, Filter: accounts.EntryFilter{Order: "o2"}}, []int64{3}},
		{"OtherOrder", accounts.EntryQuery{PageSize: 25, Filter: accounts.EntryFilter{Order: "o1"}}, []int64{2}},
		{"CreatedAt", accounts.EntryQuery{Page: 1, PageSize: 25, From: at.Add(2 * time.Second)}, []int64{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := f.caller.Entries(ctx, "acme", tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(seqs(p.Entries), tc.want) {
				t.Errorf("seqs %v, want %v: the account's newest entry must show before its item is written", seqs(p.Entries), tc.want)
			}
		})
	}
}

func TestEntriesFilteredByTypeAndOrder(t *testing.T) {
	ctx := context.Background()
	f := newReadsFixture(t)
	at := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	var chs []accounts.Change
	for i := range 30 {
		o := fmt.Sprintf("o%d", i)
		chs = append(chs, change(accounts.TypeHold, 10, o, at), change(accounts.TypeCharge, 10, o, at))
		if i%3 == 0 {
			chs = append(chs, change(accounts.TypeCredit, 5, fmt.Sprintf("c%d", i), at))
		}
	}
	f.apply(t, "acme", chs...)
	all, err := f.ledger.Entries(ctx, "acme", 1, int64(len(chs)))
	if err != nil {
		t.Fatal(err)
	}
	keep := func(fl accounts.EntryFilter) []int64 {
		var out []int64
		for _, e := range all {
			if fl.Keeps(e) {
				out = append(out, e.Seq)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		fl   accounts.EntryFilter
	}{
		{"TypeEq", accounts.EntryFilter{Types: []string{accounts.TypeCredit}}},
		{"TypeIn", accounts.EntryFilter{Types: []string{accounts.TypeCredit, accounts.TypeCharge}}},
		{"Order", accounts.EntryFilter{Order: "o7"}},
		{"TypeAndOrder", accounts.EntryFilter{Types: []string{accounts.TypeHold}, Order: "o7"}},
		{"NoMatch", accounts.EntryFilter{Order: "none"}},
	} {
		t.Run(tc.name+"ByCursor", func(t *testing.T) {
			var got []int64
			q := accounts.EntryQuery{PageSize: 4, Filter: tc.fl}
			for range 50 {
				p, err := f.caller.Entries(ctx, "acme", q)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Entries) > 4 || p.Total != -1 {
					t.Fatalf("a page of %d entries, total %d; want at most 4, total unknown", len(p.Entries), p.Total)
				}
				got = append(got, seqs(p.Entries)...)
				if p.Next == 0 {
					break
				}
				q.Cursor = p.Next
			}
			if want := keep(tc.fl); !slices.Equal(got, want) {
				t.Errorf("seqs %v, want %v", got, want)
			}
		})
		t.Run(tc.name+"ByPage", func(t *testing.T) {
			want := keep(tc.fl)
			p, err := f.caller.Entries(ctx, "acme", accounts.EntryQuery{Page: 2, PageSize: 3, Filter: tc.fl})
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := min(3, len(want)), min(6, len(want))
			if !slices.Equal(seqs(p.Entries), want[lo:hi]) {
				t.Errorf("page 2 of 3: seqs %v, want %v", seqs(p.Entries), want[lo:hi])
			}
		})
	}
}

func TestStatement(t *testing.T) {
	ctx := context.Background()
	f := newReadsFixture(t)
	// India's April begins at 31 March 18:30 UTC.
	april := time.Date(2026, 3, 31, 18, 30, 0, 0, time.UTC)
	f.apply(t, "acme",
		change(accounts.TypeCredit, 1000, "c1", april.Add(-48*time.Hour)),
		change(accounts.TypeHold, 300, "o1", april.Add(-24*time.Hour)),
		change(accounts.TypeCharge, 100, "o1", april.Add(-time.Millisecond)), // the last of March
		change(accounts.TypeAdjustment, -40, "a1", april),                    // the first of April
		change(accounts.TypeHold, 50, "o2", april.Add(time.Hour)),
		change(accounts.TypeRelease, 200, "o1", april.Add(2*time.Hour)),
		change(accounts.TypeCredit, 500, "c2", april.Add(3*time.Hour)),
		change(accounts.TypeCharge, 50, "o2", april.Add(30*24*time.Hour-time.Millisecond)), // the last of April
		change(accounts.TypeCredit, 7, "c3", april.Add(30*24*time.Hour)),                   // the first of May
	)
	sum := func(es []accounts.Entry, typ string) accounts.Money {
		var m accounts.Money
		for _, e := range es {
			if e.Type == typ {
				m += e.Amount
			}
		}
		return m
	}
	all, err := f.ledger.Entries(ctx, "acme", 1, 9)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(all)
	for _, tc := range []struct {
		month      string
		before, in []accounts.Entry
	}{
		{"2026-03", nil, all[:3]},
		{"2026-04", all[:3], all[3:8]},
		{"2026-05", all[:8], all[8:]},
		{"2026-06", all, nil},
		{"2026-02", nil, nil},
	} {
		t.Run(tc.month, func(t *testing.T) {
			f.proxy.SetMode(storetest.Account)
			defer f.proxy.SetMode(storetest.Record)
			f.proxy.Take()
			s, err := f.caller.Statement(ctx, "acme", tc.month)
			if err != nil {
				t.Fatal(err)
			}
			calls := f.proxy.Take()
			var openBal, openHeld accounts.Money
			for _, e := range tc.before {
				db, dh := e.Effects()
				openBal, openHeld = openBal+db, openHeld+dh
			}
			want := accounts.Statement{Month: tc.month, OpeningBalance: openBal, OpeningHeld: openHeld,
				Credits: sum(tc.in, accounts.TypeCredit), Charges: sum(tc.in, accounts.TypeCharge), Adjustments: sum(tc.in, accounts.TypeAdjustment),
				Holds: sum(tc.in, accounts.TypeHold), Releases: sum(tc.in, accounts.TypeRelease)}
			want.ClosingBalance = want.OpeningBalance + want.Credits - want.Charges + want.Adjustments
			want.ClosingHeld = want.OpeningHeld + want.Holds - want.Releases - want.Charges
			if s != want {
				t.Errorf("statement %+v, want %+v", s, want)
			}
			ops, rcu := f.cost(calls)
			if strings.Contains(ops, "Query") {
				t.Errorf("calls %s: a statement reads no range of entries", ops)
			}
			t.Logf("statement %s: %s, %.1f RCU", tc.month, ops, rcu)
		})
	}
	t.Run("CurrentMonthRunsToNow", func(t *testing.T) {
		f.now = april.Add(10 * 24 * time.Hour)
		defer func() { f.now = time.Date(2026, 12, 6, 23, 41, 0, 0, time.UTC) }()
		s, err := f.caller.Statement(ctx, "acme", "2026-04")
		if err != nil {
			t.Fatal(err)
		}
		// The month so far is every April entry; May's (ahead of this
		// clock) is not April's.
		if got, want := s.ClosingBalance, accounts.Rupees(1000-100-40+500-50); got != want {
			t.Errorf("closing balance %s, want %s", got, want)
		}
		if _, err := f.caller.Statement(ctx, "acme", "2026-05"); fieldOfErr(err) != "month" {
			t.Errorf("a month not begun: %v, want 400 naming month", err)
		}
	})
}

// fieldOfErr returns the one field an EINVALID err names.
func fieldOfErr(err error) string {
	var e *stampduty.Error
	if !errors.As(err, &e) || e.Code != stampduty.EINVALID || len(e.Fields) != 1 {
		return ""
	}
	return e.Fields[0].Path
}

func TestExport(t *testing.T) {
	ctx := context.Background()
	f := newReadsFixture(t)
	day := func(d int) time.Time { return time.Date(2026, 4, d, 0, 0, 0, 0, accounts.India) }
	f.apply(t, "acme",
		change(accounts.TypeCredit, 1, "before", day(1).Add(-time.Millisecond)),
		change(accounts.TypeCredit, 1, "=HYPERLINK(\"http://evil\")", day(1)),
		change(accounts.TypeAdjustment, -2, "-x", day(2)),
		change(accounts.TypeCredit, 1, "last", day(4).Add(-time.Millisecond)),
		change(accounts.TypeCredit, 1, "after", day(4)),
	)
	read := func(t *testing.T, from, to time.Time) ([][]string, int64) {
		var b bytes.Buffer
		w, err := accounts.NewCSVWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		n, err := f.caller.Export(ctx, "acme", from, to, w.Write)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows, n
	}
	t.Run("RangeOldestFirst", func(t *testing.T) {
		rows, n := read(t, day(1), day(4))
		var refs []string
		for _, r := range rows[1:] {
			refs = append(refs, r[slices.Index(accounts.CSVHeader, "reference")])
		}
		if want := []string{"'=HYPERLINK(\"http://evil\")", "", "last"}; !slices.Equal(refs, want) || n != 3 {
			t.Errorf("references %q (%d rows), want %q", refs, n, want)
		}
		if got := rows[2][slices.Index(accounts.CSVHeader, "amount")]; got != "-2.00" {
			t.Errorf("adjustment amount %q, want -2.00", got)
		}
		if got := rows[2][slices.Index(accounts.CSVHeader, "note")]; got != "note -x" {
			t.Errorf("note %q, want it as written (it starts with n)", got)
		}
	})
	t.Run("EmptyRange", func(t *testing.T) {
		if rows, n := read(t, day(10), day(11)); len(rows) != 1 || n != 0 {
			t.Errorf("%d rows (%d entries), want the header alone", len(rows), n)
		}
	})
	t.Run("MoreThanTheMostRowsIsRefusedBeforeAnyRead", func(t *testing.T) {
		// An account whose ledger holds 100,001 entries: its item and its
		// first and newest entries, which are all the bounds read.
		big := "big"
		f.apply(t, big, change(accounts.TypeCredit, 1, "first", day(1)))
		first, err := f.ledger.EntryAt(ctx, big, 1)
		if err != nil || first == nil {
			t.Fatal(first, err)
		}
		const n = accounts.MaxCSVRows + 1
		newest := *first
		newest.ID, newest.Seq, newest.CreatedAt = "credit_newest", n, day(2)
		putRaw(t, f, big, newest, n)
		f.proxy.Take()
		_, err = f.caller.Export(ctx, big, day(1), day(3), func([]accounts.Entry) error {
			t.Fatal("rows read")
			return nil
		})
		if fieldOfErr(err) != "to" || !strings.Contains(err.Error(), "shorter range") {
			t.Errorf("err = %v, want 400 asking for a shorter range", err)
		}
		if ops := f.env.Operations(f.proxy.Take()); strings.Contains(ops, "Query") {
			t.Errorf("calls %s: no entry read before the count", ops)
		}
	})
}

// putRaw stores e as owner's newest entry at seq n, the account item
// claiming n entries (the ones between are not stored).
func putRaw(t *testing.T, f *readsFixture, owner string, e accounts.Entry, n int64) {
	t.Helper()
	ctx := context.Background()
	last, err := attributevalue.Marshal(map[string]any{"id": e.ID, "ty": e.Type, "am": int64(e.Amount), "by": e.By, "at": e.CreatedAt.UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(f.env.Table("LedgerTable")),
		Key:                       map[string]types.AttributeValue{"owner": &types.AttributeValueMemberS{Value: owner}, "k": &types.AttributeValueMemberS{Value: "account"}},
		UpdateExpression:          aws.String("SET n = :n, #last = :last"),
		ExpressionAttributeNames:  map[string]string{"#last": "last"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: fmt.Sprint(n)}, ":last": last}}); err != nil {
		t.Fatal(err)
	}
}

func TestTestCredits(t *testing.T) {
	ctx := context.Background()
	f := newReadsFixture(t)
	owner := stampduty.TestOwnerOf("acme")
	t.Run("UntouchedTestAccountReadsAsItWillOpen", func(t *testing.T) {
		f.proxy.Take()
		a, err := f.caller.View(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		if a.Balance != accounts.TestOpening || a.Limit == nil || *a.Limit != 0 || a.Held != 0 {
			t.Errorf("account %+v, want the opening credit and limit 0", a)
		}
		if got, want := f.env.Operations(f.proxy.Take()), "GetItem:LedgerTable=1"; got != want {
			t.Errorf("calls %s, want %s: a read writes nothing", got, want)
		}
		p, err := f.caller.Entries(ctx, owner, accounts.EntryQuery{Page: 1, PageSize: 25})
		if err != nil || len(p.Entries) != 1 || p.Entries[0].ID != accounts.OpeningID || p.Total != 1 {
			t.Errorf("entries %+v, %v; want the opening credit alone", p, err)
		}
	})
	t.Run("LiveOwnerIsRefusedAndNothingWritten", func(t *testing.T) {
		f.proxy.Take()
		_, err := f.caller.TestCredit(ctx, "acme", accounts.Rupees(10), "k1")
		if stampduty.ErrorCode(err) != stampduty.EFORBIDDEN {
			t.Errorf("err = %v, want EFORBIDDEN", err)
		}
		if calls := f.proxy.Take(); len(calls) != 0 {
			t.Errorf("calls %s, want none", f.env.Operations(calls))
		}
	})
	t.Run("AboveTheOpeningIsRefusedSayingTheMost", func(t *testing.T) {
		if _, err := f.ledger.Apply(ctx, owner, accounts.Change{Entry: accounts.Entry{ID: "charge_p1", Type: accounts.TypeCharge, Amount: accounts.Rupees(25000), By: accounts.BySystem, CreatedAt: f.now}}); !errors.Is(err, accounts.ErrNotOpened) {
			t.Fatalf("a test account applies before it is opened: %v", err)
		}
		if _, err := f.caller.TestCredit(ctx, owner, accounts.Rupees(1), "open"); err == nil || !strings.Contains(err.Error(), "at most 0.00") {
			t.Errorf("a credit on a full test account: %v, want at most 0.00", err)
		}
		f.apply(t, owner, accounts.Change{Entry: accounts.Entry{ID: "charge_p1", Type: accounts.TypeCharge, Amount: accounts.Rupees(25000), By: accounts.BySystem, CreatedAt: f.now}})
		before := checkLedger(t, f.ledger, owner)
		_, err := f.caller.TestCredit(ctx, owner, accounts.Rupees(25000)+1, "k2")
		if fieldOfErr(err) != "amount" || !strings.Contains(err.Error(), "at most 25000.00") {
			t.Errorf("err = %v, want 400 naming amount, at most 25000.00", err)
		}
		if after := checkLedger(t, f.ledger, owner); after.Seq != before.Seq {
			t.Errorf("%d entries after a refused credit, want %d", after.Seq, before.Seq)
		}
	})
	t.Run("RetryWritesOnce", func(t *testing.T) {
		a1, err := f.caller.TestCredit(ctx, owner, accounts.Rupees(25000), "k3")
		if err != nil {
			t.Fatal(err)
		}
		a2, err := f.caller.TestCredit(ctx, owner, accounts.Rupees(25000), "k3")
		if err != nil {
			t.Fatal(err)
		}
		if a2.Entry.ID != a1.Entry.ID || a2.Entry.Seq != a1.Entry.Seq || !a2.Replayed {
			t.Errorf("retry answered %+v, want the first entry %+v, replayed", a2.Entry, a1.Entry)
		}
		a := checkLedger(t, f.ledger, owner)
		if a.Balance != accounts.TestOpening {
			t.Errorf("balance %s, want back at %s", a.Balance, accounts.TestOpening)
		}
		if a1.Entry.By != accounts.ByCaller || a1.Entry.Reference != accounts.TestCreditReference {
			t.Errorf("entry %+v, want by caller, reference %s", a1.Entry, accounts.TestCreditReference)
		}
	})
	t.Run("ConcurrentCreditsNeverPassTheCap", func(t *testing.T) {
		f.apply(t, owner, accounts.Change{Entry: accounts.Entry{ID: "charge_p2", Type: accounts.TypeCharge, Amount: accounts.Rupees(100), By: accounts.BySystem, CreatedAt: f.now}})
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.caller.TestCredit(ctx, owner, accounts.Rupees(40), fmt.Sprintf("race%d", i))
				if err != nil && fieldOfErr(err) != "amount" && stampduty.ErrorCode(err) != stampduty.ECONFLICT {
					t.Errorf("credit %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		if a := checkLedger(t, f.ledger, owner); a.Balance > accounts.TestOpening || a.Balance < accounts.TestOpening-accounts.Rupees(40) {
			t.Errorf("balance %s after 8 credits of 40.00 into 100.00 of room, want 2 of them", a.Balance)
		}
	})
}

func TestSetThreshold(t *testing.T) {
	ctx := context.Background()
	f := newReadsFixture(t)
	limit := accounts.Rupees(500)
	if _, err := f.ledger.Configure(ctx, "acme", 0, &limit, nil, false, f.now); err != nil {
		t.Fatal(err)
	}
	f.apply(t, "acme", change(accounts.TypeCredit, 100, "c1", f.now))
	thr := accounts.Rupees(5000)
	a, err := f.caller.SetThreshold(ctx, "acme", &thr)
	if err != nil {
		t.Fatal(err)
	}
	if a.Threshold == nil || *a.Threshold != thr || a.Limit == nil || *a.Limit != limit || a.Balance != accounts.Rupees(100) {
		t.Errorf("account %+v, want threshold 5000.00, the limit 500.00 kept, the balance kept", a)
	}
	if a, err = f.caller.SetThreshold(ctx, "acme", nil); err != nil || a.Threshold != nil || a.Limit == nil || *a.Limit != limit {
		t.Errorf("account %+v, %v: want no threshold, the limit kept", a, err)
	}
	t.Run("UnlimitedStaysUnlimited", func(t *testing.T) {
		if a, err := f.caller.SetThreshold(ctx, "fresh", &thr); err != nil || a.Limit != nil || a.Threshold == nil {
			t.Errorf("account %+v, %v: want unlimited with the threshold", a, err)
		}
	})
}
