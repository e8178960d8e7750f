package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"stampduty/shared/config"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

func TestMain(m *testing.M) { functest.Main(m) }

// otherToken is a token of another caller.
const otherToken = "sdt_OTHERxCALLERxTOKENxFORxTESTSxONLYxxxxxxxxxx"

// resolver answers the names of hosts from a table; any other is not found.
type resolver map[string][]netip.Addr

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// names are the host names the tests' resolver knows.
var names = resolver{
	"hooks.example.com":    {netip.MustParseAddr("93.184.216.34")},
	"internal.example.com": {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.1.2.3")},
}

type registered struct {
	Data webhooks.Registered `json:"data"`
}

type list struct {
	Data []webhooks.Webhook `json:"data"`
}

type attempts struct {
	Data []webhooks.Attempt `json:"data"`
}

type redelivered struct {
	Data webhooks.Redelivered `json:"data"`
}

// caller sends requests with one token.
type caller struct {
	s     *functest.Stack
	token string
}

func (c caller) do(method, path, body string) functest.Response {
	return c.s.Invoke(functest.Request(method, path, "", map[string]string{"authorization": "Bearer " + c.token, "content-type": "application/json"}, body))
}

func (c caller) register(t *testing.T, url string, events ...string) functest.Response {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"url": url, "events": events})
	return c.do("POST", "/api/webhooks", string(b))
}

func (c caller) list(t *testing.T) []webhooks.Webhook {
	t.Helper()
	return functest.OK[list](t, c.do("GET", "/api/webhooks", "")).Data
}

// wantError checks that resp is the error envelope of status with a
// message containing msg.
func wantError(t *testing.T, resp functest.Response, status int, msg string) {
	t.Helper()
	if resp.Status != status {
		t.Fatalf("status %d, want %d: %s", resp.Status, status, resp.Body)
	}
	if e := resp.Error(t); !strings.Contains(e.Error.Message, msg) {
		t.Errorf("message %q, want it to say %q", e.Error.Message, msg)
	}
}

// registry is TestWebhooks's function over one set of tables, which each
// subtest drives in turn, and what the subtests leave for the next.
type registry struct {
	*functest.Stack
	dev, other caller
	// first is the dev caller's first webhook (RegisterShowsTheSecretOnce).
	first webhooks.Registered
	// order is an order of the dev caller and evt an event of it, at at,
	// whose job for first DeliveriesNewestFirst records.
	order   stampduty.Order
	evt, at string
}

