package main

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"stampduty/shared/function"
	"stampduty/shared/function/fulfillment"
	"stampduty/shared/function/staffauth"
	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
)

// work is what the console's order routes do: the operators' fulfillment
// workflow (orders.Fulfiller, as the ops function has it) and the queue's
// counts.
type work interface {
	Queue(ctx context.Context, status string, test bool, cursor string, size int) ([]stampduty.OpsOrder, string, error)
	fulfillment.Papers
}

// counter counts the live or test orders waiting in a status
// (store.Orders.QueueCount).
type counter interface {
	QueueCount(ctx context.Context, status string, test bool) (int, error)
}

// countsResponse is the queue's counts, one per status: {"data":
// {"<status>": n, ...}, "meta": {}}. A queue page is a
// fulfillment.QueueResponse, as the operators' API answers it.
type countsResponse struct {
	Data map[string]int `json:"data"`
	Meta struct{}       `json:"meta"`
}

const (
	orderPath = "/api/console/orders/{documentId}"
	paperPath = orderPath + "/papers/{fulfillmentDocumentId}"
)

// queueStatuses are the statuses an order waits in (Printed is done).
var queueStatuses = []string{stampduty.StatusPending, stampduty.StatusCreated, stampduty.StatusProcured}

// orderRoutes are the console's order routes, each for an operator or an
// admin (staffauth.AsOperator), served by h.
func (h *handler) orderRoutes() []function.Path {
	paper := fulfillment.Routes{Papers: h.orders} // the operators' API's, by the person's email
	return []function.Path{
		{Method: http.MethodGet, Pattern: "/api/console/queue", Serve: staffauth.AsOperator(h.queue)},
		{Method: http.MethodGet, Pattern: "/api/console/queue/counts", Serve: staffauth.AsOperator(h.counts)},
		{Method: http.MethodGet, Pattern: orderPath, Serve: staffauth.AsOperator(paper.Get)},
		{Method: http.MethodPost, Pattern: orderPath + "/cancel", Serve: staffauth.AsOperator(paper.Cancel)},
		{Method: http.MethodPatch, Pattern: paperPath, Serve: staffauth.AsOperator(paper.Move)},
		{Method: http.MethodPut, Pattern: paperPath + "/certificate", Serve: staffauth.AsOperator(paper.Attach)},
		{Method: http.MethodPost, Pattern: paperPath + "/certificate/upload", Serve: staffauth.AsOperator(paper.Upload)},
	}
}

// countsParam reports the query parameters of the queue's counts.
func countsParam(k string) bool { return k == fulfillment.ModeParam }

// filterPages is how many pages of the operators' queue one console page
// reads at most to fill itself when a filter leaves some rows out.
const filterPages = 4

// queue answers a page of status's queue (default Pending), oldest first
// across callers, the live orders or with mode=test the test orders only
// (fulfillment.ReadMode), as GET /api/ops/live-orders does; state and purpose
// (exact, case-insensitive) keep only the orders of that state or purpose:
// the queue is read a page at a time (up to filterPages) until the page is
// full, and the cursor continues after the last order read.
func (h *handler) queue(r *http.Request, _ string) (any, error) {
	q, size, err := fulfillment.ReadQueue(r, "state", "purpose")
	if err != nil {
		return nil, err
	}
	vals := map[string]string{}
	for _, k := range []string{"status", "state", "purpose", "pagination[cursor]"} {
		if vals[k], _, err = q.Value(k); err != nil {
			return nil, err
		}
	}
	status := vals["status"]
	if status == "" {
		status = stampduty.StatusPending
	}
	test, err := fulfillment.ReadMode(q)
	if err != nil {
		return nil, err
	}
	keep := func(o stampduty.OpsOrder) bool {
		return (vals["state"] == "" || strings.EqualFold(o.StampDuty.State, vals["state"])) &&
			(vals["purpose"] == "" || strings.EqualFold(o.StampDuty.StatePurpose.PurposeName, vals["purpose"]))
	}
	var resp fulfillment.QueueResponse
	resp.Data, resp.Meta.Pagination.PageSize = []stampduty.OpsOrder{}, size
	cursor := vals["pagination[cursor]"]
	filtered := vals["state"] != "" || vals["purpose"] != ""
	for range filterPages {
		page, next, err := h.orders.Queue(r.Context(), status, test, cursor, size)
		if err != nil {
			return nil, err
		}
		for _, o := range page {
			if keep(o) {
				resp.Data = append(resp.Data, o)
			}
		}
		cursor = next
		if !filtered || next == "" || len(resp.Data) >= size {
			break
		}
	}
	if cursor != "" {
		resp.Meta.Pagination.Next = &cursor
	}
	return resp, nil
}

// counts answers how many orders wait in each status of the queue, one
// count per status at once (store.Orders.QueueCount says what it costs):
// the live orders, or with mode=test the test orders only, so a live
// figure never counts a test order.
func (h *handler) counts(r *http.Request, _ string) (any, error) {
	q, err := strapiquery.Parse(r.URL.RawQuery, countsParam)
	if err != nil {
		return nil, err
	}
	test, err := fulfillment.ReadMode(q)
	if err != nil {
		return nil, err
	}
	n := make([]int, len(queueStatuses))
	errs := make([]error, len(queueStatuses))
	var wg sync.WaitGroup
	for i, s := range queueStatuses {
		wg.Go(func() { n[i], errs[i] = h.count.QueueCount(r.Context(), s, test) })
	}
	wg.Wait()
	resp := countsResponse{Data: map[string]int{}}
	for i, s := range queueStatuses {
		if errs[i] != nil {
			return nil, errs[i]
		}
		resp.Data[s] = n[i]
	}
	return resp, nil
}
