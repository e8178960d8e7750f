package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
	"stampduty/shared/webhooks"
)

// TestAccountsCommands: stampctl shows a caller's account and its
// entries, records credits (once per reference), adjustments and limits
// (a limit below held only with --yes) as the person running it, and opens
// a new caller's account with DEFAULT_CREDIT_LIMIT.
func TestAccountsCommands(t *testing.T) {
	h := newHarness(t)
	h.vars["LEDGER_TABLE"] = h.env.Table("LedgerTable")
	h.vars["WEBHOOKS_TABLE"], h.vars["DELIVERIES_TABLE"] = h.env.Table("WebhooksTable"), h.env.Table("DeliveriesTable")
	ledger := h.db.Ledger(h.env.Table("LedgerTable"))
	by := map[string]string{"STAMPDUTY_BY": "arn:aws:iam::123456789012:user/asha"}
	h.ok(t, by, "callers", "create", "acme")
	reg := &webhooks.Registry{Hooks: h.db.Webhooks(h.vars["WEBHOOKS_TABLE"]), Jobs: h.db.Deliveries(h.vars["DELIVERIES_TABLE"]),
		IDs: h.db.IDs(h.env.Table("CountersTable"), 10), Guard: webhooks.Guard{Local: true}, Now: time.Now}
	hook, err := reg.Register(context.Background(), "acme", webhooks.Registration{URL: "http://127.0.0.1:9/hook", Events: []string{accounts.EventCredited}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Apply(context.Background(), "acme", accounts.Change{Entry: accounts.Entry{ID: accounts.HoldID("o1"), Type: accounts.TypeHold,
		Amount: accounts.Rupees(500), Order: "o1", By: accounts.ByCaller, CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	account := func() accounts.Account {
		a, err := ledger.Account(context.Background(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	t.Run("a credit is recorded as the person running it", func(t *testing.T) {
		r := h.ok(t, by, "accounts", "credit", "--owner", "acme", "--amount", "100.00", "--reference", "utr-1", "--note", "NEFT")
		if !strings.Contains(r.stdout, "recorded credit of 100.00 reference UTR-1") {
			t.Errorf("stdout:\n%s", r.stdout)
		}
		es, err := ledger.Entries(context.Background(), "acme", 1, 10)
		if err != nil || len(es) != 2 || es[0].Sub != by["STAMPDUTY_BY"] || es[0].By != accounts.ByAdmin || es[0].Note != "NEFT" {
			t.Errorf("entries %+v, %v; want the credit by %s", es, err, by["STAMPDUTY_BY"])
		}
		// The caller's webhook is told (accounts.md, Events).
		id := accounts.EventID("acme", accounts.EventCredited, es[0].Seq, es[0].ID)
		if j, ok, err := h.db.Deliveries(h.vars["DELIVERIES_TABLE"]).Job(context.Background(), "acme", hook.DocumentID, id); err != nil || !ok || len(j.Body) == 0 {
			t.Errorf("the account.credited job of %s: %v, %v; want it put with its body", id, ok, err)
		}
	})
	t.Run("the same reference writes nothing more", func(t *testing.T) {
		r := h.ok(t, by, "accounts", "credit", "--owner", "acme", "--amount", "100.00", "--reference", "UTR-1")
		if !strings.Contains(r.stdout, "already recorded") || account().Balance != accounts.Rupees(100) {
			t.Errorf("stdout:\n%s\nbalance %s", r.stdout, account().Balance)
		}
		r = h.run(t, "", by, "accounts", "credit", "--owner", "acme", "--amount", "99.00", "--reference", "UTR-1")
		if r.code != 1 || !strings.Contains(r.stderr, "was recorded with a credit of ₹100.00") || account().Balance != accounts.Rupees(100) {
			t.Errorf("exit %d, stderr %q, balance %s", r.code, r.stderr, account().Balance)
		}
	})
	t.Run("an adjustment needs a note and keeps its sign", func(t *testing.T) {
		r := h.run(t, "", by, "accounts", "adjust", "--owner", "acme", "--amount", "-40.50")
		if r.code != 1 || !strings.Contains(r.stderr, "note is required") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
		h.ok(t, by, "accounts", "adjust", "--owner", "acme", "--amount", "-40.50", "--note", "bank charge", "--request", "r1")
		h.ok(t, by, "accounts", "adjust", "--owner", "acme", "--amount", "-40.50", "--note", "bank charge", "--request", "r1")
		if got, want := account().Balance, accounts.Rupees(100)-4050; got != want {
			t.Errorf("balance %s, want %s: once per request", got, want)
		}
	})
	t.Run("a limit below held needs --yes", func(t *testing.T) {
		r := h.run(t, "", by, "accounts", "limit", "--owner", "acme", "--limit", "0.00")
		if r.code != 1 || !strings.Contains(r.stderr, "--yes") || account().Limit != nil {
			t.Errorf("exit %d, stderr %q, limit %v", r.code, r.stderr, account().Limit)
		}
		r = h.ok(t, by, "accounts", "limit", "--owner", "acme", "--limit", "0.00", "--yes")
		if !strings.Contains(r.stdout, "available              -440.50") {
			t.Errorf("stdout:\n%s", r.stdout)
		}
		h.ok(t, by, "accounts", "limit", "--owner", "acme", "--limit", "unlimited")
		if account().Limit != nil {
			t.Errorf("limit %v, want unlimited", account().Limit)
		}
	})
	t.Run("show and entries", func(t *testing.T) {
		r := h.ok(t, by, "accounts", "show", "--owner", "acme")
		for _, want := range []string{"balance                59.50", "held                   500.00", "credit limit           unlimited", "entries                3"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("show lacks %q:\n%s", want, r.stdout)
			}
		}
		r = h.ok(t, by, "accounts", "entries", "--owner", "acme", "--page-size", "2")
		ls := lines(r.stdout)
		if len(ls) != 3 || !strings.HasPrefix(ls[1], "3 ") || !strings.HasPrefix(ls[2], "2 ") || !strings.Contains(r.stderr, "--before 2") {
			t.Errorf("entries:\n%s\n%s", r.stdout, r.stderr)
		}
		r = h.ok(t, by, "accounts", "entries", "--owner", "acme", "--page-size", "2", "--before", "2")
		if ls := lines(r.stdout); len(ls) != 2 || !strings.HasPrefix(ls[1], "1 ") || !strings.Contains(ls[1], "hold") || !strings.Contains(ls[1], " o1 ") || r.stderr != "" {
			t.Errorf("page 2:\n%s", r.stdout)
		}
	})
	t.Run("the test account is its own", func(t *testing.T) {
		r := h.ok(t, by, "accounts", "show", "--owner", "acme", "--test")
		if !strings.Contains(r.stdout, "balance                10000000.00") || !strings.Contains(r.stdout, "mode                   test") {
			t.Errorf("test account:\n%s", r.stdout)
		}
		h.ok(t, by, "accounts", "credit", "--owner", "acme", "--test", "--amount", "1.00", "--reference", "UTR-1")
		if a, _ := ledger.Account(context.Background(), stampduty.TestOwnerOf("acme")); a.Balance != accounts.TestOpening+100 {
			t.Errorf("test balance %s", a.Balance)
		}
	})
	t.Run("an unknown caller is refused", func(t *testing.T) {
		r := h.run(t, "", by, "accounts", "show", "--owner", "nobody")
		if r.code != 1 || !strings.Contains(r.stderr, "no caller nobody") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("a new caller opens with DEFAULT_CREDIT_LIMIT", func(t *testing.T) {
		over := map[string]string{"STAMPDUTY_BY": "asha", "DEFAULT_CREDIT_LIMIT": "0.00"}
		r := h.ok(t, over, "callers", "create", "prepaid")
		a, err := ledger.Account(context.Background(), "prepaid")
		if err != nil || !a.Opened || a.Limit == nil || *a.Limit != 0 || !strings.Contains(r.stdout, "credit limit of 0.00") {
			t.Errorf("account %+v, %v; stdout %q", a, err, r.stdout)
		}
		h.ok(t, map[string]string{"STAMPDUTY_BY": "asha", "DEFAULT_CREDIT_LIMIT": "50000.00"}, "token", "create", "--owner", "oncredit")
		if a, _ := ledger.Account(context.Background(), "oncredit"); a.Limit == nil || *a.Limit != accounts.Rupees(50000) {
			t.Errorf("token create's new caller: %+v", a)
		}
		h.ok(t, by, "callers", "create", "free")
		if a, _ := ledger.Account(context.Background(), "free"); a.Opened || a.Limit != nil {
			t.Errorf("a caller created with the default: %+v, want nothing stored, unlimited", a)
		}
		r = h.run(t, "", map[string]string{"STAMPDUTY_BY": "asha", "DEFAULT_CREDIT_LIMIT": "lots"}, "callers", "create", "bad-limit")
		if r.code != 1 || !strings.Contains(r.stderr, "default credit limit") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
}
