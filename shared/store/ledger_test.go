package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
)

// hold is the hold of an order of amount rupees, its id made from name.
func hold(name string, rupees int64) accounts.Change {
	return accounts.Change{Guard: true, Entry: accounts.Entry{ID: accounts.HoldID(name), Type: accounts.TypeHold,
		Amount: accounts.Rupees(rupees), Order: name, By: accounts.ByCaller, CreatedAt: time.Now()}}
}

// credit is an admin's credit of rupees under reference ref.
func credit(ref string, rupees int64) accounts.Change {
	return accounts.Change{Entry: accounts.Entry{ID: accounts.CreditID(ref), Type: accounts.TypeCredit,
		Amount: accounts.Rupees(rupees), Reference: ref, By: accounts.ByAdmin, Sub: "admin-sub", CreatedAt: time.Now()}}
}

// checkLedger is storetest.CheckLedger's account.
func checkLedger(t *testing.T, l *store.Ledger, owner string) accounts.Account {
	t.Helper()
	a, _ := storetest.CheckLedger(t, l, owner)
	return a
}

func TestLedger(t *testing.T) {
	ctx := context.Background()
	env, db, proxy, _ := proxiedStore(t, 10)
	l := db.Ledger(env.Table("LedgerTable"))
	zero := accounts.Money(0)

	t.Run("FirstHoldStoresAnUnlimitedAccount", func(t *testing.T) {
		a, err := l.Apply(ctx, "first", hold("o1", 120000))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := a.Account.Held, accounts.Rupees(120000); got != want || a.Account.Limit != nil || a.Entry.Seq != 1 {
			t.Errorf("account %+v after the first hold, want %s held, unlimited, seq 1", a.Account, want)
		}
		checkLedger(t, l, "first")
	})
	t.Run("ChangeCostsTwoCallsThreeWriteUnits", func(t *testing.T) {
		proxy.SetMode(storetest.Account)
		defer proxy.SetMode(storetest.Record)
		proxy.Take()
		if _, err := l.Apply(ctx, "first", hold("o2", 20)); err != nil {
			t.Fatal(err)
		}
		calls := proxy.Take()
		if got, want := env.Operations(calls), "BatchWriteItem:LedgerTable=1 UpdateItem:LedgerTable=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
		var wcu float64
		for _, c := range calls {
			wcu += c.Billed.Write
		}
		if wcu > 3 {
			t.Errorf("a change costs %.1f WCU, want at most 3 (accounts.md)", wcu)
		}
		t.Logf("a change: %s, %.1f WCU", env.Operations(calls), wcu)
	})
	t.Run("AccountReadIsOneCall", func(t *testing.T) {
		proxy.Take()
		if _, err := l.Account(ctx, "first"); err != nil {
			t.Fatal(err)
		}
		if got, want := env.Operations(proxy.Take()), "GetItem:LedgerTable=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
	})
	t.Run("RetriedChangeIsAppliedOnce", func(t *testing.T) {
		ch := hold("o3", 50)
		first, err := l.Apply(ctx, "first", ch)
		if err != nil {
			t.Fatal(err)
		}
		again, err := l.Apply(ctx, "first", ch)
		if err != nil || !again.Replayed || again.Entry.Seq != first.Entry.Seq || again.Account.Held != first.Account.Held {
			t.Errorf("again: %+v, %v; want the first's entry, replayed", again, err)
		}
		checkLedger(t, l, "first")
	})
	t.Run("LostAnswerIsAppliedOnce", func(t *testing.T) {
		// The account's update lands, its answer is lost: the SDK sends it
		// again, which finds its own entry the newest and is answered from it.
		ldb, p := openThroughProxy(t, env)
		var n atomic.Int32
		p.SetFault(func(c storetest.ProxyCall) *storetest.Fault {
			if c.Operation == "UpdateItem" && n.Add(1) == 1 {
				return &storetest.Fault{Drop: true}
			}
			return nil
		})
		ll := ldb.Ledger(env.Table("LedgerTable"))
		before := checkLedger(t, l, "first")
		a, err := ll.Apply(ctx, "first", hold("o4", 70))
		if err != nil {
			t.Fatal(err)
		}
		after := checkLedger(t, l, "first")
		if got, want := after.Held-before.Held, accounts.Rupees(70); got != want || !a.Replayed {
			t.Errorf("held grew by %s (replayed %v), want %s once", got, a.Replayed, want)
		}
		if got := n.Load(); got < 2 {
			t.Errorf("%d UpdateItems: the fault did not happen", got)
		}
	})
	t.Run("NoRoomRefusesAndWritesNothing", func(t *testing.T) {
		if _, err := l.Configure(ctx, "prepaid", 0, &zero, nil, false, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Apply(ctx, "prepaid", credit("UTR1", 100)); err != nil {
			t.Fatal(err)
		}
		proxy.Take()
		_, err := l.Apply(ctx, "prepaid", hold("big", 101))
		var nr *accounts.NoRoomError
		if !errors.As(err, &nr) || nr.Account.Available() == nil || *nr.Account.Available() != accounts.Rupees(100) {
			t.Fatalf("err = %v, want no room with 100.00 available", err)
		}
		// The refused update, then what it refused: the account and its
		// newest entries (was it a retry of a change applied before?).
		if got, want := env.Operations(proxy.Take()), "GetItem:LedgerTable=1 Query:LedgerTable=1 UpdateItem:LedgerTable=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
		a := checkLedger(t, l, "prepaid")
		if a.Held != 0 || a.Seq != 1 {
			t.Errorf("account %+v after the refusal, want the credit alone", a)
		}
		if _, err := l.Apply(ctx, "prepaid", hold("fits", 100)); err != nil {
			t.Errorf("a hold of exactly what is available: %v", err)
		}
	})
	t.Run("EntryItsWriterLostIsWrittenByTheNextChange", func(t *testing.T) {
		a, err := l.Apply(ctx, "crash", hold("c1", 10))
		if err != nil {
			t.Fatal(err)
		}
		// As if its writer stopped between the update and the entry's put.
		if _, err := env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(env.Table("LedgerTable")),
			Key: map[string]types.AttributeValue{"owner": &types.AttributeValueMemberS{Value: "crash"},
				"k": &types.AttributeValueMemberS{Value: fmt.Sprintf("e#%012d", a.Entry.Seq)}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Apply(ctx, "crash", hold("c2", 10)); err != nil {
			t.Fatal(err)
		}
		checkLedger(t, l, "crash")
	})
	t.Run("ConcurrentHoldsNeverPassTheLimit", func(t *testing.T) {
		const fit, tries = 10, 30
		if _, err := l.Configure(ctx, "race", 0, &zero, nil, false, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Apply(ctx, "race", credit("UTR-race", 20*fit)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var held, refused atomic.Int32
		for i := range tries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := l.Apply(ctx, "race", hold(fmt.Sprintf("r%d", i), 20))
				switch {
				case err == nil:
					held.Add(1)
				case errors.Is(err, accounts.ErrNoRoom):
					refused.Add(1)
				default:
					t.Errorf("hold %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		a := checkLedger(t, l, "race")
		if held.Load() != fit || refused.Load() != tries-fit || *a.Available() != 0 {
			t.Errorf("%d held, %d refused, %s available; want %d, %d, 0.00", held.Load(), refused.Load(), *a.Available(), fit, tries-fit)
		}
	})
	t.Run("TestAccountMustBeOpened", func(t *testing.T) {
		owner := stampduty.TestOwnerOf("acme")
		if _, err := l.Apply(ctx, owner, hold("t1", 20)); !errors.Is(err, accounts.ErrNotOpened) {
			t.Fatalf("err = %v, want ErrNotOpened", err)
		}
		ledger := &accounts.Ledger{Store: l}
		o := stampduty.Order{DocumentID: "t1", StampDuty: stampduty.StampDuty{Amount: 20, Quantity: 1, TotalAmount: 20}}
		if _, err := ledger.Hold(ctx, owner, o); err != nil {
			t.Fatal(err)
		}
		a := checkLedger(t, l, owner)
		if a.Balance != accounts.TestOpening || a.Held != accounts.Rupees(20) || a.Limit == nil || *a.Limit != 0 {
			t.Errorf("test account %+v, want the opening credit, limit 0 and the hold", a)
		}
	})
	t.Run("ConfigureOnAStaleSeqIsRefused", func(t *testing.T) {
		if _, err := l.Configure(ctx, "first", 1, &zero, nil, false, time.Now()); !errors.Is(err, accounts.ErrChanged) {
			t.Errorf("err = %v, want ErrChanged", err)
		}
	})
}
