package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"stampduty/shared/duty"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/dutyexamples"
	"stampduty/shared/testkit/storetest"
)

// exampleDuties returns the duty of each worked example of
// duty-rules-examples.json that prices (the error cases left out), by id.
func exampleDuties(t *testing.T) map[string]*duty.Duty {
	t.Helper()
	ex, err := dutyexamples.Load()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*duty.Duty{}
	for _, c := range ex.Cases {
		rules, problems := duty.ParseRules(ex.Rules[c.Rule])
		if problems != nil {
			t.Fatal(problems)
		}
		req := duty.Request{Purpose: "P", State: "S", Date: c.Date, Numbers: map[string]int64{}, Enums: map[string]string{}}
		for k, v := range c.Inputs {
			switch v := v.(type) {
			case json.Number:
				if req.Numbers[k], err = v.Int64(); err != nil {
					t.Fatalf("%s: input %s: %v", c.ID, k, err)
				}
			case string:
				req.Enums[k] = v
			}
		}
		if d, err := rules.Evaluate(req); err == nil {
			d.Rule.Article, d.Rule.ArticleVersion = "d4k0aaaaaaaaaaaaaaaaaaaa", 12
			out[c.ID] = d
		}
	}
	return out
}

// spread returns d with n lines, each a line of d's with an id and a label
// of its own, as a schedule of n components would explain it.
func spread(d *duty.Duty, n int) *duty.Duty {
	out := *d
	out.Lines = nil
	for i := range n {
		l := d.Lines[i%len(d.Lines)]
		l.ID = fmt.Sprintf("c%d", i)
		l.Label = fmt.Sprintf("Component %d of the schedule (%s)", i+1, l.Label)
		out.Lines = append(out.Lines, l)
	}
	return &out
}

// TestDutyCostsACreateAtMostOneWCU: an order that stores its explained
// duty (duty-rules.md §8) costs its create at most 1 WCU more than the
// same order without it (issue 34's bar), for every worked example's duty
// and for a duty of 16 lines (four times the longest rule of the local
// catalogue), each written with its order.created event in the outbox as
// a create writes it. Past that the bar does not hold: the outbox index
// projects the whole item, so an item pushed past a 1 KB step costs 2 WCU
// more (the table's and the index's); 24 lines of long labels do (logged).
func TestDutyCostsACreateAtMostOneWCU(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, ids := proxiedStore(t, 300)
	proxy.SetMode(storetest.Account)
	ords := db.Orders(env.Table("OrdersTable"))
	create := func(o stampduty.Order) float64 {
		t.Helper()
		proxy.Take()
		if _, err := ords.Create(ctx, "owner", o, pending(t, stampduty.EventOrderCreated, o, nil, nil)); err != nil {
			t.Fatal(err)
		}
		var wcu float64
		for _, c := range env.Made(proxy.Take()) {
			if !c.Accounted {
				t.Fatalf("%s not accounted: %v", c.Operation, proxy.Err())
			}
			wcu += c.Billed.Write
		}
		return wcu
	}
	// more is what d adds to a create of the same order without it.
	more := func(d *duty.Duty) float64 {
		t.Helper()
		without := create(newOrder(t, ids, 1))
		o := newOrder(t, ids, 1)
		o.StampDuty.Duty = d
		return create(o) - without
	}
	create(newOrder(t, ids, 1)) // the owner's first create costs 1 WCU more than the next: left out
	duties := exampleDuties(t)
	if len(duties) < 10 {
		t.Fatalf("%d worked examples price, want the file's", len(duties))
	}
	var longest *duty.Duty
	for id, d := range duties {
		if m := more(d); m > 1 {
			t.Errorf("%s (%d lines): a create costs %.1f WCU more with its duty, want at most 1", id, len(d.Lines), m)
		}
		if longest == nil || len(d.Lines) > len(longest.Lines) {
			longest = d
		}
	}
	if m := more(spread(longest, 16)); m > 1 {
		t.Errorf("a duty of 16 lines costs a create %.1f WCU more, want at most 1", m)
	}
	t.Logf("%d worked examples (up to %d lines) and 16 lines: at most 1 WCU more; 24 lines: %.1f, 34: %.1f",
		len(duties), len(longest.Lines), more(spread(longest, 24)), more(spread(longest, 34)))
}
