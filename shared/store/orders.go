package store

// This file holds the orders table's item and its mapping to and from
// stampduty.Order, and the reads and writes of one order: by documentId, by
// key, and its replacement.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/duty"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// Orders is the orders table: key (owner, seq). An owner's orders are
// numbered 1, 2, 3, ... in the order they were stored, with no gaps: each
// order claims the next number with a conditional PutItem, and the only
// write that makes an order is that PutItem, so a number is never skipped,
// reused or taken twice, and an order never holds two numbers. The newest seq is therefore the exact count, and
// page N of the newest-first list is the seq range
// [count-N*size+1, count-(N-1)*size]: one Query, whatever N is.
type Orders struct {
	db    *DB
	table string
	// attempts bounds the lost races of one Create under contention (the
	// request's deadline usually ends it first).
	attempts int
	keys     *docKeys
}

// Orders returns the orders table of the given name.
func (db *DB) Orders(table string) *Orders {
	return &Orders{db: db, table: table, attempts: 400, keys: &docKeys{keys: map[string]orderKey{}}}
}

// An order is stored as one orderItem, through attributevalue. Attribute
// names are short: DynamoDB bills them with every read and write, and a
// typical order stays under 1 KB.
//
//	owner, seq          the key
//	id, doc, at, up     id, documentId, createdAt, updatedAt (absent until the first change)
//	v                   the version: 1 when stored, +1 with each change (absent on orders
//	                    stored before fulfillment existed: version 0)
//	qs, qk              the work queue: the order's queue status (stampduty.Order.QueueStatus)
//	                    and its shard, <status>#<nn> (queuePartition; orders stored before the
//	                    shards have the bare status until a change or the backfill; a test
//	                    order's is test#<status>#<nn>, a queue of its own), and
//	                    createdAt#documentId: the keys of the queue index
//	ff                  fulfillments: list of {id, doc, st, ref, cn, cf?, h?}; h is the
//	                    status history [{st, at, by?}] (absent on orders stored before it)
//	sd                  stamp duty: {id, amt, desc, n1, a1, p1, n2, a2, p2, pb, pu, q,
//	                    state, cp, mob, aid, adoc, purpose, ud?}; ud is the caller's document
//	cf, ud              files: {id, doc, name, mime, size, sha, key, at}
//	ca, cx              a cancelled order's cancelledAt and cancellation {by, r?} (by "caller" or
//	                    "operator", r the operator's reason); both absent on an order not
//	                    cancelled, which also has no qs and qk: it left the work queue
//	ob                  the outbox: the events of its changes not yet relayed, oldest
//	                    first: list of {id, t, at, ps?, st?, o}; t is the type, ps and st
//	                    the statuses of an order.status_changed, o the order right after
//	                    the change as id, doc, at, up?, ff, sd, ca?, cx? (absent when empty)
//	obp, obk            while ob is not empty: "pending#<shard of doc>" and <at of its oldest event>#doc,
//	                    the keys of the outbox index
//	pa                  true on an order created with several papers: its papers, once changed,
//	                    are in items of their own, and ff holds them as created (papers.go)
//	expires             a test order's TTL, epoch seconds: createdAt + 30 days (testExpires);
//	                    absent on a live order
type orderItem struct {
	Owner string `dynamodbav:"owner"`
	Seq   int64  `dynamodbav:"seq"`
	orderBody
	Version     int64       `dynamodbav:"v,omitempty"`
	QueueStatus string      `dynamodbav:"qs,omitempty"`
	QueueKey    string      `dynamodbav:"qk,omitempty"`
	Outbox      []eventItem `dynamodbav:"ob,omitempty"`
	OutboxState string      `dynamodbav:"obp,omitempty"`
	OutboxKey   string      `dynamodbav:"obk,omitempty"`
	// Apart marks an order created with several papers: each paper, once
	// changed, is kept in an item of its own (papers.go).
	Apart bool `dynamodbav:"pa,omitempty"`
	// Expires is a test order's TTL (TTLAttribute, testExpires); 0
	// (absent) for a live order.
	Expires int64 `dynamodbav:"expires,omitempty"`
}

// orderBody is the order itself as an item stores it, without its key,
// version and index keys: in the order's item, and in each of its pending
// events (so that file keys survive and download addresses are made when
// the event is sent).
type orderBody struct {
	ID           int64                   `dynamodbav:"id"`
	DocumentID   string                  `dynamodbav:"doc"`
	CreatedAt    string                  `dynamodbav:"at"`
	UpdatedAt    string                  `dynamodbav:"up,omitempty"`
	Fulfillments []stampduty.Fulfillment `dynamodbav:"ff"`
	StampDuty    *stampDutyItem          `dynamodbav:"sd"`
	CancelledAt  string                  `dynamodbav:"ca,omitempty"`
	Cancellation *stampduty.Cancellation `dynamodbav:"cx,omitempty"`
	// Held says the order's total was held on its caller's account
	// (stampduty.Order.Held); absent on orders made before accounts.
	Held bool `dynamodbav:"hp,omitempty"`
}

