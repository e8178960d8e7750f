package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// Section 14's batches: batchRuns batches of batchRows rows each, one
// after another, through the create-order function on the load stack
// (POST /api/live-orders/batch, each with its own Idempotency-Key), by a
// caller listening to order.created, so each row stores its event.
const (
	batchRows  = 100
	batchRuns  = 5
	batchOwner = "load-batch"
)

// batchRun is the batches' outcome: each timed batch's wall time and
// DynamoDB requests (the SDK's retries left out), the status of every
// answer and the rows created, and one more batch's units, accounted.
type batchRun struct {
	wall    durations
	calls   []int
	status  map[int]int
	created int
	units   storetest.Capacity
}

// measureBatches times the batches, then accounts one more.
func (s *loadStack) measureBatches() (batchRun, error) {
	r := batchRun{status: map[int]int{}}
	db := store.New(localdb.Client(s.b.endpoint))
	if err := register(s.b.ctx, db, func(id string) string { return s.names[id] }, batchOwner, "http://127.0.0.1:9/never", stampduty.EventOrderCreated); err != nil {
		return r, err
	}
	say("load: %d batches of %d rows through the create-order function…\n", batchRuns, batchRows)
	if _, _, err := s.sendBatch(batchOwner, "batch-warm", 3); err != nil { // the webhooks read and the id block, as a warm instance has them
		return r, err
	}
	for i := range batchRuns {
		s.proxy.Take()
		t0 := time.Now()
		code, created, err := s.sendBatch(batchOwner, fmt.Sprintf("batch-%d", i), batchRows)
		if err != nil {
			return r, err
		}
		r.wall = append(r.wall, time.Since(t0))
		r.calls = append(r.calls, len(storetest.Requests(s.proxy.Take())))
		r.status[code]++
		r.created += created
	}
	calls, err := within(s.proxy, storetest.Account, func() error {
		code, _, err := s.sendBatch(batchOwner, "batch-accounted", batchRows)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("load: the accounted batch answered %d", code)
		}
		return err
	})
	if err != nil {
		return r, err
	}
	for _, c := range calls {
		r.units = r.units.Add(c.Billed)
	}
	return r, nil
}

// sendBatch sends owner's batch of n copies of the create-order request's
// body with an Idempotency-Key, and returns the answer's status and the
// rows it created.
func (s *loadStack) sendBatch(owner, key string, n int) (int, int, error) {
	const fn, path = "CreateOrderFunction", "/api/live-orders/batch"
	base := s.base[fn]
	if base.IsBase64Encoded {
		return 0, 0, fmt.Errorf("load: the create-order request's body is base64")
	}
	ev := base
	ev.Headers = map[string]string{}
	for k, v := range base.Headers {
		ev.Headers[k] = v
	}
	ev.Headers["authorization"] = "Bearer " + s.tokens[owner]
	ev.Headers["idempotency-key"] = key
	ev.RawPath, ev.RouteKey = path, "POST "+path
	ev.RequestContext.HTTP.Path, ev.RequestContext.RouteKey = path, "POST "+path
	ev.Body = `{"data":[` + strings.Join(slices.Repeat([]string{base.Body}, n), ",") + `]}`
	payload, err := json.Marshal(ev)
	if err != nil {
		return 0, 0, err
	}
	out, err := s.pools[fn].Invoke(s.b.ctx, payload)
	if err != nil {
		return 0, 0, s.b.withLog(err, fn)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return 0, 0, fmt.Errorf("%s: response %.200q is no API Gateway response", fn, out)
	}
	var body struct {
		Meta struct {
			Created int `json:"created"`
			Failed  int `json:"failed"`
		} `json:"meta"`
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
			return 0, 0, fmt.Errorf("load: batch answer %.200q: %w", resp.Body, err)
		}
		if body.Meta.Failed != 0 {
			return 0, 0, fmt.Errorf("load: %d rows of a batch failed: %.300s", body.Meta.Failed, resp.Body)
		}
	}
	return resp.StatusCode, body.Meta.Created, nil
}

// addBatchRows adds the batches' row to section 14.
func (b *bench) addBatchRows(t *table) {
	r := b.load.batch
	if len(r.wall) == 0 {
		return
	}
	calls := slices.Clone(r.calls)
	slices.Sort(calls)
	med, worst := r.wall.median(), slices.Max(r.wall)
	fiveXX := 0
	for code, n := range r.status {
		if code >= 500 {
			fiveXX += n
		}
	}
	perRow := float64(calls[len(calls)/2]) / batchRows
	t.add(fmt.Sprintf("create-order batch of %d rows (POST /api/live-orders/batch, Idempotency-Key, caller listening)", batchRows), fmt.Sprint(len(r.wall)), fmt.Sprint(fiveXX),
		ms(med), fmt.Sprint(calls[len(calls)/2]), num(r.units.Read, 1),
		fmt.Sprintf("%s s a batch (worst %s; bar ≤ 10), %s ms a row; %s calls a row (bar ≤ 2 + constant); %s RCU, %s WCU a row; %d rows created",
			num(med.Seconds(), 2), num(worst.Seconds(), 2), num(float64(med)/float64(time.Millisecond)/batchRows, 2), num(perRow, 2),
			num(r.units.Read/batchRows, 2), num(r.units.Write/batchRows, 2), r.created))
	t.note("batches: %d of %d copies of the create-order request's body, one after another, each with its own Idempotency-Key (claim, plan, complete: 3 writes a batch) by a caller with a webhook on order.created (each row stores its event: 4 WCU an order), after a 3-row batch that warms the instance; DynamoDB calls are the median batch's requests at the wire (the SDK's retries left out), units one more batch accounted by DynamoDB's rules", batchRuns, batchRows)
}
