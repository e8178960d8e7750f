package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// TestTestAndLiveAreSeparate: an order created with a caller's test token
// belongs to the caller's test principal: it is not counted or listed with
// the caller's live owner, and an idempotency key used by the test token
// does not replay for the live token (test-mode.md, "Test tokens").
func TestTestAndLiveAreSeparate(t *testing.T) {
	c := creating{functest.New(t, "CreateOrderFunction", wire)}
	ctx := context.Background()
	live, test := functest.AddLiveAndTestTokens(t, c.Env, "acme")
	orders := c.Env.DB().Orders(c.Env.Table("OrdersTable"))
	count := func(t *testing.T, owner string) int {
		t.Helper()
		n, err := orders.Count(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	b := body(nil)
	testID := orderID(t, c.keyed("key-both", b, test))
	t.Run("CountedOnlyForTheTestPrincipal", func(t *testing.T) {
		if got, want := count(t, stampduty.TestOwnerOf("acme")), 1; got != want {
			t.Errorf("test principal: %d orders, want %d", got, want)
		}
		if got, want := count(t, "acme"), 0; got != want {
			t.Errorf("live owner: %d orders, want %d", got, want)
		}
	})
	t.Run("NotListedForTheLiveOwner", func(t *testing.T) {
		page, _, err := orders.Page(ctx, "acme", 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 0 {
			t.Errorf("the live owner lists %d orders, want none", len(page))
		}
	})
	t.Run("IdempotencyKeysAreSeparate", func(t *testing.T) {
		liveID := orderID(t, c.keyed("key-both", b, live))
		if liveID == testID {
			t.Errorf("the live token replayed the test token's order %s", testID)
		}
		if got, want := count(t, "acme"), 1; got != want {
			t.Errorf("live owner: %d orders, want %d", got, want)
		}
		if again := orderID(t, c.keyed("key-both", b, test)); again != testID {
			t.Errorf("the test token's key replayed %s, want %s", again, testID)
		}
	})
}

// testOrdersScheduleTheirSteps: an order made with a test token, alone or
// in a batch, has its first step due TestStepSeconds after its createdAt
// (test-mode.md, "Test orders fulfil themselves"); a test:stuck test order
// and every live order, test:cancel included, have none.
func (c creating) testOrdersScheduleTheirSteps(t *testing.T) {
	ctx := context.Background()
	test := auth.TestPrefix + strings.Repeat("S", 43)
	functest.AddTestToken(t, c.Env, test, "stepper")
	owner := stampduty.TestOwnerOf("stepper")
	jobs := c.Env.DB().Deliveries(c.Env.Table("DeliveriesTable"))
	headers := map[string]string{"authorization": "Bearer " + test, "content-type": "application/json"}

	one := orderID(t, c.send(headers, body(nil)))
	stuck := orderID(t, c.send(headers, body(map[string]any{"purchasedBy": stampduty.MagicStuck})))
	live := orderID(t, c.send(functest.DevHeaders, body(map[string]any{"purchasedBy": stampduty.MagicCancel})))
	r := c.Invoke(functest.Request("POST", "/api/live-orders/batch", "", headers,
		`{"data":[`+body(nil)+`,`+body(map[string]any{"purchasedBy": stampduty.MagicStuck})+`]}`))
	if r.Status != http.StatusOK {
		t.Fatalf("batch: status %d: %s", r.Status, r.Body)
	}
	var batch struct {
		Data []struct {
			OrderID string `json:"orderId"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.Body), &batch); err != nil || len(batch.Data) != 2 {
		t.Fatalf("batch answer %s (%v)", r.Body, err)
	}
	every := 5 * time.Second // the template's default TestStepSeconds
	for _, tc := range []struct {
		name, owner, doc string
		steps            bool
	}{
		{"Create", owner, one, true},
		{"CreateStuck", owner, stuck, false},
		{"Live", localdb.DevOwner, live, false},
		{"BatchRow", owner, batch.Data[0].OrderID, true},
		{"BatchRowStuck", owner, batch.Data[1].OrderID, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, ok, err := jobs.Job(ctx, tc.owner, orders.StepsHook, tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.steps {
				t.Fatalf("a step job: %v, want %v", ok, tc.steps)
			}
			if !ok {
				return
			}
			o, err := functest.Fulfiller(c.Env).Get(ctx, tc.owner, tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			created, _ := time.Parse(stampduty.TimeLayout, o.CreatedAt)
			if got, want := j.Next, stampduty.FormatTime(created.Add(every)); got != want {
				t.Errorf("the first step is due at %s, want %s (createdAt %s + %s)", got, want, o.CreatedAt, every)
			}
		})
	}
}

// TestLivemode: the create's answer and every row of a batch's answer say
// the order's mode (test-mode.md): false with a test token, true with a
// live one; a dry run's rows say the mode their orders would have. A
// replay of a key answers the same.
func TestLivemode(t *testing.T) {
	c := creating{functest.New(t, "CreateOrderFunction", wire)}
	live, test := functest.AddLiveAndTestTokens(t, c.Env, "acme")
	for _, tok := range []struct {
		name, secret string
		want         bool
	}{{"Live", live, true}, {"Test", test, false}} {
		t.Run(tok.name+"/Create", func(t *testing.T) {
			for _, r := range []functest.Response{c.keyed("key-"+tok.name, body(nil), tok.secret), c.keyed("key-"+tok.name, body(nil), tok.secret)} {
				var got struct {
					OrderID  string `json:"orderId"`
					Livemode *bool  `json:"livemode"`
				}
				if err := json.Unmarshal([]byte(functest.OK[json.RawMessage](t, r)), &got); err != nil {
					t.Fatal(err)
				}
				if got.Livemode == nil || *got.Livemode != tok.want {
					t.Errorf("create answered %s, want livemode %v", r.Body, tok.want)
				}
			}
		})
		for _, query := range []string{"", "dryRun=true"} {
			t.Run(tok.name+"/Batch/"+query, func(t *testing.T) {
				h := map[string]string{"authorization": "Bearer " + tok.secret, "content-type": "application/json"}
				var got struct {
					Data []struct {
						Status   int   `json:"status"`
						Livemode *bool `json:"livemode"`
					} `json:"data"`
					Meta struct {
						Livemode *bool `json:"livemode"`
					} `json:"meta"`
				}
				raw := functest.OK[json.RawMessage](t, sendBatch(c.Stack, h, query, batchBody(append(validRows("Row", 2), body(map[string]any{"state": 7}))...)))
				if err := json.Unmarshal(raw, &got); err != nil {
					t.Fatal(err)
				}
				if got.Meta.Livemode == nil || *got.Meta.Livemode != tok.want {
					t.Errorf("meta.livemode = %s, want %v", functest.Shown(got.Meta.Livemode), tok.want)
				}
				for i, row := range got.Data {
					switch {
					case row.Status == 200 && (row.Livemode == nil || *row.Livemode != tok.want):
						t.Errorf("row %d: livemode %s, want %v", i, functest.Shown(row.Livemode), tok.want)
					case row.Status != 200 && row.Livemode != nil:
						t.Errorf("refused row %d has livemode %v: no order, no mode", i, *row.Livemode)
					}
				}
			})
		}
	}
}