// stampDutyItem is a stampduty.StampDuty as stored in an order's sd, its
// StatePurpose flattened into aid, adoc and purpose.
type stampDutyItem struct {
	ID                 int64           `dynamodbav:"id"`
	Amount             int64           `dynamodbav:"amt"`
	Description        string          `dynamodbav:"desc"`
	FirstPartyName     string          `dynamodbav:"n1"`
	FirstPartyAddress  string          `dynamodbav:"a1"`
	FirstPartyPAN      string          `dynamodbav:"p1"`
	SecondPartyName    string          `dynamodbav:"n2"`
	SecondPartyAddress string          `dynamodbav:"a2"`
	SecondPartyPAN     string          `dynamodbav:"p2"`
	PaidBy             string          `dynamodbav:"pb"`
	PurchasedBy        string          `dynamodbav:"pu"`
	Quantity           int64           `dynamodbav:"q"`
	State              string          `dynamodbav:"state"`
	ConsiderationPrice int64           `dynamodbav:"cp"`
	MobileNumber       string          `dynamodbav:"mob"`
	ArticleID          int64           `dynamodbav:"aid"`
	ArticleDocumentID  string          `dynamodbav:"adoc"`
	PurposeName        string          `dynamodbav:"purpose"`
	UploadedDocument   *stampduty.File `dynamodbav:"ud,omitempty"`
	// Du is the order's explained duty (duty-rules.md §8), compressed
	// (dutycodec.go); absent on an order made before duty rules. The rule
	// version it names is kept by its hash in the catalogue table
	// (rules.go).
	Du []byte `dynamodbav:"du,omitempty"`
}

// newOrderItem returns o as owner's order number seq at version v, with
// the pending events outbox.
func newOrderItem(owner string, seq int64, o stampduty.Order, v int64, outbox []stampduty.Pending) orderItem {
	it := orderItem{Owner: owner, Seq: seq, orderBody: newOrderBody(o), Version: v, Outbox: newEventItems(outbox, o),
		Expires: testExpires(owner, o.CreatedAt)}
	if status := o.QueueStatus(); status != "" { // a cancelled order waits in no queue
		it.QueueStatus, it.QueueKey = queuePartition(owner, status, o.DocumentID), queueKey(o)
	}
	if len(outbox) > 0 {
		it.OutboxState, it.OutboxKey = outboxShard(o.DocumentID), outboxKey(outbox, o.DocumentID)
	}
	return it
}

// newOrderBody returns o as an item stores it.
func newOrderBody(o stampduty.Order) orderBody {
	sd := o.StampDuty
	up := o.UpdatedAt
	if up == o.CreatedAt {
		up = ""
	}
	var cancelledAt string
	if o.CancelledAt != nil {
		cancelledAt = *o.CancelledAt
	}
	return orderBody{ID: o.ID, DocumentID: o.DocumentID, CreatedAt: o.CreatedAt, UpdatedAt: up,
		Fulfillments: o.Fulfillments, CancelledAt: cancelledAt, Cancellation: o.Cancellation, Held: o.Held,
		StampDuty: &stampDutyItem{ID: sd.ID, Amount: sd.Amount, Description: sd.Description,
			FirstPartyName: sd.FirstPartyName, FirstPartyAddress: sd.FirstPartyAddress, FirstPartyPAN: sd.FirstPartyPAN,
			SecondPartyName: sd.SecondPartyName, SecondPartyAddress: sd.SecondPartyAddress, SecondPartyPAN: sd.SecondPartyPAN,
			PaidBy: sd.PaidBy, PurchasedBy: sd.PurchasedBy, Quantity: sd.Quantity, State: sd.State,
			ConsiderationPrice: sd.ConsiderationPrice, MobileNumber: sd.MobileNumber,
			ArticleID: sd.StatePurpose.ID, ArticleDocumentID: sd.StatePurpose.DocumentID, PurposeName: sd.StatePurpose.PurposeName,
			UploadedDocument: sd.UploadedDocument, Du: mustEncodeDuty(sd.Duty)}}
}

// mustEncodeDuty is encodeDuty of a duty made by the engine, which always
// encodes.
func mustEncodeDuty(d *duty.Duty) []byte {
	b, err := encodeDuty(d)
	if err != nil {
		panic(err)
	}
	return b
}

