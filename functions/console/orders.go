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
	Queue(ctx context.Context, status, cursor string, size int) ([]stampduty.OpsOrder, string, error)
	OpsGet(ctx context.Context, doc string) (stampduty.OpsOrder, error)
	fulfillment.Papers
}

// counter counts the orders waiting in a status (store.Orders.QueueCount).
type counter interface {
	QueueCount(ctx context.Context, status string) (int, error)
}

// The console's answers: a queue page, the queue's counts, one order.
type (
	queueResponse struct {
		Data []stampduty.OpsOrder `json:"data"`
		Meta struct {
			Pagination struct {
				PageSize int     `json:"pageSize"`
				Next     *string `json:"next"`
			} `json:"pagination"`
		} `json:"meta"`
	}
	countsResponse struct {
		Data map[string]int `json:"data"`
		Meta struct{}       `json:"meta"`
	}
	// orderResponse has "meta" on reads only, as the operators' API.
	orderResponse struct {
		Data stampduty.OpsOrder `json:"data"`
		Meta *struct{}          `json:"meta,omitempty"`
	}
)

const (
	orderPath = "/api/console/orders/{documentId}"
	paperPath = orderPath + "/papers/{fulfillmentDocumentId}"
)

// queueStatuses are the statuses an order waits in (Printed is done).
var queueStatuses = []string{stampduty.StatusPending, stampduty.StatusCreated, stampduty.StatusProcured}

// orderRoutes are the console's order routes, each for an operator or an
// admin (staffauth.AsOperator), served by h.
func (h *handler) orderRoutes() []function.Path {
	return []function.Path{
		{Method: http.MethodGet, Pattern: "/api/console/queue", Serve: staffauth.AsOperator(h.queue)},
		{Method: http.MethodGet, Pattern: "/api/console/queue/counts", Serve: staffauth.AsOperator(h.counts)},
		{Method: http.MethodGet, Pattern: orderPath, Serve: staffauth.AsOperator(h.get)},
		{Method: http.MethodPost, Pattern: orderPath + "/cancel", Serve: staffauth.AsOperator(h.cancel)},
		{Method: http.MethodPatch, Pattern: paperPath, Serve: staffauth.AsOperator(h.advance)},
		{Method: http.MethodPut, Pattern: paperPath + "/certificate", Serve: staffauth.AsOperator(h.attach)},
		{Method: http.MethodPost, Pattern: paperPath + "/certificate/upload", Serve: staffauth.AsOperator(h.upload)},
	}
}

// queueParam reports the query parameters of the queue.
func queueParam(k string) bool {
	return k == "status" || k == "state" || k == "purpose" || k == "pagination[pageSize]" || k == "pagination[cursor]"
}

// filterPages is how many pages of the operators' queue one console page
// reads at most to fill itself when a filter leaves some rows out.
const filterPages = 4

// queue answers a page of status's queue (default Pending), oldest first
// across callers, as GET /api/ops/live-orders does; state and purpose
// (exact, case-insensitive) keep only the orders of that state or purpose:
// the queue is read a page at a time (up to filterPages) until the page is
// full, and the cursor continues after the last order read.
func (h *handler) queue(r *http.Request, _ string) (any, error) {
	q, err := strapiquery.Parse(r.URL.RawQuery, queueParam)
	if err != nil {
		return nil, err
	}
	_, size, err := q.Page("", "pagination[pageSize]")
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
	keep := func(o stampduty.OpsOrder) bool {
		return (vals["state"] == "" || strings.EqualFold(o.StampDuty.State, vals["state"])) &&
			(vals["purpose"] == "" || strings.EqualFold(o.StampDuty.StatePurpose.PurposeName, vals["purpose"]))
	}
	var resp queueResponse
	resp.Data, resp.Meta.Pagination.PageSize = []stampduty.OpsOrder{}, size
	cursor := vals["pagination[cursor]"]
	filtered := vals["state"] != "" || vals["purpose"] != ""
	for range filterPages {
		page, next, err := h.orders.Queue(r.Context(), status, cursor, size)
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
// count per status at once (store.Orders.QueueCount says what it costs).
func (h *handler) counts(r *http.Request, _ string) (any, error) {
	n := make([]int, len(queueStatuses))
	errs := make([]error, len(queueStatuses))
	var wg sync.WaitGroup
	for i, s := range queueStatuses {
		wg.Go(func() { n[i], errs[i] = h.count.QueueCount(r.Context(), s) })
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

// get answers one order as operators see it.
func (h *handler) get(r *http.Request, _ string) (any, error) {
	o, err := h.orders.OpsGet(r.Context(), r.PathValue("documentId"))
	return orderResponse{Data: o, Meta: &struct{}{}}, err
}

// advance moves a paper as the body asks (fulfillment.Move), by the
// signed-in person's email.
func (h *handler) advance(r *http.Request, by string) (any, error) {
	return written(fulfillment.Move(r, h.orders, by))
}

// attach stores the body, a PDF, as the paper's certificate; a JSON
// body {"upload": "<id>"} attaches the file of that upload instead.
func (h *handler) attach(r *http.Request, _ string) (any, error) {
	return written(fulfillment.Attach(r, h.orders))
}

// upload makes a pre-signed upload of the paper's certificate.
func (h *handler) upload(r *http.Request, _ string) (any, error) {
	return fulfillment.CertificateUpload(r, h.orders)
}

// cancel cancels the order for the reason the body gives ({"reason":
// "…"}, stampduty.CancelReason) and answers with the order as operators
// see it, as the other operator writes do: cancelled now, or as an
// earlier cancel left it.
func (h *handler) cancel(r *http.Request, _ string) (any, error) {
	return written(fulfillment.Cancel(r, h.orders))
}

// written answers a write with the order as operators see it.
func written(o stampduty.OpsOrder, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return orderResponse{Data: o}, nil
}
