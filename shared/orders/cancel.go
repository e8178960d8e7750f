package orders

// This file holds the cancellation of an order (papers.md, Cancellation):
// by its caller, or by an operator with a reason. The rule is the
// domain's (stampduty.Order.Cancel); the write is the one conditional
// write of every change (update), with the order.cancelled event.

import (
	"context"

	"stampduty/shared/stampduty"
)

// Cancel cancels owner's order doc as its caller (DELETE
// /api/live-orders/{documentId}): while every fulfillment is Pending
// (ECONFLICT stampduty.MsgCallerCancel otherwise). Another caller's or an
// unknown order is not found, as for the one-order read (Get), which it
// reads the same way. An order already cancelled, by whomever, is answered
// as it is and nothing is written. The cancel is stored with one
// conditional write, with an order.cancelled event when owner listens to
// it; when another change wins the race for the write, what is stored
// then decides (update): a concurrent cancel's order is the answer, a
// paper moved meanwhile is ECONFLICT.
func (f *Fulfiller) Cancel(ctx context.Context, owner, doc string) (stampduty.Order, error) {
	s, err := f.owned(ctx, owner, doc)
	if err != nil {
		return stampduty.Order{}, err
	}
	if s, err = f.cancel(ctx, s, stampduty.ByCaller, nil); err != nil {
		return stampduty.Order{}, err
	}
	return s.Order.ForCaller(), nil
}

// OpsCancel cancels order doc as an operator (POST
// /api/ops/live-orders/{documentId}/cancel), for reason (checked by
// stampduty.CancelReason): while no fulfillment is Procured or Printed
// (ECONFLICT stampduty.MsgOperatorCancel otherwise); an order already
// cancelled is answered as it is, as Cancel does. It returns the order as
// operators see it, with fresh download addresses.
func (f *Fulfiller) OpsCancel(ctx context.Context, doc, reason string) (stampduty.OpsOrder, error) {
	s, err := f.find(ctx, "", doc)
	if err != nil {
		return stampduty.OpsOrder{}, err
	}
	if s, err = f.cancel(ctx, s, stampduty.ByOperator, &reason); err != nil {
		return stampduty.OpsOrder{}, err
	}
	return s.OpsOrder, f.Files.Sign(ctx, &s.Order)
}

// cancel cancels s's order by who, with reason.
func (f *Fulfiller) cancel(ctx context.Context, s Stored, who string, reason *string) (Stored, error) {
	at := stampduty.FormatTime(f.now())
	done, landed, err := f.write(ctx, s, func(o stampduty.Order) (stampduty.Order, bool, error) {
		return o.Cancel(who, reason, at)
	}, told(stampduty.EventOrderCancelled, ""), nil)
	if err != nil || !landed || f.Payments == nil {
		return done, err
	}
	// The cancel that landed releases what the order still holds; one
	// that fails after the cancel is stored is made by the reconciler.
	return done, f.Payments.Release(ctx, done.Owner, done.Order, who)
}