// decodeStored reads an order item with its key and version. An order
// stored before fulfillment existed reads as one that never changed: its
// updatedAt is its createdAt, and each fulfillment's history is Pending at
// createdAt.
func decodeStored(item map[string]types.AttributeValue) (orders.Stored, error) {
	var it orderItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return orders.Stored{}, stampduty.Internal(fmt.Errorf("decode order: %w", err))
	}
	o, err := it.order(it.Owner)
	if err != nil {
		return orders.Stored{}, err
	}
	caller, _ := stampduty.CallerOf(it.Owner)
	s := orders.Stored{OpsOrder: stampduty.OpsOrder{Order: o, Owner: it.Owner, Caller: caller}, Seq: it.Seq, Version: it.Version}
	for _, e := range it.Outbox {
		p, err := e.pending(it.Owner, &o)
		if err != nil {
			return orders.Stored{}, err
		}
		s.Outbox = append(s.Outbox, p)
	}
	if it.Apart {
		s.Apart = &orders.Apart{Version: it.Version, Outbox: s.Outbox, Papers: make([]orders.Part, len(o.Fulfillments))}
	}
	return s, nil
}

// order returns the order it stores as owner's (see decodeStored): its
// Livemode is the owner key's mode (stampduty.CallerOf), which is never stored, so
// every order reads its mode from the key it is stored under and orders
// stored before test mode (all live) read as live.
func (it orderBody) order(owner string) (stampduty.Order, error) {
	if it.StampDuty == nil {
		return stampduty.Order{}, stampduty.Internal(errors.New("decode order: order without stamp duty"))
	}
	o := stampduty.Order{ID: it.ID, DocumentID: it.DocumentID, CreatedAt: it.CreatedAt, UpdatedAt: cmp.Or(it.UpdatedAt, it.CreatedAt),
		Fulfillments: it.Fulfillments, Cancellation: it.Cancellation, Held: it.Held}
	_, o.Livemode = stampduty.CallerOf(owner)
	if it.CancelledAt != "" {
		at := it.CancelledAt
		o.CancelledAt = &at
	}
	for i, f := range o.Fulfillments {
		if len(f.History) == 0 {
			o.Fulfillments[i].History = []stampduty.StatusEntry{{Status: stampduty.StatusPending, At: it.CreatedAt}}
		}
	}
	sd := it.StampDuty
	var err error
	o.StampDuty = stampduty.StampDuty{ID: sd.ID, Amount: sd.Amount, Description: sd.Description,
		FirstPartyName: sd.FirstPartyName, FirstPartyAddress: sd.FirstPartyAddress, FirstPartyPAN: sd.FirstPartyPAN,
		SecondPartyName: sd.SecondPartyName, SecondPartyAddress: sd.SecondPartyAddress, SecondPartyPAN: sd.SecondPartyPAN,
		PaidBy: sd.PaidBy, PurchasedBy: sd.PurchasedBy, Quantity: sd.Quantity, TotalAmount: sd.Amount * sd.Quantity, State: sd.State,
		ConsiderationPrice: sd.ConsiderationPrice, MobileNumber: sd.MobileNumber, UploadedDocument: sd.UploadedDocument,
		StatePurpose: stampduty.StatePurpose{ID: sd.ArticleID, DocumentID: sd.ArticleDocumentID, PurposeName: sd.PurposeName}}
	if o.StampDuty.Duty, err = decodeDuty(sd.Du); err != nil {
		return stampduty.Order{}, stampduty.Internal(fmt.Errorf("decode order: %w", err))
	}
	return o, nil
}

// The orders table's global secondary indexes (template.yaml defines them).
// by-document-keys and queue-shards project the keys only (the table's and
// their own): a write rewrites their entry only when it changes those, so
// a change that keeps the order's status, and the relay's outbox updates,
// write neither index; a read through them fetches the items from the
// table (GetItem, BatchGetItem).
const (
	// DocumentIndex is keyed by doc, keys only: an order's key by its
	// documentId.
	DocumentIndex = "by-document-keys"
	// QueueIndex is keyed by (qs, qk), keys only: the orders waiting in a
	// status, oldest first within each of the status's shards.
	QueueIndex = "queue-shards"
	// OutboxIndex is keyed by (obp, obk), sparse: the orders with pending
	// events, the longest-waiting first.
	OutboxIndex = "outbox"
)

// orderKey is an order item's key, as the keys-only indexes project it.
type orderKey struct {
	Owner string `dynamodbav:"owner"`
	Seq   int64  `dynamodbav:"seq"`
}

// av returns k as a GetItem's or BatchGetItem's Key.
func (k orderKey) av() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"owner": avS(k.Owner), "seq": avN(k.Seq)}
}

