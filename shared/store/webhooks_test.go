package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

func TestWebhooksItem(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	hooks := env.DB().Webhooks(env.Table("WebhooksTable"))
	hook := webhooks.Webhook{ID: 7, DocumentID: "k3v9xq2m7p4r8t1w5y6z0abc", URL: "https://hooks.example.com/x",
		Events: []string{stampduty.EventOrderCreated}, Format: webhooks.FormatStampduty, Enabled: true, CreatedAt: "2026-11-23T10:00:00.000Z",
		Secret: webhooks.NewSecret(), Owner: "acme"}

	t.Run("NoneStored", func(t *testing.T) {
		s, err := hooks.Webhooks(ctx, "acme")
		if err != nil || s.V != 0 || s.Live != nil || s.Gone != nil {
			t.Errorf("Webhooks = %+v, %v, want the empty set at version 0", s, err)
		}
	})
	t.Run("SavedAsReadBack", func(t *testing.T) {
		gone := hook
		gone.DocumentID, gone.Secret = "a000000000000000000000000", "whsec_must_not_be_kept"
		if err := hooks.SaveWebhooks(ctx, "acme", webhooks.Set{Live: []webhooks.Webhook{hook}, Gone: []webhooks.Gone{{Webhook: gone, Deleted: "2026-11-23T11:00:00.000Z"}}}, 0); err != nil {
			t.Fatal(err)
		}
		s, err := hooks.Webhooks(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		gone.Secret = ""
		want := webhooks.Set{V: 1, Live: []webhooks.Webhook{hook}, Gone: []webhooks.Gone{{Webhook: gone, Deleted: "2026-11-23T11:00:00.000Z"}}}
		if !reflect.DeepEqual(s, want) {
			t.Errorf("read back %+v, want %+v", s, want)
		}
	})
	t.Run("FormatStoredOnlyWhenNotTheDefault", func(t *testing.T) {
		// A caller's item as stored before formats: its webhook has no fmt.
		old := avM(map[string]types.AttributeValue{"id": avN("3"), "doc": avS("b000000000000000000000000"), "url": avS("https://hooks.example.com/old"),
			"ev": avL(avS(stampduty.EventOrderCreated)), "on": avBool(true), "at": avS("2026-11-20T10:00:00.000Z"), "sec": avS("whsec_old")})
		putItem(t, env, "WebhooksTable", map[string]types.AttributeValue{"owner": avS("before"), "v": avN("1"), "hooks": avL(old)})
		s, err := hooks.Webhooks(ctx, "before")
		if err != nil || len(s.Live) != 1 {
			t.Fatal(s, err)
		}
		if got, want := s.Live[0].Format, webhooks.FormatStampduty; got != want {
			t.Errorf("a webhook stored without a format reads as %q, want %q", got, want)
		}
		orig := hook
		orig.DocumentID, orig.Format, orig.Events = "c000000000000000000000000", webhooks.FormatOriginal, []string{stampduty.EventOrderCertificateAttached}
		if err := hooks.SaveWebhooks(ctx, "before", webhooks.Set{Live: append(s.Live, orig)}, s.V); err != nil {
			t.Fatal(err)
		}
		stored := getItem(t, env, "WebhooksTable", map[string]types.AttributeValue{"owner": avS("before")})["hooks"].(*types.AttributeValueMemberL).Value
		if got, want := render(stored[0]), render(old); got != want {
			t.Errorf("the rewrite changed the webhook stored before formats:\n%s\nwant\n%s", got, want)
		}
		if f, ok := stored[1].(*types.AttributeValueMemberM).Value["fmt"]; !ok || render(f) != render(avS(webhooks.FormatOriginal)) {
			t.Errorf("the original webhook is stored as %s, want fmt %q", render(stored[1]), webhooks.FormatOriginal)
		}
		if s, err = hooks.Webhooks(ctx, "before"); err != nil || len(s.Live) != 2 || s.Live[1].Format != webhooks.FormatOriginal || s.Live[0].Format != webhooks.FormatStampduty {
			t.Errorf("read back %+v, %v", s.Live, err)
		}
	})
	t.Run("ErrLostRace", func(t *testing.T) {
		for _, v := range []int64{0, 2} { // none stored: the first save's; a version not stored
			if err := hooks.SaveWebhooks(ctx, "acme", webhooks.Set{}, v); !errors.Is(err, webhooks.ErrRaced) {
				t.Errorf("save at version %d: %v, want ErrRaced", v, err)
			}
		}
		if err := hooks.SaveWebhooks(ctx, "acme", webhooks.Set{}, 1); err != nil {
			t.Fatal(err)
		}
		if s, _ := hooks.Webhooks(ctx, "acme"); s.V != 2 || len(s.Live) != 0 {
			t.Errorf("after the save at version 1: %+v", s)
		}
	})
}

// TestFailingReads: the reads behind stampctl webhooks failing — the jobs
// not done after enough attempts (a Query of the due index, never a Scan
// of the deliveries) and the disabled webhooks of every caller.
func TestFailingReads(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	db, proxy := env.ProxiedDB()
	del := db.Deliveries(env.Table("DeliveriesTable"))
	hooks := db.Webhooks(env.Table("WebhooksTable"))
	order := newOrder(t, db.IDs(env.Table("CountersTable"), 30), 1)
	// onlyCalls runs read and fails t unless its DynamoDB calls were want.
	onlyCalls := func(t *testing.T, want string, read func() error) {
		t.Helper()
		proxy.Take()
		if err := read(); err != nil {
			t.Fatal(err)
		}
		if got := env.Operations(proxy.Take()); got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
	}

	// Jobs of two webhooks: n attempts, done or not.
	type seed struct {
		hook string
		n    int
		done string
	}
	seeds := []seed{{"w1", 0, webhooks.JobDue}, {"w1", 1, webhooks.JobDue}, {"w1", 3, webhooks.JobDue}, {"w2", 7, webhooks.JobGaveUp},
		{"w2", 2, webhooks.JobDelivered}, {"w2", 2, webhooks.JobDue}, {"w1", 5, webhooks.JobDisabled}}
	want := map[int][]string{} // by min attempts: the event ids
	for i, s := range seeds {
		j := webhooks.Job{Owner: "acme", Webhook: s.hook, Pending: stampduty.Pending{ID: fmt.Sprintf("evt_e%023d", i),
			Type: stampduty.EventOrderCreated, At: order.CreatedAt, Order: order}, Seq: webhooks.Seq(order.DocumentID, int64(i+1), 0),
			N: s.n, Done: s.done}
		if s.n > 0 {
			j.First = "2026-11-23T10:00:00.000Z"
		}
		if s.done == webhooks.JobDue {
			j.Next = "2026-11-23T10:00:30.000Z"
		}
		if ok, err := del.Put(ctx, j); !ok || err != nil {
			t.Fatal(ok, err)
		}
		for min := 0; min <= 4; min++ {
			if s.done == webhooks.JobDue && s.n >= min {
				want[min] = append(want[min], j.ID)
			}
		}
	}

	t.Run("JobsNotDoneWithEnoughAttempts", func(t *testing.T) {
		for min := 0; min <= 4; min++ {
			var js []webhooks.Job
			onlyCalls(t, "Query:DeliveriesTable/index/due=17", func() (err error) { js, err = del.Failing(ctx, min); return err })
			var got []string
			for _, j := range js {
				got = append(got, j.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, want[min]) {
				t.Errorf("Failing(%d) = %v, want %v", min, got, want[min])
			}
		}
	})
	t.Run("AJobAsPut", func(t *testing.T) {
		js, err := del.Failing(ctx, 3)
		if err != nil || len(js) != 1 {
			t.Fatal(js, err)
		}
		stored, _, err := del.Job(ctx, "acme", "w1", js[0].ID)
		if err != nil || !reflect.DeepEqual(js[0], stored) {
			t.Errorf("Failing's job %+v\nwant %+v (%v)", js[0], stored, err)
		}
	})

	t.Run("DisabledWebhooksOfEveryCaller", func(t *testing.T) {
		hook := func(id int64, enabled bool) webhooks.Webhook {
			return webhooks.Webhook{ID: id, DocumentID: fmt.Sprintf("w%024d", id), URL: fmt.Sprintf("https://h.example.com/%d", id),
				Events: []string{stampduty.EventOrderCreated}, Enabled: enabled, CreatedAt: "2026-11-23T10:00:00.000Z", Secret: webhooks.NewSecret()}
		}
		var full []webhooks.Webhook // ten webhooks, the last disabled: the filter looks past the first
		for i := range webhooks.MaxPerCaller {
			full = append(full, hook(int64(100+i), i != webhooks.MaxPerCaller-1))
		}
		for owner, set := range map[string]webhooks.Set{
			"acme": {Live: full},
			"bolt": {Live: []webhooks.Webhook{hook(1, false), hook(2, true), hook(3, false)}},
			"carl": {Live: []webhooks.Webhook{hook(4, true)}, Gone: []webhooks.Gone{{Webhook: hook(5, false), Deleted: "2026-11-23T11:00:00.000Z"}}},
			"dora": {},
		} {
			if err := hooks.SaveWebhooks(ctx, owner, set, 0); err != nil {
				t.Fatal(err)
			}
		}
		var ws []webhooks.Webhook
		onlyCalls(t, "Scan:WebhooksTable=1", func() (err error) { ws, err = hooks.Disabled(ctx); return err })
		var got []string
		for _, w := range ws {
			got = append(got, fmt.Sprintf("%s/%d/%v", w.Owner, w.ID, w.Enabled))
			if w.Secret != "" || w.URL == "" {
				t.Errorf("disabled webhook %+v: want its URL and no secret", w)
			}
		}
		if want := []string{"acme/109/false", "bolt/1/false", "bolt/3/false"}; !slices.Equal(got, want) {
			t.Errorf("Disabled = %v, want %v (not the deleted one of carl)", got, want)
		}
	})
}
