package main

import (
	"net/http"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// registerAccountHook registers a webhook of owner for account.credited,
// its id a fixture id: a reservation of the table's own counter here could
// seed the shard the function later takes, and TestGrants would then never
// see the function's seeding GetItem.
func registerAccountHook(t *testing.T, s *functest.Stack, owner string) webhooks.Registered {
	t.Helper()
	reg := &webhooks.Registry{Hooks: s.Env.DB().Webhooks(s.Env.Table("WebhooksTable")), Jobs: s.Env.DB().Deliveries(s.Env.Table("DeliveriesTable")),
		IDs: s.Env.FixtureIDs(), Guard: webhooks.Guard{Local: true}, Now: time.Now}
	h, err := reg.Register(t.Context(), owner, webhooks.Registration{URL: "http://127.0.0.1:9/hook", Events: []string{accounts.EventCredited}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestACreditTellsTheCallersWebhooks: a credit recorded on the console's
// admin API puts the account.credited delivery job of each subscribed
// webhook (the dispatch function's tests deliver such jobs), under the
// change's event id; an adjustment down tells nothing.
func TestACreditTellsTheCallersWebhooks(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	owner := localdb.DevOwner
	h := registerAccountHook(t, s, owner)
	base := "/api/console/accounts/" + owner
	jobs := s.Env.DB().Deliveries(s.Env.Table("DeliveriesTable"))

	s.Proxy.SetMode(storetest.Account)
	s.Proxy.Take()
	r := answer[recordedResponse](t, sendTo(t, s, adminClaims, http.MethodPost, base+"/credits", "", nil, `{"data":{"amount":"25.00","reference":"UTR-W1"}}`), http.StatusCreated)
	// What the event adds to the credit: one read of the caller's
	// webhooks and one job put per subscriber, 3 WCU as an order event's
	// (the job under 1 KB, and its entries in the due and waiting indexes).
	var hooks, puts int
	var wcu float64
	for _, c := range s.Env.Made(s.Proxy.Take()) {
		switch c.Table {
		case s.Env.Table("WebhooksTable"):
			hooks++
		case s.Env.Table("DeliveriesTable"):
			puts++
			wcu += c.Billed.Write
		}
	}
	t.Logf("the event added %d webhooks read(s), %d job put(s), %.1f WCU", hooks, puts, wcu)
	if hooks != 1 || puts != 1 || wcu > 3 {
		t.Errorf("the event added %d reads of the webhooks, %d puts (%.1f WCU); want 1 and 1 (3 WCU)", hooks, puts, wcu)
	}
	a := functest.Account(t, s.Env, owner)
	id := accounts.EventID(owner, accounts.EventCredited, a.Seq, r.Data.Entry.ID)
	j, ok, err := jobs.Job(t.Context(), owner, h.DocumentID, id)
	if err != nil || !ok {
		t.Fatalf("job of %s: %v, %v; want it put", id, ok, err)
	}
	if j.Type != accounts.EventCredited || j.Done != webhooks.JobDue || len(j.Body) == 0 {
		t.Errorf("job %+v, want a due account.credited with its body", j)
	}

	adj := answer[recordedResponse](t, sendTo(t, s, adminClaims, http.MethodPost, base+"/adjustments", "", nil, `{"data":{"amount":"-5.00","note":"bank charge"}}`), http.StatusCreated)
	a = functest.Account(t, s.Env, owner)
	if _, ok, err := jobs.Job(t.Context(), owner, h.DocumentID, accounts.EventID(owner, accounts.EventCredited, a.Seq, adj.Data.Entry.ID)); err != nil || ok {
		t.Errorf("an adjustment down put a job (%v, %v)", ok, err)
	}
}

// The grants of the account events: the caller's webhooks read, a job put.
func init() {
	exercises["accountevents"] = func(t *testing.T, s *functest.Stack) {
		registerAccountHook(t, s, localdb.DevOwner)
		answer[recordedResponse](t, sendTo(t, s, adminClaims, http.MethodPost, "/api/console/accounts/"+localdb.DevOwner+"/credits", "", nil,
			`{"data":{"amount":"1.00","reference":"GE1"}}`), http.StatusCreated)
	}
}
