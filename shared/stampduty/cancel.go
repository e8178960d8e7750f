package stampduty

// This file holds the cancellation of an order (papers.md, Cancellation):
// who may cancel it and when, the operator's reason, and what a cancelled
// order refuses.

import (
	"fmt"
	"strings"
)

// Who cancelled an order: Cancellation.By.
const (
	ByCaller   = "caller"
	ByOperator = "operator"
)

// Cancellation is who cancelled an order and why, as orders show it.
// Reason is the operator's, nil (null) for a caller's cancel. The item
// stores it under the short names of its dynamodbav tags.
type Cancellation struct {
	By     string  `json:"by" dynamodbav:"by"`
	Reason *string `json:"reason" dynamodbav:"r,omitempty"`
}

// The refusals of a cancel. MsgCallerCancel is papers.md's; the
// operator's is this service's: papers.md says only "409 otherwise".
const (
	MsgCallerCancel   = "An order can be cancelled only while every fulfillment is Pending."
	MsgOperatorCancel = "An order can be cancelled by an operator only while no fulfillment is Procured or Printed."
)

// Cancelled reports whether o is cancelled.
func (o Order) Cancelled() bool { return o.CancelledAt != nil }

// Cancel returns o cancelled at at (TimeLayout) by who (ByCaller, or
// ByOperator with the reason CancelReason checked), with updatedAt at, and
// whether anything changed. The rules, papers.md's:
//
//   - an order already cancelled stays as it is, whoever asks and why: the
//     answer is the order as the first cancel left it, nothing changes;
//   - a caller cancels while every fulfillment is Pending (ECONFLICT
//     MsgCallerCancel otherwise);
//   - an operator cancels while no fulfillment is Procured or Printed
//     (ECONFLICT MsgOperatorCancel otherwise): a Created paper's e-stamp
//     request was raised but nothing was issued yet.
func (o Order) Cancel(who string, reason *string, at string) (Order, bool, error) {
	if o.Cancelled() {
		return o, false, nil
	}
	switch who {
	case ByCaller:
		for _, f := range o.Fulfillments {
			if f.Status != StatusPending {
				return o, false, Errorf(ECONFLICT, MsgCallerCancel)
			}
		}
		reason = nil
	case ByOperator:
		for _, f := range o.Fulfillments {
			if StatusRank(f.Status) >= StatusRank(StatusProcured) {
				return o, false, Errorf(ECONFLICT, MsgOperatorCancel)
			}
		}
		if reason == nil {
			return o, false, Internal(fmt.Errorf("cancel order %s: an operator's cancel without a reason", o.DocumentID))
		}
	default:
		return o, false, Internal(fmt.Errorf("cancel order %s: by %q", o.DocumentID, who))
	}
	o.CancelledAt, o.Cancellation, o.UpdatedAt = &at, &Cancellation{By: who, Reason: reason}, at
	return o, true, nil
}

// Waits reports whether o waits in the operators' queue of status: while
// it is not cancelled, when one of its fulfillments is in status
// (papers.md: a cancelled order leaves the queue, whatever its papers'
// items still say).
func (o Order) Waits(status string) bool {
	if o.Cancelled() {
		return false
	}
	for _, f := range o.Fulfillments {
		if f.Status == status {
			return true
		}
	}
	return false
}

// What a cancelled order refuses, as NotCancelled names it.
const (
	CancelledMove        = "its fulfillments can no longer move"
	CancelledCertificate = "its fulfillments can no longer take a certificate"
	CancelledDocument    = "it can no longer take a document"
)

// NotCancelled reports as an error that o is cancelled and so refuses
// what (CancelledMove, CancelledCertificate or CancelledDocument):
// ECONFLICT "The order is cancelled: <what>."; nil while it is not.
func (o Order) NotCancelled(what string) error {
	if o.Cancelled() {
		return Errorf(ECONFLICT, "The order is cancelled: %s.", what)
	}
	return nil
}

// cancelReasonField is the one member of an operator's cancel body.
const cancelReasonField = "reason"

// CancelReason checks an operator's cancel body as the edge decoded it:
// exactly one member, reason, a string of 1 to MaxFreeTextLength (200)
// printable characters (printable) that is not only spaces. Every failing
// member is reported at once, as EINVALID: reason absent or null
// ("reason is a required field"), not a string, empty or blank, too long
// or unprintable (a lone surrogate among them); any other member ("<name>
// is not a field of a cancellation"). The reason is kept as sent.
func CancelReason(fields []Field) (string, error) {
	var (
		errs   []FieldError
		reason string
		seen   bool
	)
	fail := func(path, msg string) { errs = append(errs, FieldError{Path: path, Message: path + msg}) }
	for _, f := range fields {
		if f.Name != cancelReasonField {
			fail(f.Name, " is not a field of a cancellation")
			continue
		}
		seen = true
		switch v := f.Value; {
		case v.Kind == Absent || v.Kind == Null:
			fail(cancelReasonField, msgRequired)
		case v.Kind != String:
			fail(cancelReasonField, msgMustBeString)
		case strings.Trim(v.Text, " ") == "":
			fail(cancelReasonField, msgNotEmpty)
		case v.LoneSurrogate:
			fail(cancelReasonField, msgUnprintable)
		default:
			if msg := checkFreeText(v.Text); msg != "" {
				fail(cancelReasonField, msg)
			} else {
				reason = v.Text
			}
		}
	}
	if !seen {
		errs = append([]FieldError{{Path: cancelReasonField, Message: cancelReasonField + msgRequired}}, errs...)
	}
	if errs != nil {
		return "", Invalid(errs)
	}
	return reason, nil
}
