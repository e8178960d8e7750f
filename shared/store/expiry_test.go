package store_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/storetest"
	"stampduty/shared/webhooks"
)

// thirtyDays is test-mode.md's "deleted 30 days after creation", spelled
// out here rather than read from the code under test.
const thirtyDays = 30 * 24 * time.Hour

// expiresOf returns the TTL attribute of item, and whether it has one.
func expiresOf(t *testing.T, item map[string]types.AttributeValue) (int64, bool) {
	t.Helper()
	v, ok := item[store.TTLAttribute]
	if !ok {
		return 0, false
	}
	n, isN := v.(*types.AttributeValueMemberN)
	if !isN {
		t.Fatalf("%s is %T, want a number (DynamoDB's TTL ignores anything else)", store.TTLAttribute, v)
	}
	e, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		t.Fatalf("%s = %q: %v", store.TTLAttribute, n.Value, err)
	}
	return e, true
}

// createdPlus30 is the TTL of a test order created at createdAt.
func createdPlus30(t *testing.T, createdAt string) int64 {
	t.Helper()
	at, err := time.Parse(stampduty.TimeLayout, createdAt)
	if err != nil {
		t.Fatal(err)
	}
	return at.Add(thirtyDays).Unix()
}

// rawPartition returns every item under key = value of a test's table, read
// raw (consistently) from dynalite.
func rawPartition(t *testing.T, env *storetest.Env, table, key, value string) []map[string]types.AttributeValue {
	t.Helper()
	out, err := env.Client.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(env.Table(table)),
		KeyConditionExpression:    aws.String("#k = :v"),
		ExpressionAttributeNames:  map[string]string{"#k": key},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: value}},
		ConsistentRead:            aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Items
}

// TestTestDataExpires: every item of a test order, in the orders and the
// deliveries tables, carries the TTL attribute the template names, equal
// to the order's createdAt + 30 days in epoch seconds, after every write
// path that touches it (the create with its event, a move, a document, the
// relay, a paper's first and later changes, a cancel's locks and its
// write, the queue's removal of a stale entry, a job's lease, attempts,
// postponement, redelivery and stop); a void marker expires 30 days after
// it is written; the caller's counter and voids items never expire. A live
// owner's items never carry it. dynalite runs no TTL, so the items are
// read raw.
func TestTestDataExpires(t *testing.T) {
	env, db, _, ids := proxiedStore(t, 100)
	ords := db.Orders(env.Table("OrdersTable"))
	del := db.Deliveries(env.Table("DeliveriesTable"))
	for _, tc := range []struct {
		name, owner string
		test        bool
	}{
		{"TestOwner", stampduty.TestOwnerOf("acme"), true},
		{"LiveOwner", "acme", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &expiryFixture{ctx: context.Background(), env: env, ords: ords, del: del, ids: ids, owner: tc.owner, test: tc.test}
			w := f.writeOrders(t)
			f.checkOrderItems(t, w)
			f.checkDeliveries(t, w.one)
		})
	}
}

// expiryFixture is one owner's orders in TestTestDataExpires's tables:
// test says whether its items are to expire.
type expiryFixture struct {
	ctx   context.Context
	env   *storetest.Env
	ords  *store.Orders
	del   *store.Deliveries
	ids   *store.IDs
	owner string
	test  bool
}

// expiryWrites is what writeOrders stored: the orders of one paper (one,
// its document relayed, then cancelled) and of two papers (two), each
// order's createdAt by seq, and the time around the void's write.
type expiryWrites struct {
	one, two      orders.Stored
	createdAt     map[int64]string
	before, after time.Time
}

// put stores o for the owner with its order.created event.
func (f *expiryFixture) put(t *testing.T, o stampduty.Order) orders.Stored {
	t.Helper()
	seq, err := f.ords.Reserve(f.ctx, f.owner)
	if err != nil {
		t.Fatal(err)
	}
	o.DocumentID = stampduty.WithSeq(o.DocumentID, seq)
	if _, err := f.ords.Put(f.ctx, f.owner, seq, o, pending(t, stampduty.EventOrderCreated, o, nil, nil)); err != nil {
		t.Fatal(err)
	}
	return read(t, f.ords, f.owner, o.DocumentID)
}

// replace stores next over s with an event and returns it as read.
func (f *expiryFixture) replace(t *testing.T, s orders.Stored, next stampduty.Order) orders.Stored {
	t.Helper()
	// Any event will do: what is stored is the point.
	if err := f.ords.Replace(f.ctx, s, next, pending(t, stampduty.EventOrderDocumentUploaded, next, nil, nil)); err != nil {
		t.Fatal(err)
	}
	return read(t, f.ords, f.owner, s.DocumentID)
}

