package storetest

import (
	"context"
	"testing"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
)

// PutOrder stores o as owner's next order, as the create workflow does: a
// seq reserved, the seq put in o's documentId (stampduty.WithSeq), o put
// at it. It returns o as put: its documentId carries the seq.
func PutOrder(t testing.TB, ords *store.Orders, owner string, o stampduty.Order) stampduty.Order {
	t.Helper()
	ctx := context.Background()
	seq, err := ords.Reserve(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	o.DocumentID = stampduty.WithSeq(o.DocumentID, seq)
	if _, err := ords.Put(ctx, owner, seq, o); err != nil {
		t.Fatal(err)
	}
	return o
}

// PutHeldOrder is PutOrder with o's total held on owner's account in the
// ledger table first, as the create workflow holds it (accounts.md).
func PutHeldOrder(t testing.TB, db *store.DB, ordersTable, ledgerTable, owner string, o stampduty.Order) stampduty.Order {
	t.Helper()
	ctx := context.Background()
	ords := db.Orders(ordersTable)
	seq, err := ords.Reserve(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	o.DocumentID, o.Held = stampduty.WithSeq(o.DocumentID, seq), true
	ledger := &accounts.Ledger{Store: db.Ledger(ledgerTable)}
	if _, err := ledger.Hold(ctx, owner, o); err != nil {
		t.Fatal(err)
	}
	if _, err := ords.Put(ctx, owner, seq, o); err != nil {
		t.Fatal(err)
	}
	return o
}
