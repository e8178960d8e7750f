package accounts

// The JSON of an account event as a webhook receives it (accounts.md,
// Events): {"id", "type", "createdAt", "livemode", "data": {"account",
// "entry"}}, the account as GET /api/account answers it and the entry as
// the entries' list shows it. Rendered once, when the event is published:
// nothing in it changes afterwards (the signature is made per attempt).

import (
	"encoding/json"
	"time"

	"stampduty/shared/stampduty"
)

// AccountJSON is an account as GET /api/account answers it.
type AccountJSON struct {
	Balance             string  `json:"balance"`
	Held                string  `json:"held"`
	Available           *string `json:"available"`
	CreditLimit         *string `json:"creditLimit"`
	LowBalanceThreshold *string `json:"lowBalanceThreshold"`
	Currency            string  `json:"currency"`
	Livemode            bool    `json:"livemode"`
	// UpdatedAt is in stampduty.TimeLayout, nil for an account never changed.
	UpdatedAt *string `json:"updatedAt"`
}

// EntryJSON is a ledger entry as accounts.md shows it; an admin's sub is
// never in it.
type EntryJSON struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Amount       string  `json:"amount"`
	BalanceAfter string  `json:"balanceAfter"`
	HeldAfter    string  `json:"heldAfter"`
	Order        *string `json:"order"`
	Fulfillment  *string `json:"fulfillment"`
	Reference    *string `json:"reference"`
	Note         *string `json:"note"`
	By           string  `json:"by"`
	CreatedAt    string  `json:"createdAt"`
}

// EventJSON is an account event as its receivers get it.
type EventJSON struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedAt string `json:"createdAt"`
	// Livemode is false for a test principal's account (test-mode.md: at
	// the top level of every webhook event).
	Livemode bool          `json:"livemode"`
	Data     EventDataJSON `json:"data"`
}

// EventDataJSON is an account event's data.
type EventDataJSON struct {
	Account AccountJSON `json:"account"`
	Entry   *EntryJSON  `json:"entry"`
}

// Body returns ev, an event of owner's account, as its receivers get it.
func (ev Event) Body(owner string) ([]byte, error) {
	_, live := stampduty.CallerOf(owner)
	out := EventJSON{ID: ev.ID, Type: ev.Type, CreatedAt: stampduty.FormatTime(ev.CreatedAt), Livemode: live,
		Data: EventDataJSON{Account: AccountView(ev.Account, live)}}
	if ev.Entry.ID != "" {
		e := EntryView(ev.Entry)
		out.Data.Entry = &e
	}
	return json.Marshal(out)
}

// AccountView returns a as GET /api/account answers it.
func AccountView(a Account, live bool) AccountJSON {
	out := AccountJSON{Balance: a.Balance.String(), Held: a.Held.String(), Currency: "INR", Livemode: live,
		Available: moneyString(a.Available()), CreditLimit: moneyString(a.Limit), LowBalanceThreshold: moneyString(a.Threshold)}
	if !a.UpdatedAt.IsZero() {
		out.UpdatedAt = timeString(a.UpdatedAt)
	}
	return out
}

// EntryView returns e as accounts.md shows an entry.
func EntryView(e Entry) EntryJSON {
	return EntryJSON{ID: e.ID, Type: e.Type, Amount: e.Amount.String(), BalanceAfter: e.BalanceAfter.String(),
		HeldAfter: e.HeldAfter.String(), Order: textOrNull(e.Order), Fulfillment: textOrNull(e.Fulfillment),
		Reference: textOrNull(e.Reference), Note: textOrNull(e.Note), By: e.By, CreatedAt: stampduty.FormatTime(e.CreatedAt)}
}

func moneyString(m *Money) *string {
	if m == nil {
		return nil
	}
	s := m.String()
	return &s
}

func textOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func timeString(t time.Time) *string {
	s := stampduty.FormatTime(t)
	return &s
}
