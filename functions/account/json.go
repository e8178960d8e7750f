package main

import (
	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

// The account and its entries are written as accounts.AccountView and
// accounts.EntryView write them: the same JSON an account event carries.

// newAccountJSON returns a as GET /api/account answers it, its livemode the
// owner key's.
func newAccountJSON(a accounts.Account) accounts.AccountJSON {
	_, live := stampduty.CallerOf(a.Owner)
	return accounts.AccountView(a, live)
}

// creditJSON is a test credit's answer: the account after it and its
// entry (as an account event's data is).
type creditJSON struct {
	Account accounts.AccountJSON `json:"account"`
	Entry   accounts.EntryJSON   `json:"entry"`
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
