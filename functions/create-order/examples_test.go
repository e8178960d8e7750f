package main

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"stampduty/shared/duty"
	"stampduty/shared/testkit/dutyexamples"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// TestExamplesCreated runs the worked examples of duty-rules-examples.json
// through the create on the local engines: an order is made today (§7),
// so each case whose rule version in force on its date is the one in
// force today is created with its inputs and no amount, and the stored
// order keeps the example's amount and lines; an error case answers its
// status and paths. The create's own rules follow: an amount that is not
// the rule's total, a dutyRule that is not the rule in force, an
// instrumentDate other than today, and every failing input at once.
func TestExamplesCreated(t *testing.T) {
	ex, err := dutyexamples.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := functest.New(t, "CreateOrderFunction", wire)
	b, err := ex.Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	functest.SeedCatalogue(t, s.Env, b)
	today := duty.TodayInIndia(time.Now())
	post := func(body []byte) functest.Response {
		return s.Invoke(functest.Request("POST", "/api/live-orders", "", functest.DevHeaders, string(body)))
	}
	created := 0
	for _, c := range ex.Cases {
		t.Run(c.ID, func(t *testing.T) {
			rules, problems := duty.ParseRules(ex.Rules[c.Rule])
			if problems != nil {
				t.Fatal(problems)
			}
			then, okThen := rules.InForce(c.Date)
			now, okNow := rules.InForce(today)
			if !okThen || !okNow || then.Hash() != now.Hash() {
				t.Skipf("the rule of %s is not the one in force today: an order cannot be made on %s", c.Date, c.Date)
			}
			body, err := c.Body()
			if err != nil {
				t.Fatal(err)
			}
			r := post(body)
			if want := c.Expected.Error; want != nil {
				env := functest.CheckEnvelope(t, want.Status, []byte(r.Body))
				var paths [][]string
				for _, p := range env.Paths() {
					paths = append(paths, []string{p})
				}
				if !reflect.DeepEqual(paths, want.Paths) {
					t.Errorf("paths %v, want %v", paths, want.Paths)
				}
				return
			}
			doc := orderID(t, r)
			o, err := s.Env.DB().Orders(s.Env.Table("OrdersTable")).Owned(context.Background(), localdb.DevOwner, doc)
			if err != nil {
				t.Fatal(err)
			}
			d := o.StampDuty.Duty
			if d == nil {
				t.Fatal("the order keeps no duty")
			}
			if got, want := o.StampDuty.Amount, *c.Expected.Total; got != want {
				t.Errorf("amount %d, want %d", got, want)
			}
			var lines []string
			for _, l := range d.Lines {
				lines = append(lines, l.ID+" "+l.Amount)
			}
			if got, want := lines, c.WantLines(); !reflect.DeepEqual(got, want) {
				t.Errorf("lines %q, want %q", got, want)
			}
			if got, want := d.InstrumentDate, today; got != want {
				t.Errorf("instrumentDate %s, want today %s", got, want)
			}
			if got, want := d.Rule.Hash, now.Hash(); got != want {
				t.Errorf("rule %s, want %s", got, want)
			}
			created++
		})
	}
	if created < 5 {
		t.Errorf("%d examples created: too few run through the create", created)
	}

	// KA-SALE-03's inputs, for the create's own rules.
	var ka dutyexamples.Case
	for _, c := range ex.Cases {
		if c.ID == "KA-SALE-03" {
			ka = c
		}
	}
	with := func(edits map[string]any) []byte {
		var m map[string]any
		b, _ := ka.Body()
		json.Unmarshal(b, &m)
		for k, v := range edits {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		b, _ = json.Marshal(m)
		return b
	}
	rules, _ := duty.ParseRules(ex.Rules[ka.Rule])
	hash := rules[0].Hash()
	for _, tc := range []struct {
		name    string
		edits   map[string]any
		status  int
		message string
		paths   string
	}{
		{"AmountIsTheTotal", map[string]any{"amount": 252001}, 200, "", ""},
		{"AmountNotTheTotal", map[string]any{"amount": 252000}, 400,
			"The duty for the purpose is: 252001, while the amount passed is equal to: 252000", "[amount]"},
		{"DutyRuleCurrent", map[string]any{"dutyRule": hash}, 200, "", ""},
		{"DutyRuleChanged", map[string]any{"dutyRule": "sha256:" + strings.Repeat("0", 64)}, 409,
			"The duty rule for this purpose changed since the quote (sha256:" + strings.Repeat("0", 64) + " is now " + hash + "); quote again.", "[]"},
		{"InstrumentDateToday", map[string]any{"instrumentDate": today}, 200, "", ""},
		{"InstrumentDateNotToday", map[string]any{"instrumentDate": "2025-09-01"}, 400,
			"Invalid data. instrumentDate must be today's date in India (" + today + ") for an order", "[instrumentDate]"},
		{"EveryInputAtOnce", map[string]any{"marketValue": nil, "locationClass": "metro", "considerationPrice": "x"}, 400,
			"Invalid data. considerationPrice must be an integer; marketValue is required by the duty rule of Sale Deed in Karnataka in force on " + today + "; locationClass must be one of: urban, rural",
			"[considerationPrice marketValue locationClass]"},
		{"SixteenDigits", map[string]any{"marketValue": 1000000000000000}, 400,
			"Invalid data. marketValue must have at most 15 digits", "[marketValue]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(with(tc.edits))
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			if tc.status == 200 {
				return
			}
			env := functest.CheckEnvelope(t, tc.status, []byte(r.Body))
			if env.Error.Message != tc.message {
				t.Errorf("message %q\n want %q", env.Error.Message, tc.message)
			}
			if got := "[" + strings.Join(env.Paths(), " ") + "]"; got != tc.paths {
				t.Errorf("paths %s, want %s", got, tc.paths)
			}
			if tc.status == 400 && tc.name != "InstrumentDateNotToday" && env.Error.Details.DutyRule == nil {
				t.Errorf("details.dutyRule missing: %s", r.Body)
			}
		})
	}
}