// relay relays the pending events of s's items, as the relay reads them
// (the outbox index: one per item).
func (f *expiryFixture) relay(t *testing.T, s orders.Stored) orders.Stored {
	t.Helper()
	found, _, err := f.ords.Pending(f.ctx, webhooks.Poller{}, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range found {
		if p.DocumentID == s.DocumentID {
			if err := f.ords.Relayed(f.ctx, p, eventIDs(p.Outbox)); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatalf("order %s has no pending events to relay", s.DocumentID)
	}
	return read(t, f.ords, f.owner, s.DocumentID)
}

// writeOrders takes the owner's orders through every write path of the
// orders table, and voids a seq.
func (f *expiryFixture) writeOrders(t *testing.T) expiryWrites {
	_, live := stampduty.CallerOf(f.owner)
	// An order of one paper: created, given a document, relayed,
	// cancelled; another moved.
	one := f.put(t, newOrder(t, f.ids, 1))
	withDoc := one.Order
	withDoc.StampDuty.UploadedDocument = &stampduty.File{ID: 9, DocumentID: "f00000000000000000000000", Name: "a.pdf",
		Mime: stampduty.MimePDF, Size: 4, SHA256: "00", Key: "documents/x/f00000000000000000000000",
		CreatedAt: one.CreatedAt}
	one = f.relay(t, f.replace(t, one, withDoc))
	cancelled, _, err := one.Order.Cancel(stampduty.ByCaller, nil, stampduty.FormatTime(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	one = f.replace(t, one, cancelled)
	moved := f.put(t, newOrder(t, f.ids, 2))
	moved = f.replace(t, moved, movePaper(t, moved.Order, 0, paperCreated))

	// An order of three papers: paper 2 moved (its item's first
	// write), its event relayed, then the order cancelled by an
	// operator (papers 1 and 3 get items with their locks, paper
	// 2's item is locked, the order's item written).
	three := f.put(t, newPapers(t, f.ids, 3))
	three = f.relay(t, f.replace(t, three, movePaper(t, three.Order, 1, paperCreated)))
	reason := "a mistake"
	cancelled, _, err = three.Order.Cancel(stampduty.ByOperator, &reason, stampduty.FormatTime(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ords.Replace(f.ctx, three, cancelled); err != nil {
		t.Fatal(err)
	}

	// An order of two papers, both moved, paper 1 twice (a later
	// write of its item): the Pending queue finds the order item's
	// stale entry and removes it (dropStale).
	two := f.put(t, newPapers(t, f.ids, 2))
	two = f.replace(t, two, movePaper(t, two.Order, 0, paperCreated))
	two = f.replace(t, two, movePaper(t, two.Order, 0, paperProcured))
	two = f.replace(t, two, movePaper(t, two.Order, 1, paperCreated))
	if _, _, err := f.ords.Queue(f.ctx, stampduty.StatusPending, !live, "", 100); err != nil {
		t.Fatal(err)
	}

	// A seq whose create failed.
	voidSeq, err := f.ords.Reserve(f.ctx, f.owner)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if ok, err := f.ords.Void(f.ctx, f.owner, voidSeq); !ok || err != nil {
		t.Fatalf("Void = %v, %v", ok, err)
	}
	after := time.Now()
	return expiryWrites{one: one, two: two, before: before, after: after,
		createdAt: map[int64]string{one.Seq: one.CreatedAt, moved.Seq: moved.CreatedAt, three.Seq: three.CreatedAt, two.Seq: two.CreatedAt}}
}

// checkOrderItems checks the TTL of each of the owner's items in the
// orders table, after writeOrders.
func (f *expiryFixture) checkOrderItems(t *testing.T, w expiryWrites) {
	kinds := map[string]int{}
	for _, item := range rawPartition(t, f.env, "OrdersTable", "owner", f.owner) {
		seqText := item["seq"].(*types.AttributeValueMemberN).Value
		whole, _, isPaper := strings.Cut(seqText, ".")
		seq, _ := strconv.ParseInt(whole, 10, 64)
		got, has := expiresOf(t, item)
		_, isVoid := item["vd"]
		kind := "order"
		switch {
		case seq >= 1<<53-2:
			kind = "counter or voids"
		case isVoid:
			kind = "void"
		case isPaper:
			kind = "paper"
		}
		kinds[kind]++
		switch {
		case !f.test || kind == "counter or voids":
			if has {
				t.Errorf("%s item at seq %s has %s = %d; want none", kind, seqText, store.TTLAttribute, got)
			}
		case kind == "void":
			lo, hi := w.before.Add(thirtyDays).Unix(), w.after.Add(thirtyDays).Unix()
			if !has || got < lo || got > hi {
				t.Errorf("void marker at seq %s: %s = %d (%v); want %d…%d, 30 days after it was written", seqText, store.TTLAttribute, got, has, lo, hi)
			}
		default:
			if want := createdPlus30(t, w.createdAt[seq]); !has || got != want {
				t.Errorf("%s item at seq %s: %s = %d (%v); want %d, its order's createdAt + 30 days", kind, seqText, store.TTLAttribute, got, has, want)
			}
		}
	}
	// 4 orders; papers: 3 of three (1 moved, 2 locked) + 2 of two;
	// a void; the counter and the voids item.
	if kinds["order"] != 4 || kinds["paper"] != 5 || kinds["void"] != 1 || kinds["counter or voids"] != 2 {
		t.Errorf("items read: %v; want 4 orders, 5 papers, 1 void, 2 counter or voids", kinds)
	}
	if _, stale := rawItem(t, f.env, f.owner, w.two.Seq)["qs"]; stale {
		t.Error("the Pending queue left the stale entry of the order of two moved papers: dropStale's write was not exercised")
	}
}

// checkDeliveries takes a job for an event of one through every write path
// of the deliveries table — put, leased, attempted and retried, postponed,
// delivered, redelivered and stopped — and checks the TTL of the job and
// its attempt records.
func (f *expiryFixture) checkDeliveries(t *testing.T, one orders.Stored) {
	ctx, del, owner := f.ctx, f.del, f.owner
	now := time.Now()
	status := stampduty.StatusCreated
	job := webhooks.Job{Owner: owner, Webhook: "w000000000000000000000000", Pending: stampduty.Pending{ID: "evt_x00000000000000000000000",
		Type: stampduty.EventOrderStatusChanged, At: one.UpdatedAt, Status: &status, Order: one.Order},
		Seq: webhooks.Seq(one.DocumentID, one.Version, 0), Next: stampduty.FormatTime(now)}
	if ok, err := del.Put(ctx, job); !ok || err != nil {
		t.Fatalf("Put = %v, %v", ok, err)
	}
	if ok, err := del.Lease(ctx, job, now, now.Add(time.Minute)); !ok || err != nil {
		t.Fatalf("Lease = %v, %v", ok, err)
	}
	retry := stampduty.FormatTime(now.Add(time.Second))
	j := job
	j.N, j.First, j.Next, j.Lease = 1, job.Next, retry, ""
	a := webhooks.Attempt{EventID: j.ID, Type: j.Type, Attempt: 1, Status: 500, At: job.Next, DurationMS: 12, NextAttemptAt: &retry}
	if err := del.Attempted(ctx, webhooks.AttemptDone{Job: j, Attempt: a}); err != nil {
		t.Fatal(err)
	}
	if ok, err := del.Postpone(ctx, j, stampduty.FormatTime(now.Add(2*time.Second))); !ok || err != nil {
		t.Fatalf("Postpone = %v, %v", ok, err)
	}
	j.N, j.Next, j.Done = 2, "", webhooks.JobDelivered
	a.Attempt, a.Status, a.At, a.NextAttemptAt = 2, 204, retry, nil
	if err := del.Attempted(ctx, webhooks.AttemptDone{Job: j, Attempt: a}); err != nil {
		t.Fatal(err)
	}
	if ok, err := del.Redeliver(ctx, owner, j.Webhook, j.ID, now); !ok || err != nil {
		t.Fatalf("Redeliver = %v, %v", ok, err)
	}
	if err := del.Stop(ctx, owner, j.Webhook); err != nil {
		t.Fatal(err)
	}
	items := rawPartition(t, f.env, "DeliveriesTable", "pk", owner+"#"+j.Webhook)
	if len(items) != 3 {
		t.Fatalf("%d deliveries items, want the job and 2 attempt records", len(items))
	}
	for _, item := range items {
		sk := item["sk"].(*types.AttributeValueMemberS).Value
		got, has := expiresOf(t, item)
		switch want := createdPlus30(t, one.CreatedAt); {
		case !f.test && has:
			t.Errorf("live %s has %s = %d; want none", sk, store.TTLAttribute, got)
		case f.test && (!has || got != want):
			t.Errorf("%s: %s = %d (%v); want %d, its order's createdAt + 30 days", sk, store.TTLAttribute, got, has, want)
		}
	}
}

// rawItem returns owner's item at seq, read raw.
func rawItem(t *testing.T, env *storetest.Env, owner string, seq int64) map[string]types.AttributeValue {
	t.Helper()
	out, err := env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(env.Table("OrdersTable")),
		Key: map[string]types.AttributeValue{"owner": &types.AttributeValueMemberS{Value: owner},
			"seq": &types.AttributeValueMemberN{Value: strconv.FormatInt(seq, 10)}}, ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item == nil {
		t.Fatalf("GetItem = %v, %v", out, err)
	}
	return out.Item
}

// TestTTLAttributeIsTheTemplates: the TTL attribute the store writes is
// the one template.yaml's TimeToLiveSpecification names on each table
// whose items carry it (DynamoDB deletes by that attribute only: another
// name would keep test data for ever, and nothing local would notice,
// since dynalite runs no TTL).
func TestTTLAttributeIsTheTemplates(t *testing.T) {
	env := storetest.New(t)
	ttl := map[string]string{}
	for _, tb := range env.Template.Tables {
		ttl[tb.LogicalID] = tb.TTLAttribute
	}
	for _, table := range []string{"OrdersTable", "DeliveriesTable", "IdempotencyTable", "UploadsTable"} {
		if got, want := ttl[table], store.TTLAttribute; got != want {
			t.Errorf("%s's TimeToLiveSpecification names %q, want %q (the attribute the store writes)", table, got, want)
		}
	}
}

// TestExpiredTestOrdersLeaveTheList: once DynamoDB's TTL has removed a
// test owner's oldest orders, its count and pages leave them out at once
// (the count falls from the moment they are gone, without a list having
// to void each), no list writes a void marker for them, and the voids
// below its oldest order are dropped from its voids item when a list next
// repairs; an order that expired out of turn is voided as a vanished
// create is.
func TestExpiredTestOrdersLeaveTheList(t *testing.T) {
	ctx := context.Background()
	env, db, _, ids := proxiedStore(t, 100)
	ords := db.Orders(env.Table("OrdersTable"))
	owner := stampduty.TestOwnerOf("acme")
	// Seq 1: a create that failed.
	if seq, err := ords.Reserve(ctx, owner); err != nil || seq != 1 {
		t.Fatalf("Reserve = %d, %v", seq, err)
	}
	if ok, err := ords.Void(ctx, owner, 1); !ok || err != nil {
		t.Fatalf("Void = %v, %v", ok, err)
	}
	// Seqs 2…6: orders made 40 days ago.
	old := stampduty.FormatTime(time.Now().Add(-40 * 24 * time.Hour))
	for i := 2; i <= 6; i++ {
		o := newOrder(t, ids, i)
		o.CreatedAt, o.UpdatedAt = old, old
		storetest.PutOrder(t, ords, owner, o)
	}
	// What the TTL does: the void marker and orders 2 and 3 gone, and
	// order 5 out of turn.
	for _, seq := range []int64{1, 2, 3, 5} {
		if _, err := env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(env.Table("OrdersTable")),
			Key: map[string]types.AttributeValue{"owner": &types.AttributeValueMemberS{Value: owner},
				"seq": &types.AttributeValueMemberN{Value: strconv.FormatInt(seq, 10)}}}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := ords.Count(ctx, owner); n != 3 || err != nil {
		t.Errorf("Count = %d, %v; want 3 (orders 4 and 6, and 5 until a list finds it gone)", n, err)
	}
	page, total, err := ords.Page(ctx, owner, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, o := range page {
		seq, _ := stampduty.IDSeq(o.DocumentID)
		seqs = append(seqs, seq)
	}
	if total != 2 || len(seqs) != 2 || seqs[0] != 6 || seqs[1] != 4 {
		t.Errorf("page 1 = seqs %v of %d; want [6 4] of 2", seqs, total)
	}
	if n, err := ords.Count(ctx, owner); n != 2 || err != nil {
		t.Errorf("Count after the list = %d, %v; want 2", n, err)
	}
	var marks []string
	voids := "none"
	for _, item := range rawPartition(t, env, "OrdersTable", "owner", owner) {
		seq := item["seq"].(*types.AttributeValueMemberN).Value
		if _, ok := item["vd"]; ok {
			marks = append(marks, seq)
		}
		if vs, ok := item["vs"].(*types.AttributeValueMemberNS); ok {
			voids = strings.Join(vs.Value, ",")
		}
	}
	if len(marks) != 1 || marks[0] != "5" {
		t.Errorf("void markers at seqs %v; want only 5's (expired orders are not voided)", marks)
	}
	if voids != "5" {
		t.Errorf("voids item holds %s; want 5 (the void below the oldest order dropped)", voids)
	}
}