// TestWebhooks drives the webhook routes over one set of tables, each
// subtest in turn, then checks the function against template.yaml with
// every call they made.
func TestWebhooks(t *testing.T) {
	s := functest.New(t, "WebhooksFunction", wire)
	functest.AddToken(t, s.Env, otherToken, "other")
	r := &registry{Stack: s, dev: caller{s, localdb.DevToken}, other: caller{s, otherToken}}

	t.Run("ErrWithoutToken", func(t *testing.T) {
		wantError(t, s.Invoke(functest.Request("GET", "/api/webhooks", "", nil, "")), http.StatusForbidden, "")
	})
	t.Run("EventFiles", func(t *testing.T) {
		r.CheckEvents(t, map[string]int{"webhooks-register": 200, "webhooks-register-private": 400, "webhooks-list": 200,
			"webhooks-delete": 404, "webhooks-deliveries": 404, "webhooks-redeliver": 404})
		for _, w := range r.dev.list(t) { // leave the dev caller with none
			if resp := r.dev.do("DELETE", "/api/webhooks/"+w.DocumentID, ""); resp.Status != 200 {
				t.Fatalf("delete: %d %s", resp.Status, resp.Body)
			}
		}
	})
	t.Run("RegisterShowsTheSecretOnce", r.registerShowsTheSecretOnce)
	t.Run("EachCallerSeesOnlyItsOwn", func(t *testing.T) {
		if got := r.other.list(t); len(got) != 0 {
			t.Errorf("another caller lists %+v", got)
		}
		wantError(t, r.other.do("DELETE", "/api/webhooks/"+r.first.DocumentID, ""), 404, "Webhook with the documentId: "+r.first.DocumentID+" cannot be found.")
		wantError(t, r.other.do("GET", "/api/webhooks/"+r.first.DocumentID+"/deliveries", ""), 404, "cannot be found")
	})
	t.Run("ErrBadRegistrations", r.errBadRegistrations)
	t.Run("ErrEleventh", func(t *testing.T) {
		for range webhooks.MaxPerCaller - 1 {
			functest.OK[registered](t, r.dev.register(t, "https://127.0.0.1:8443/hook", stampduty.EventOrderCreated))
		}
		wantError(t, r.dev.register(t, "https://127.0.0.1:8443/hook", stampduty.EventOrderCreated), 409, "at most 10 webhooks")
	})
	t.Run("ConcurrentRegistrationsNeverExceedTen", r.concurrentRegistrationsNeverExceedTen)

	r.order = functest.AddOrders(t, s.Env, localdb.DevOwner, 1)[0]
	r.evt, _ = stampduty.NewEventID()
	r.at = stampduty.FormatTime(time.Now().Add(-time.Hour))
	t.Run("DeliveriesNewestFirst", r.deliveriesNewestFirst)
	t.Run("Redeliver", r.redeliver)
	t.Run("RedeliverOnlyToSubscribers", r.redeliverOnlyToSubscribers)
	t.Run("DeleteKeepsTheDeliveries", r.deleteKeepsTheDeliveries)
	s.CheckTemplate(s.Proxy.All())
	s.CheckRoutes()
}

func (r *registry) registerShowsTheSecretOnce(t *testing.T) {
	r.first = functest.OK[registered](t, r.dev.register(t, "http://127.0.0.1:9/hook", stampduty.EventOrderCreated, stampduty.EventOrderStatusChanged)).Data
	first := r.first
	if !strings.HasPrefix(first.Secret, webhooks.SecretPrefix) || !first.Enabled || first.ID < 1 || len(first.DocumentID) != stampduty.DocumentIDLength {
		t.Errorf("registered %+v", first)
	}
	resp := r.dev.do("GET", "/api/webhooks", "")
	if strings.Contains(resp.Body, first.Secret) || strings.Contains(resp.Body, "secret") {
		t.Errorf("the list shows the secret: %s", resp.Body)
	}
	got := functest.OK[list](t, resp).Data
	if len(got) != 1 || got[0].DocumentID != first.DocumentID || got[0].URL != "http://127.0.0.1:9/hook" ||
		!slices.Equal(got[0].Events, first.Events) {
		t.Errorf("list = %+v, want the one registered", got)
	}
}

func (r *registry) errBadRegistrations(t *testing.T) {
	for _, c := range []struct{ name, body, msg string }{
		{"PrivateAddress", `{"url":"https://10.0.0.1/x","events":["order.created"]}`, "url must not point to a private address"},
		{"Metadata", `{"url":"https://169.254.169.254/latest/meta-data","events":["order.created"]}`, "link-local"},
		{"HTTPToAPublicAddress", `{"url":"http://93.184.216.34/x","events":["order.created"]}`, "url must use https"},
		{"TooLong", `{"url":"https://a.example.com/` + strings.Repeat("x", 2048) + `","events":["order.created"]}`, "at most 2048 characters"},
		{"NotAURL", `{"url":"not a url","events":["order.created"]}`, "url must be an absolute URL"},
		{"UnknownEventType", `{"url":"https://127.0.0.1/x","events":["order.deleted"]}`, "events[0] must be one of"},
		{"NoEvents", `{"url":"https://127.0.0.1/x","events":[]}`, "events must list at least one event type"},
		{"EventNotAString", `{"url":"https://127.0.0.1/x","events":[1]}`, "events[0] must be a string"},
		{"EventsNotAList", `{"url":"https://127.0.0.1/x","events":"order.created"}`, "events must be an array"},
		{"Missing", `{}`, "url is required"},
		{"UnknownField", `{"url":"https://127.0.0.1/x","events":["order.created"],"secret":"mine"}`, "secret is not a field of a webhook"},
		{"NotJSON", `[1]`, "The body must be a JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, r.dev.do("POST", "/api/webhooks", c.body), 400, c.msg)
		})
	}
	if got := r.dev.list(t); len(got) != 1 {
		t.Errorf("refused registrations stored something: %+v", got)
	}
}

