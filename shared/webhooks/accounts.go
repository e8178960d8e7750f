package webhooks

// This file holds the account events (accounts.md, Events) as webhooks
// see them: account.credited and account.low_balance beside the order
// events, published straight into delivery jobs by the change that tells
// them (Publisher, the accounts.Sink of the functions that change
// accounts), and delivered, signed and retried, as order events are.

import (
	"context"
	"fmt"
	"slices"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

// AccountEventTypes are the account event types a webhook may listen to.
var AccountEventTypes = []string{accounts.EventCredited, accounts.EventLowBalance}

// EventTypes returns every event type a webhook may listen to: the order
// events, then the account events.
func EventTypes() []string { return append(stampduty.EventTypes(), AccountEventTypes...) }

// ValidEventType reports whether typ is one of EventTypes.
func ValidEventType(typ string) bool {
	return stampduty.ValidEventType(typ) || slices.Contains(AccountEventTypes, typ)
}

// AccountSeq returns the Seq of the account event about owner's account
// at seq of type typ: "account#<seq, 10 digits>#<0 credited, 1 low>". No
// order's documentId is "account", so a webhook's account events are
// ordered among themselves and never wait for an order's events (nor
// order events for them).
func AccountSeq(seq int64, typ string) string {
	i := slices.Index(AccountEventTypes, typ)
	return Seq(accountSeqs, seq, max(i, 0))
}

// accountSeqs is the Seq namespace of account events (OrderOf returns it).
const accountSeqs = "account"

// Publisher is an accounts.Sink: it puts a delivery job of each account
// event into Jobs for every webhook of the account's owner that is enabled,
// of FormatStampduty and subscribed to the event's type, read with one
// strongly consistent read of the owner's webhooks. A job is put once per
// event and webhook (Jobs.Put's condition), so publishing an event again
// (a retried change, the reconciler's repair) writes nothing new, and the
// dispatcher's passes find the jobs due at once.
type Publisher struct {
	Hooks Hooks
	Jobs  Jobs
}

// Publish puts the jobs of ev, an event of owner's account. Its body is
// rendered now, whole: its delivery reads nothing of the ledger.
func (p *Publisher) Publish(ctx context.Context, owner string, ev accounts.Event) error {
	set, err := p.Hooks.Webhooks(ctx, owner)
	if err != nil {
		return fmt.Errorf("publish %s: %w", ev.Type, err)
	}
	var body []byte
	for _, h := range set.Live {
		// An original-format webhook takes only certificates (CheckFormat).
		if h.Format == FormatOriginal || !h.Subscribed(ev.Type) {
			continue
		}
		if body == nil {
			if body, err = ev.Body(owner); err != nil {
				return fmt.Errorf("publish %s: %w", ev.Type, err)
			}
		}
		at := stampduty.FormatTime(ev.CreatedAt)
		j := Job{Owner: owner, Webhook: h.DocumentID, Pending: stampduty.Pending{ID: ev.ID, Type: ev.Type, At: at},
			Seq: AccountSeq(ev.Account.Seq, ev.Type), Next: at, Body: body}
		if _, err := p.Jobs.Put(ctx, j); err != nil {
			return fmt.Errorf("publish %s %s for webhook %s: %w", ev.Type, ev.ID, h.DocumentID, err)
		}
	}
	return nil
}

var _ accounts.Sink = (*Publisher)(nil)
