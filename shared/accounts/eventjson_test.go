package accounts

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestEventBody: an account event's body is the account as GET
// /api/account answers it and the entry as the entries' list shows it:
// money with two decimals, nulls for what is unset, livemode from the
// owner key, never an admin's sub.
func TestEventBody(t *testing.T) {
	at := time.Date(2026, 12, 7, 1, 2, 3, 456e6, time.UTC)
	limit, thr := Money(0), Rupees(500)
	credit := Entry{ID: "credit_UTR1", Type: TypeCredit, Amount: Rupees(1000), Seq: 2, BalanceAfter: Rupees(1000),
		Reference: "UTR1", By: ByAdmin, Sub: "secret-sub", CreatedAt: at}
	for _, tt := range []struct {
		name, owner string
		ev          Event
		want        string
	}{
		{"ACreditOnALimitedLiveAccount", "acme", Event{ID: "evt_a", Type: EventCredited, CreatedAt: at,
			Account: Account{Balance: Rupees(1000), Limit: &limit, Threshold: &thr, Seq: 2, UpdatedAt: at}, Entry: credit},
			`{"id":"evt_a","type":"account.credited","createdAt":"2026-12-07T01:02:03.456Z","livemode":true,"data":{"account":{"balance":"1000.00","held":"0.00","available":"1000.00","creditLimit":"0.00","lowBalanceThreshold":"500.00","currency":"INR","livemode":true,"updatedAt":"2026-12-07T01:02:03.456Z"},"entry":{"id":"credit_UTR1","type":"credit","amount":"1000.00","balanceAfter":"1000.00","heldAfter":"0.00","order":null,"fulfillment":null,"reference":"UTR1","note":null,"by":"admin","createdAt":"2026-12-07T01:02:03.456Z"}}}`},
		{"AnUnlimitedTestAccount", "acme~test", Event{ID: "evt_b", Type: EventCredited, CreatedAt: at,
			Account: Account{Balance: -Rupees(40) - 50, Held: Rupees(5)}, Entry: Entry{ID: "adjustment_r", Type: TypeAdjustment, Amount: -Rupees(40) - 50,
				BalanceAfter: -Rupees(40) - 50, HeldAfter: Rupees(5), Order: "o1", Note: "refund", By: ByAdmin, CreatedAt: at}},
			`{"id":"evt_b","type":"account.credited","createdAt":"2026-12-07T01:02:03.456Z","livemode":false,"data":{"account":{"balance":"-40.50","held":"5.00","available":null,"creditLimit":null,"lowBalanceThreshold":null,"currency":"INR","livemode":false,"updatedAt":null},"entry":{"id":"adjustment_r","type":"adjustment","amount":"-40.50","balanceAfter":"-40.50","heldAfter":"5.00","order":"o1","fulfillment":null,"reference":null,"note":"refund","by":"admin","createdAt":"2026-12-07T01:02:03.456Z"}}}`},
		{"LowWithoutAnEntry", "acme", Event{ID: "evt_c", Type: EventLowBalance, CreatedAt: at,
			Account: Account{Limit: &thr, Threshold: &thr, Held: Rupees(100), UpdatedAt: at}},
			`{"id":"evt_c","type":"account.low_balance","createdAt":"2026-12-07T01:02:03.456Z","livemode":true,"data":{"account":{"balance":"0.00","held":"100.00","available":"400.00","creditLimit":"500.00","lowBalanceThreshold":"500.00","currency":"INR","livemode":true,"updatedAt":"2026-12-07T01:02:03.456Z"},"entry":null}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.ev.Body(tt.owner)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b); got != tt.want {
				t.Errorf("body\n got %s\nwant %s", got, tt.want)
			}
			if strings.Contains(string(b), "secret-sub") || !json.Valid(b) {
				t.Errorf("body %s shows the sub, or is not JSON", b)
			}
		})
	}
}
