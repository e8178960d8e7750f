package orders

// This file holds the business metrics the workflows add to the
// invocation's metrics (package metrics, through the request's context):
// orders created and their papers, by state; papers moved, by the status
// moved to; files attached, by kind; quotes answered.
//
// What counts is what was stored: an order counts when its write landed
// (not a dry run, not a refused row, not a replay of an Idempotency-Key,
// which stores nothing); a move or an attach when its conditional write
// landed (not a repeat that changes nothing, not a lost race). A create
// whose answer was lost counts nowhere: the retry that finds its order
// stored (the key's take-over) did not store it. That rare undercount is
// the price of never counting an order twice.
//
// Only live orders count: a caller's test principal's orders
// (stampduty.IsTestOwner), the papers they move themselves and their
// SPECIMEN certificates are left out, so that the dashboard shows the
// business the service does, and a client's test suite run against the
// test mode neither inflates it nor trips an alarm. A Mode dimension was
// not taken: it would double the metrics billed (each dimension value is
// a metric of its own) for numbers no alarm watches; test traffic still
// shows in each function's Requests, Faults and Latency.
//
// A cancel moves no paper: the four statuses have no cancelled one, and a
// cancelled order's papers keep the status they had (papers.md), so a
// cancel adds to no metric here.

import (
	"context"

	"stampduty/shared/metrics"
	"stampduty/shared/stampduty"
)

// File kinds, the values of the metrics.Kind dimension of FilesAttached.
const (
	KindDocument    = "document"
	KindCertificate = "certificate"
)

// stateOf is the State dimension of an order: its state's two-letter code
// (KA for Karnataka), or the state as the order carries it when it has no
// code (never, for an order the checks let through).
func stateOf(o stampduty.Order) string {
	if code, ok := stampduty.StateCode(o.StampDuty.State); ok {
		return code
	}
	return o.StampDuty.State
}

// countCreated adds a stored order of owner to the invocation's metrics:
// one to OrdersCreated and its quantity to PapersOrdered, by state.
func countCreated(ctx context.Context, owner string, o stampduty.Order) {
	if stampduty.IsTestOwner(owner) {
		return
	}
	state := stateOf(o)
	metrics.Add(ctx, metrics.OrdersCreated, 1, state)
	metrics.Add(ctx, metrics.PapersOrdered, float64(max(o.StampDuty.Quantity, 1)), state)
}

// countChange adds a stored change of owner's order, from old to next, to
// the invocation's metrics: each paper whose status changed to PapersMoved
// by its new status, a new caller's document and each new certificate to
// FilesAttached by kind.
func countChange(ctx context.Context, owner string, old, next stampduty.Order) {
	if stampduty.IsTestOwner(owner) {
		return
	}
	for _, ff := range next.Fulfillments {
		was := stampduty.Fulfillment{}
		if i := old.Fulfillment(ff.DocumentID); i >= 0 {
			was = old.Fulfillments[i]
		}
		if ff.Status != was.Status {
			metrics.Add(ctx, metrics.PapersMoved, 1, ff.Status)
		}
		if newFile(was.CertificateFile, ff.CertificateFile) {
			metrics.Add(ctx, metrics.FilesAttached, 1, KindCertificate)
		}
	}
	if newFile(old.StampDuty.UploadedDocument, next.StampDuty.UploadedDocument) {
		metrics.Add(ctx, metrics.FilesAttached, 1, KindDocument)
	}
}

// newFile reports whether next is a file other than was.
func newFile(was, next *stampduty.File) bool {
	return next != nil && (was == nil || was.Key != next.Key)
}
