package main

import (
	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

// accountJSON is an account as the API shows it (accounts.md): money as
// strings, available and creditLimit null when unlimited,
// lowBalanceThreshold null when none, updatedAt null for an account never
// stored.
type accountJSON struct {
	Balance             string  `json:"balance"`
	Held                string  `json:"held"`
	Available           *string `json:"available"`
	CreditLimit         *string `json:"creditLimit"`
	LowBalanceThreshold *string `json:"lowBalanceThreshold"`
	Currency            string  `json:"currency"`
	Livemode            bool    `json:"livemode"`
	UpdatedAt           *string `json:"updatedAt"`
}

// money writes m, nil as null.
func money(m *accounts.Money) *string {
	if m == nil {
		return nil
	}
	s := m.String()
	return &s
}

// text writes s, "" as null.
func text(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func newAccountJSON(a accounts.Account) accountJSON {
	_, live := stampduty.CallerOf(a.Owner)
	out := accountJSON{Balance: a.Balance.String(), Held: a.Held.String(), Available: money(a.Available()), CreditLimit: money(a.Limit),
		LowBalanceThreshold: money(a.Threshold), Currency: "INR", Livemode: live}
	if !a.UpdatedAt.IsZero() {
		out.UpdatedAt = text(stampduty.FormatTime(a.UpdatedAt))
	}
	return out
}

// entryJSON is an entry as the API shows it (accounts.md): exactly these
// members, null where none; never the admin's sub.
type entryJSON struct {
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

func newEntryJSON(e accounts.Entry) entryJSON {
	return entryJSON{ID: e.ID, Type: e.Type, Amount: e.Amount.String(), BalanceAfter: e.BalanceAfter.String(), HeldAfter: e.HeldAfter.String(),
		Order: text(e.Order), Fulfillment: text(e.Fulfillment), Reference: text(e.Reference), Note: text(e.Note), By: e.By,
		CreatedAt: stampduty.FormatTime(e.CreatedAt)}
}

// creditJSON is a test credit's answer: the account after it and its
// entry (as an account event's data is).
type creditJSON struct {
	Account accountJSON `json:"account"`
	Entry   entryJSON   `json:"entry"`
}

// statementJSON is a month's statement as the API shows it.
type statementJSON struct {
	Month          string `json:"month"`
	OpeningBalance string `json:"openingBalance"`
	Credits        string `json:"credits"`
	Charges        string `json:"charges"`
	Adjustments    string `json:"adjustments"`
	ClosingBalance string `json:"closingBalance"`
	OpeningHeld    string `json:"openingHeld"`
	Holds          string `json:"holds"`
	Releases       string `json:"releases"`
	ClosingHeld    string `json:"closingHeld"`
}

func newStatementJSON(s accounts.Statement) statementJSON {
	return statementJSON{Month: s.Month, OpeningBalance: s.OpeningBalance.String(), Credits: s.Credits.String(), Charges: s.Charges.String(),
		Adjustments: s.Adjustments.String(), ClosingBalance: s.ClosingBalance.String(), OpeningHeld: s.OpeningHeld.String(),
		Holds: s.Holds.String(), Releases: s.Releases.String(), ClosingHeld: s.ClosingHeld.String()}
}