// docKeys remembers, per instance, the key of each order looked up by its
// documentId: an order's key never changes and orders are never deleted,
// so an entry never goes stale. Up to maxDocKeys entries (about 100 bytes
// each), then it starts again; an unknown documentId is not remembered.
type docKeys struct {
	mu   sync.Mutex
	keys map[string]orderKey
}

// maxDocKeys bounds a docKeys.
const maxDocKeys = 10000

func (c *docKeys) get(doc string) (orderKey, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.keys[doc]
	return k, ok
}

func (c *docKeys) put(doc string, k orderKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.keys) >= maxDocKeys {
		clear(c.keys)
	}
	c.keys[doc] = k
}

// ByDocument returns the order with documentId doc: its key from one Query
// of the documentId index (which projects only the keys, so that changes do
// not rewrite it; skipped when this instance looked doc up before, see
// docKeys), then the order with its papers (readOrder: one Query of its
// range), both eventually consistent (a change shows a moment later): 2
// calls and 1 RCU for an order under 4 KB (1 call and 0.5 RCU when the key
// is known), whatever its number of papers. ENOTFOUND when there is none.
func (s *Orders) ByDocument(ctx context.Context, doc string) (orders.Stored, error) {
	k, ok := s.keys.get(doc)
	if !ok {
		var err error
		if k, err = s.keyOf(ctx, doc); err != nil {
			return orders.Stored{}, err
		}
	}
	o, found, err := s.readOrder(ctx, k.Owner, k.Seq, false)
	if err == nil && !found { // never deleted; only a write the index saw and this read did not yet
		err = stampduty.Errorf(stampduty.ENOTFOUND, "no order %s", doc)
	}
	return o, err
}

// keyOf returns the key of the order with documentId doc from the
// documentId index, and remembers it; ENOTFOUND when there is none.
func (s *Orders) keyOf(ctx context.Context, doc string) (orderKey, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(DocumentIndex),
		KeyConditionExpression:    aws.String("doc = :doc"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":doc": avS(doc)},
	})
	if err != nil {
		return orderKey{}, fail("Query", err)
	}
	if len(out.Items) == 0 {
		return orderKey{}, stampduty.Errorf(stampduty.ENOTFOUND, "no order %s", doc)
	}
	var k orderKey
	if err := attributevalue.UnmarshalMap(out.Items[0], &k); err != nil {
		return orderKey{}, stampduty.Internal(fmt.Errorf("decode order key: %w", err))
	}
	s.keys.put(doc, k)
	return k, nil
}

// Reread returns the order stored at o's key now, with its papers: a
// strongly consistent readOrder. A live order is never deleted, so one
// that is gone is an internal error; a test order's is ENOTFOUND: its TTL
// removed it (expiry.go).
func (s *Orders) Reread(ctx context.Context, o orders.Stored) (orders.Stored, error) {
	now, found, err := s.readOrder(ctx, o.Owner, o.Seq, true)
	if err == nil && !found {
		if _, live := stampduty.CallerOf(o.Owner); !live {
			return now, stampduty.Errorf(stampduty.ENOTFOUND, "test order %s#%d has expired", o.Owner, o.Seq)
		}
		err = stampduty.Internal(fmt.Errorf("order %s#%d is gone", o.Owner, o.Seq))
	}
	return now, err
}

// Replace stores next at old's key as version old.Version+1, with
// old.Outbox followed by events as its pending events, with one conditional
// PutItem: the stored version must still be old's (an order
// stored before versions existed has none). A change stored in between
// fails the condition, and Replace returns orders.ErrChanged: no change is
// ever lost. The queue keys are recomputed from next. An order of several
// papers (old.Apart) has the one item its change is in written
// (replaceApart).
func (s *Orders) Replace(ctx context.Context, old orders.Stored, next stampduty.Order, events ...stampduty.Pending) error {
	if old.Apart != nil {
		return s.replaceApart(ctx, old, next, events)
	}
	outbox := append(old.Outbox[:len(old.Outbox):len(old.Outbox)], events...)
	item, err := attributevalue.MarshalMap(newOrderItem(old.Owner, old.Seq, next, old.Version+1, outbox))
	if err != nil {
		return stampduty.Internal(fmt.Errorf("encode order: %w", err))
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}
	if old.Version == 0 {
		in.ConditionExpression = aws.String("attribute_exists(seq) AND attribute_not_exists(v)")
	} else {
		in.ConditionExpression = aws.String("v = :v")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": avN(old.Version)}
	}
	if _, err := s.db.client.PutItem(ctx, in); err != nil {
		if conditionFailed(err) {
			return fmt.Errorf("replace order %s: %w", old.DocumentID, orders.ErrChanged)
		}
		return writeFail("PutItem", err)
	}
	return nil
}