func (r *registry) concurrentRegistrationsNeverExceedTen(t *testing.T) {
	const token = "sdt_RACINGxCALLERxTOKENxFORxTESTSxONLYxxxxxxxxx"
	functest.AddToken(t, r.Env, token, "racer")
	racer := caller{r.Stack, token}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
	)
	for range 20 {
		wg.Go(func() {
			resp := racer.register(t, "https://127.0.0.1/hook", stampduty.EventOrderCreated)
			mu.Lock()
			statuses[resp.Status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[200] != 10 || statuses[409] != 10 {
		t.Errorf("statuses %v, want 10 × 200 and 10 × 409", statuses)
	}
	if got := racer.list(t); len(got) != 10 {
		t.Errorf("the caller has %d webhooks", len(got))
	}
}

// deliveriesNewestFirst: the first webhook's job of evt, two failed
// attempts then delivered, is listed newest first, for one GetItem and
// one Query.
func (r *registry) deliveriesNewestFirst(t *testing.T) {
	jobs := r.Env.DB().Deliveries(r.Env.Table("DeliveriesTable"))
	ctx := context.Background()
	next := stampduty.FormatTime(time.Now())
	j := webhooks.Job{Owner: localdb.DevOwner, Webhook: r.first.DocumentID, Pending: stampduty.Pending{ID: r.evt,
		Type: stampduty.EventOrderCreated, At: r.at, Order: r.order}, Seq: webhooks.Seq(r.order.DocumentID, 1, 0), Next: r.at}
	if ok, err := jobs.Put(ctx, j); !ok || err != nil {
		t.Fatal(ok, err)
	}
	j.First = r.at
	for n, st := range []int{500, 0, 200} {
		a := webhooks.Attempt{EventID: r.evt, Type: stampduty.EventOrderCreated, Attempt: n + 1, Status: st,
			At: stampduty.FormatTime(time.Now().Add(time.Duration(n-10) * time.Minute)), DurationMS: int64(10 * n)}
		j.N, j.Next = n+1, next
		if st != 200 {
			a.NextAttemptAt = &next
		} else {
			j.Next, j.Done = "", webhooks.JobDelivered
		}
		if err := jobs.Attempted(ctx, webhooks.AttemptDone{Job: j, Attempt: a}); err != nil {
			t.Fatal(err)
		}
	}
	got := functest.OK[attempts](t, r.dev.do("GET", "/api/webhooks/"+r.first.DocumentID+"/deliveries", "")).Data
	if len(got) != 3 || got[0].Attempt != 3 || got[0].Status != 200 || got[0].NextAttemptAt != nil ||
		got[2].Attempt != 1 || got[2].NextAttemptAt == nil || got[1].Status != 0 || got[1].DurationMS != 10 {
		t.Errorf("deliveries = %+v", got)
	}
	r.Proxy.Take()
	r.dev.do("GET", "/api/webhooks/"+r.first.DocumentID+"/deliveries", "")
	if got, want := r.Env.Operations(r.Proxy.Take()), "GetItem:WebhooksTable=1 Query:DeliveriesTable=1"; got != want {
		t.Errorf("a deliveries list costs %s, want %s", got, want)
	}
}

// redeliver: the first webhook delivered the event (deliveriesNewestFirst);
// the others were registered since: the order.created ones get a job of
// their own.
func (r *registry) redeliver(t *testing.T) {
	jobs := r.Env.DB().Deliveries(r.Env.Table("DeliveriesTable"))
	evt, dev := r.evt, r.dev
	wantError(t, r.other.do("POST", "/api/webhook-events/"+evt+"/redeliver", ""), 404, "Event with the id: "+evt+" cannot be found.")
	wantError(t, dev.do("POST", "/api/webhook-events/evt_nope/redeliver", ""), 404, "cannot be found")
	unknown, _ := stampduty.NewEventID()
	wantError(t, dev.do("POST", "/api/webhook-events/"+unknown+"/redeliver", ""), 404, "cannot be found")

	before := time.Now().Add(-time.Second)
	resp := dev.do("POST", "/api/webhook-events/"+evt+"/redeliver", "")
	if resp.Status != http.StatusAccepted {
		t.Fatalf("status %d: %s", resp.Status, resp.Body)
	}
	var got redelivered
	json.Unmarshal([]byte(resp.Body), &got)
	live := dev.list(t)
	if got.Data.EventID != evt || len(got.Data.Webhooks) != len(live) || got.Data.Webhooks[0] != r.first.DocumentID {
		t.Errorf("redelivered %+v to %d webhooks, want all %d", got.Data, len(got.Data.Webhooks), len(live))
	}
	for _, w := range live {
		j, ok, err := jobs.Job(context.Background(), localdb.DevOwner, w.DocumentID, evt)
		if err != nil || !ok {
			t.Fatalf("%s: no job (%v)", w.DocumentID, err)
		}
		next, _ := time.Parse(stampduty.TimeLayout, j.Next)
		if j.Done != webhooks.JobDue || next.Before(before) || j.ID != evt || j.Order.DocumentID != r.order.DocumentID {
			t.Errorf("%s: job %+v is not due now", w.DocumentID, j)
		}
		if w.DocumentID == r.first.DocumentID && (j.N != 3 || j.First != r.at) {
			t.Errorf("the redelivered job restarted its count: %+v", j)
		}
		if w.DocumentID != r.first.DocumentID && (j.N != 0 || j.First != "") {
			t.Errorf("a new job has attempts: %+v", j)
		}
	}
}

func (r *registry) redeliverOnlyToSubscribers(t *testing.T) {
	jobs := r.Env.DB().Deliveries(r.Env.Table("DeliveriesTable"))
	evt2, _ := stampduty.NewEventID()
	prev, st := stampduty.StatusPending, stampduty.StatusCreated
	ok, err := jobs.Put(context.Background(), webhooks.Job{Owner: localdb.DevOwner, Webhook: r.first.DocumentID, Pending: stampduty.Pending{ID: evt2,
		Type: stampduty.EventOrderStatusChanged, At: r.at, PreviousStatus: &prev, Status: &st, Order: r.order},
		Seq: webhooks.Seq(r.order.DocumentID, 2, 0), First: r.at, N: 7, Done: webhooks.JobGaveUp})
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	resp := r.dev.do("POST", "/api/webhook-events/"+evt2+"/redeliver", "")
	var got redelivered
	json.Unmarshal([]byte(resp.Body), &got)
	if resp.Status != 202 || !slices.Equal(got.Data.Webhooks, []string{r.first.DocumentID}) {
		t.Errorf("%d %s, want only the webhook subscribed to order.status_changed", resp.Status, resp.Body)
	}
}

func (r *registry) deleteKeepsTheDeliveries(t *testing.T) {
	dev, first := r.dev, r.first
	wantError(t, dev.do("DELETE", "/api/webhooks/k3v9xq2m7p4r8t1w5y6z0abc", ""), 404, "cannot be found")
	resp := dev.do("DELETE", "/api/webhooks/"+first.DocumentID, "")
	if resp.Status != 200 || strings.Contains(resp.Body, "secret") {
		t.Fatalf("delete: %d %s", resp.Status, resp.Body)
	}
	if slices.ContainsFunc(dev.list(t), func(w webhooks.Webhook) bool { return w.DocumentID == first.DocumentID }) {
		t.Error("a deleted webhook is still listed")
	}
	if got := functest.OK[attempts](t, dev.do("GET", "/api/webhooks/"+first.DocumentID+"/deliveries", "")).Data; len(got) != 3 {
		t.Errorf("a deleted webhook's deliveries: %+v", got)
	}
	wantError(t, dev.do("DELETE", "/api/webhooks/"+first.DocumentID, ""), 404, "cannot be found")
	functest.OK[registered](t, dev.register(t, "https://127.0.0.1/again", stampduty.EventOrderCreated)) // room for one again
}

// TestOnAWS: the URL rules of a stack on AWS, through the function: https
// only, to public addresses, also after resolving.
func TestOnAWS(t *testing.T) {
	s := functest.New(t, "WebhooksFunction", func(d function.Deps) http.Handler {
		return wireGuard(d, webhooks.Guard{Resolver: names})
	})
	dev := caller{s, localdb.DevToken}
	for _, c := range []struct{ name, url, msg string }{
		{"HTTP", "http://hooks.example.com/x", "url must use https"},
		{"Loopback", "https://127.0.0.1/x", "loopback"},
		{"ResolvesToPrivate", "https://internal.example.com/x", "url must not point to a private address"},
		{"DoesNotResolve", "https://nowhere.example.com/x", "does not resolve"},
	} {
		t.Run("Err"+c.name, func(t *testing.T) {
			wantError(t, dev.register(t, c.url, stampduty.EventOrderCreated), 400, c.msg)
		})
	}
	t.Run("PublicHTTPS", func(t *testing.T) {
		functest.OK[registered](t, dev.register(t, "https://hooks.example.com/x", stampduty.EventOrderCreated))
	})
}

// TestLocalModeIsTheRuntimes: local mode (plain http to loopback) is the
// local runtime's to turn on (config.LocalSignal), not DYNAMODB_ENDPOINT's:
// a function whose environment points at a local engine without the signal
// fails its init, naming both; with it, loopback is allowed but the Lambda
// Runtime API (AWS_LAMBDA_RUNTIME_API) is not.
func TestLocalModeIsTheRuntimes(t *testing.T) {
	t.Run("EndpointWithoutTheSignalFailsInit", func(t *testing.T) {
		getenv := storetest.New(t).Getenv("WebhooksFunction", nil)
		deployed := func(name string) string {
			if name == config.LocalSignal {
				return "" // as on AWS, whatever the template's parameters
			}
			return getenv(name)
		}
		_, err := function.Build(wire, deployed, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), "DYNAMODB_ENDPOINT") || !strings.Contains(err.Error(), config.LocalSignal) {
			t.Errorf("init with DYNAMODB_ENDPOINT set and no %s = %v, want it to fail naming both", config.LocalSignal, err)
		}
	})
	t.Run("SignalAllowsLoopbackButNotTheRuntimeAPI", func(t *testing.T) {
		s := functest.New(t, "WebhooksFunction", wire)
		dev := caller{s, localdb.DevToken}
		api := s.Env.Getenv("WebhooksFunction", nil)("AWS_LAMBDA_RUNTIME_API")
		functest.OK[registered](t, dev.register(t, "http://127.0.0.1:8080/hooks", stampduty.EventOrderCreated))
		wantError(t, dev.register(t, "http://"+api+"/2018-06-01/runtime/invocation/next", stampduty.EventOrderCreated),
			http.StatusBadRequest, "url must not point to a Lambda Runtime API address")
	})
}

// TestFormats: format on the register, its answer and the list
// (webhooks.md, "Receivers written for the original API"): "original" is
// taken for exactly the certificate event, "stampduty" is the default,
// anything else is 400 on format, and another event list for "original"
// is 400 on events.
func TestFormats(t *testing.T) {
	s := functest.New(t, "WebhooksFunction", wire)
	dev := caller{s, localdb.DevToken}
	register := func(body string) functest.Response { return dev.do("POST", "/api/webhooks", body) }
	var original, plain webhooks.Registered
	t.Run("OriginalForTheCertificateEvent", func(t *testing.T) {
		original = functest.OK[registered](t, register(`{"url":"http://127.0.0.1:9/original","events":["order.certificate_attached"],"format":"original"}`)).Data
		if got, want := original.Format, webhooks.FormatOriginal; got != want {
			t.Errorf("format = %q, want %q", got, want)
		}
		if !strings.HasPrefix(original.Secret, webhooks.SecretPrefix) {
			t.Errorf("secret %q", original.Secret)
		}
	})
	t.Run("StampdutyIsTheDefault", func(t *testing.T) {
		plain = functest.OK[registered](t, register(`{"url":"http://127.0.0.1:9/plain","events":["order.created"]}`)).Data
		if got, want := plain.Format, webhooks.FormatStampduty; got != want {
			t.Errorf("format = %q, want %q", got, want)
		}
		named := functest.OK[registered](t, register(`{"url":"http://127.0.0.1:9/named","events":["order.cancelled","order.certificate_attached"],"format":"stampduty"}`)).Data
		if got, want := named.Format, webhooks.FormatStampduty; got != want {
			t.Errorf("format = %q, want %q", got, want)
		}
	})
	t.Run("AccountEventsForStampduty", func(t *testing.T) {
		acct := functest.OK[registered](t, register(`{"url":"http://127.0.0.1:9/account","events":["account.credited","account.low_balance","order.created"]}`)).Data
		if !slices.Equal(acct.Events, []string{"account.credited", "account.low_balance", "order.created"}) || acct.Format != webhooks.FormatStampduty {
			t.Errorf("registered %+v, want the two account events and order.created, stampduty", acct.Webhook)
		}
	})
	t.Run("ListShowsTheFormat", func(t *testing.T) {
		resp := dev.do("GET", "/api/webhooks", "")
		if n := strings.Count(resp.Body, `"format":`); n != 4 {
			t.Errorf("the list names %d formats, want 4: %s", n, resp.Body)
		}
		want := map[string]string{original.DocumentID: webhooks.FormatOriginal, plain.DocumentID: webhooks.FormatStampduty}
		for _, w := range functest.OK[list](t, resp).Data {
			if f, ok := want[w.DocumentID]; ok && w.Format != f {
				t.Errorf("%s listed with format %q, want %q", w.URL, w.Format, f)
			}
		}
	})
	const onlyCert = "events must list exactly order.certificate_attached when format is original"
	for _, c := range []struct{ name, format, events, path, msg string }{
		{"ErrUnknownFormat", `"strapi"`, `["order.certificate_attached"]`, "format", webhooks.FormatRule},
		{"ErrFormatNotAString", `1`, `["order.certificate_attached"]`, "format", webhooks.FormatRule},
		{"ErrFormatNull", `null`, `["order.certificate_attached"]`, "format", webhooks.FormatRule},
		{"ErrFormatEmpty", `""`, `["order.certificate_attached"]`, "format", webhooks.FormatRule},
		{"ErrOriginalForAnotherEvent", `"original"`, `["order.created"]`, "events", onlyCert},
		{"ErrOriginalForMoreEvents", `"original"`, `["order.certificate_attached","order.status_changed"]`, "events", onlyCert},
		{"ErrOriginalForAccountEvents", `"original"`, `["account.credited"]`, "events", onlyCert},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := register(`{"url":"http://127.0.0.1:9/bad","events":` + c.events + `,"format":` + c.format + `}`)
			wantError(t, resp, http.StatusBadRequest, c.msg)
			if got := resp.Error(t).Paths(); !slices.Equal(got, []string{c.path}) {
				t.Errorf("error paths %v, want [%s]", got, c.path)
			}
		})
	}
	if got := dev.list(t); len(got) != 4 {
		t.Errorf("refused registrations stored something: %d webhooks", len(got))
	}
}
