package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/rules"
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
}

// Orders returns the orders table of the given name.
func (db *DB) Orders(table string) *Orders { return &Orders{db: db, table: table, attempts: 400} }

// An order is stored as one orderItem, through attributevalue. Attribute
// names are short: DynamoDB bills them with every read and write, and a
// typical order stays under 1 KB.
//
//	owner, seq          the key
//	id, doc, at, up     id, documentId, createdAt, updatedAt (absent until the first change)
//	v                   the version: 1 when stored, +1 with each change (absent on orders
//	                    stored before fulfillment existed: version 0)
//	qs, qk              the work queue: the order's queue status (rules.Order.QueueStatus)
//	                    and createdAt#documentId, the keys of the queue index
//	ff                  fulfillments: list of {id, doc, st, ref, cn, cf?, h?}; h is the
//	                    status history [{st, at, by?}] (absent on orders stored before it)
//	sd                  stamp duty: {id, amt, desc, n1, a1, p1, n2, a2, p2, pb, pu, q,
//	                    state, cp, mob, aid, adoc, purpose, ud?}; ud is the caller's document
//	cf, ud              files: {id, doc, name, mime, size, sha, key, at}
//	ob                  the outbox: the events of its changes not yet relayed, oldest
//	                    first: list of {id, t, at, ps?, st?, o}; t is the type, ps and st
//	                    the statuses of an order.status_changed, o the order right after
//	                    the change as id, doc, at, up?, ff, sd (absent when empty)
//	obp, obk            while ob is not empty: "pending" and <at of its oldest event>#doc,
//	                    the keys of the outbox index
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
}

// orderBody is the order itself as an item stores it, without its key,
// version and index keys: in the order's item, and in each of its pending
// events (so that file keys survive and download addresses are made when
// the event is sent).
type orderBody struct {
	ID           int64               `dynamodbav:"id"`
	DocumentID   string              `dynamodbav:"doc"`
	CreatedAt    string              `dynamodbav:"at"`
	UpdatedAt    string              `dynamodbav:"up,omitempty"`
	Fulfillments []rules.Fulfillment `dynamodbav:"ff"`
	StampDuty    *stampDutyItem      `dynamodbav:"sd"`
}

// eventItem is a rules.Pending as an order's outbox stores it.
type eventItem struct {
	ID             string    `dynamodbav:"id"`
	Type           string    `dynamodbav:"t"`
	Order          orderBody `dynamodbav:"o"`
	At             string    `dynamodbav:"at"`
	PreviousStatus *string   `dynamodbav:"ps,omitempty"`
	Status         *string   `dynamodbav:"st,omitempty"`
}

// outboxPending is the outbox index's partition key on every order with
// pending events.
const outboxPending = "pending"

// stampDutyItem is a rules.StampDuty as stored in an order's sd, its
// StatePurpose flattened into aid, adoc and purpose.
type stampDutyItem struct {
	ID                 int64       `dynamodbav:"id"`
	Amount             int64       `dynamodbav:"amt"`
	Description        string      `dynamodbav:"desc"`
	FirstPartyName     string      `dynamodbav:"n1"`
	FirstPartyAddress  string      `dynamodbav:"a1"`
	FirstPartyPAN      string      `dynamodbav:"p1"`
	SecondPartyName    string      `dynamodbav:"n2"`
	SecondPartyAddress string      `dynamodbav:"a2"`
	SecondPartyPAN     string      `dynamodbav:"p2"`
	PaidBy             string      `dynamodbav:"pb"`
	PurchasedBy        string      `dynamodbav:"pu"`
	Quantity           int64       `dynamodbav:"q"`
	State              string      `dynamodbav:"state"`
	ConsiderationPrice int64       `dynamodbav:"cp"`
	MobileNumber       string      `dynamodbav:"mob"`
	ArticleID          int64       `dynamodbav:"aid"`
	ArticleDocumentID  string      `dynamodbav:"adoc"`
	PurposeName        string      `dynamodbav:"purpose"`
	UploadedDocument   *rules.File `dynamodbav:"ud,omitempty"`
}

// queueKey is o's sort key in the queue index: createdAt#documentId, so
// that the queue is oldest first, ties broken by documentId.
func queueKey(o rules.Order) string { return o.CreatedAt + "#" + o.DocumentID }

// newOrderItem returns o as owner's order number seq at version v, with
// the pending events outbox.
func newOrderItem(owner string, seq int64, o rules.Order, v int64, outbox []rules.Pending) orderItem {
	it := orderItem{Owner: owner, Seq: seq, orderBody: newOrderBody(o), Version: v,
		QueueStatus: o.QueueStatus(), QueueKey: queueKey(o), Outbox: newEventItems(outbox)}
	if len(outbox) > 0 {
		it.OutboxState, it.OutboxKey = outboxPending, outboxKey(outbox, o.DocumentID)
	}
	return it
}

// outboxKey is an order's sort key in the outbox index: the time of its
// oldest pending event, then its documentId, so the relay takes the
// longest-waiting orders first.
func outboxKey(outbox []rules.Pending, doc string) string { return outbox[0].At + "#" + doc }

// newEventItems returns the outbox's items (nil for none).
func newEventItems(outbox []rules.Pending) []eventItem {
	var items []eventItem
	for _, p := range outbox {
		items = append(items, newEventItem(p))
	}
	return items
}

// newEventItem returns p as an outbox (or a delivery job) stores it.
func newEventItem(p rules.Pending) eventItem {
	return eventItem{ID: p.ID, Type: p.Type, At: p.At, PreviousStatus: p.PreviousStatus,
		Status: p.Status, Order: newOrderBody(p.Order)}
}

// pending returns the event e stores.
func (e eventItem) pending() (rules.Pending, error) {
	o, err := e.Order.order()
	if err != nil {
		return rules.Pending{}, err
	}
	return rules.Pending{ID: e.ID, Type: e.Type, At: e.At, PreviousStatus: e.PreviousStatus, Status: e.Status, Order: o}, nil
}

// newOrderBody returns o as an item stores it.
func newOrderBody(o rules.Order) orderBody {
	sd := o.StampDuty
	up := o.UpdatedAt
	if up == o.CreatedAt {
		up = ""
	}
	return orderBody{ID: o.ID, DocumentID: o.DocumentID, CreatedAt: o.CreatedAt, UpdatedAt: up,
		Fulfillments: o.Fulfillments,
		StampDuty: &stampDutyItem{ID: sd.ID, Amount: sd.Amount, Description: sd.Description,
			FirstPartyName: sd.FirstPartyName, FirstPartyAddress: sd.FirstPartyAddress, FirstPartyPAN: sd.FirstPartyPAN,
			SecondPartyName: sd.SecondPartyName, SecondPartyAddress: sd.SecondPartyAddress, SecondPartyPAN: sd.SecondPartyPAN,
			PaidBy: sd.PaidBy, PurchasedBy: sd.PurchasedBy, Quantity: sd.Quantity, State: sd.State,
			ConsiderationPrice: sd.ConsiderationPrice, MobileNumber: sd.MobileNumber,
			ArticleID: sd.StatePurpose.ID, ArticleDocumentID: sd.StatePurpose.DocumentID, PurposeName: sd.StatePurpose.PurposeName,
			UploadedDocument: sd.UploadedDocument}}
}

// decodeItems reads order items (decodeStored) and returns what part
// takes of each.
func decodeItems[T any](items []map[string]types.AttributeValue, part func(orders.Stored) T) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, item := range items {
		o, err := decodeStored(item)
		if err != nil {
			return nil, err
		}
		out = append(out, part(o))
	}
	return out, nil
}

// theOrder, theOpsOrder and theStored are parts of a stored order, for decodeItems.
func theOrder(s orders.Stored) rules.Order       { return s.Order }
func theOpsOrder(s orders.Stored) rules.OpsOrder { return s.OpsOrder }
func theStored(s orders.Stored) orders.Stored    { return s }

// decodeStored reads an order item with its key and version. An order
// stored before fulfillment existed reads as one that never changed: its
// updatedAt is its createdAt, and each fulfillment's history is Pending at
// createdAt.
func decodeStored(item map[string]types.AttributeValue) (orders.Stored, error) {
	var it orderItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return orders.Stored{}, rules.Internal(fmt.Errorf("decode order: %w", err))
	}
	o, err := it.order()
	if err != nil {
		return orders.Stored{}, err
	}
	s := orders.Stored{OpsOrder: rules.OpsOrder{Order: o, Owner: it.Owner}, Seq: it.Seq, Version: it.Version}
	for _, e := range it.Outbox {
		p, err := e.pending()
		if err != nil {
			return orders.Stored{}, err
		}
		s.Outbox = append(s.Outbox, p)
	}
	return s, nil
}

// order returns the order it stores (see decodeStored).
func (it orderBody) order() (rules.Order, error) {
	if it.StampDuty == nil {
		return rules.Order{}, rules.Internal(errors.New("decode order: order without stamp duty"))
	}
	o := rules.Order{ID: it.ID, DocumentID: it.DocumentID, CreatedAt: it.CreatedAt, UpdatedAt: cmp.Or(it.UpdatedAt, it.CreatedAt),
		Fulfillments: it.Fulfillments}
	for i, f := range o.Fulfillments {
		if len(f.History) == 0 {
			o.Fulfillments[i].History = []rules.StatusEntry{{Status: rules.StatusPending, At: it.CreatedAt}}
		}
	}
	sd := it.StampDuty
	o.StampDuty = rules.StampDuty{ID: sd.ID, Amount: sd.Amount, Description: sd.Description,
		FirstPartyName: sd.FirstPartyName, FirstPartyAddress: sd.FirstPartyAddress, FirstPartyPAN: sd.FirstPartyPAN,
		SecondPartyName: sd.SecondPartyName, SecondPartyAddress: sd.SecondPartyAddress, SecondPartyPAN: sd.SecondPartyPAN,
		PaidBy: sd.PaidBy, PurchasedBy: sd.PurchasedBy, Quantity: sd.Quantity, State: sd.State,
		ConsiderationPrice: sd.ConsiderationPrice, MobileNumber: sd.MobileNumber, UploadedDocument: sd.UploadedDocument,
		StatePurpose: rules.StatePurpose{ID: sd.ArticleID, DocumentID: sd.ArticleDocumentID, PurposeName: sd.PurposeName}}
	return o, nil
}

// Create stores o as owner's newest order and returns its seq. It reads the
// newest seq (a strongly consistent Query of one key) and puts the order at
// the next one on condition that the slot is free or already holds this very
// order (see slotFree). When another order took that slot first, every slot
// below it is taken too, so it tries the next one straight away; every few
// misses it waits a little (jittered) and reads the newest seq again to jump
// over a run of concurrent creates. It keeps trying while ctx allows, then
// fails with EUNAVAILABLE. The order's pending events, events, are part of
// the same PutItem (the outbox). An error that may hide a stored order wraps
// orders.ErrOutcomeUnknown. Whatever the network does, one Create stores o at most
// once.
func (s *Orders) Create(ctx context.Context, owner string, o rules.Order, events ...rules.Pending) (int64, error) {
	if o.DocumentID == "" {
		// slotFree recognises the order by its documentId: it must have one.
		return 0, rules.Internal(fmt.Errorf("create order: no documentId"))
	}
	n, err := s.Count(ctx, owner)
	if err != nil {
		return 0, err
	}
	seq := int64(n) + 1
	// Encoded once: from one attempt to the next only the seq changes.
	item, err := attributevalue.MarshalMap(newOrderItem(owner, seq, o, 1, events))
	if err != nil {
		return 0, rules.Internal(fmt.Errorf("encode order: %w", err))
	}
	for miss := 0; ; miss++ {
		item["seq"] = avN(seq)
		_, err := s.db.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                 aws.String(s.table),
			Item:                      item,
			ConditionExpression:       aws.String(slotFree),
			ExpressionAttributeValues: map[string]types.AttributeValue{":doc": avS(o.DocumentID)},
		})
		if err == nil {
			return seq, nil
		}
		if !conditionFailed(err) {
			return 0, writeFail("PutItem", err)
		}
		// The slot holds another order (slotFree accepts this one's own
		// earlier write), so this order is stored nowhere yet: a failed
		// condition writes nothing, and each earlier PutItem of this loop
		// ended in a failed condition too.
		if miss >= s.attempts {
			return 0, rules.Unavailable(fmt.Errorf("create order: %d tries lost the race for the next number", miss+1))
		}
		seq++
		if miss%3 == 2 {
			if err := sleep(ctx, backoff(miss/3)); err != nil {
				return 0, rules.Unavailable(err)
			}
			if n, err = s.Count(ctx, owner); err != nil {
				return 0, err
			}
			seq = max(seq, int64(n)+1)
		}
	}
}

// slotFree is the condition of an order's PutItem: the seq is free, or it
// holds this very order already (:doc is its documentId). The second half is
// what makes a create store its order at most once. When the answer to a
// PutItem is lost after DynamoDB applied it (the connection dropped, or the
// answer came after AttemptTimeout), the SDK sends the same request again; a
// plain attribute_not_exists(seq) would then fail on the order's own item,
// and Create, taking it for another request's, would store the order a
// second time at the next seq. With this condition the retry succeeds
// instead, rewriting the item with the very same bytes (the SDK serializes a
// request once and sends that body on every attempt), so nothing changes.
//
// A documentId is 24 characters from crypto/rand, chosen for this order
// alone, so no other order can match :doc. The alternatives are worse: a
// consistent GetItem of the slot after each failed condition costs a read on
// every lost race under contention, and ReturnValuesOnConditionCheckFailure
// or a transaction would do in one call what this does, but dynalite (the
// local engine the tests and the local stack run) has neither, and the same
// code must run on both. This condition is atomic, costs nothing extra, and
// behaves the same on DynamoDB and dynalite.
const slotFree = "attribute_not_exists(seq) OR doc = :doc"

// backoff is the wait before the attempt-th re-read under contention: full
// jitter over 2ms·2^attempt, at most 64 ms.
func backoff(attempt int) time.Duration {
	ceiling := 2 * time.Millisecond << min(attempt, 5)
	return time.Duration(rand.Int64N(int64(ceiling)) + 1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Find reports whether owner has an order with documentId doc created at or
// after since, reading the newest orders first and stopping at the first one
// older than since. It is how an interrupted create is checked: its order,
// if stored, is among the few newest.
func (s *Orders) Find(ctx context.Context, owner, doc string, since time.Time) (bool, error) {
	cutoff := rules.FormatTime(since)
	p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#o = :o"),
		ExpressionAttributeNames:  map[string]string{"#o": "owner", "#at": "at"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": avS(owner)},
		ProjectionExpression:      aws.String("doc, #at"),
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(25),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return false, fail("Query", err)
		}
		var items []orderItem
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
			return false, rules.Internal(fmt.Errorf("decode orders: %w", err))
		}
		for _, it := range items {
			if it.DocumentID == doc {
				return true, nil
			}
			if it.CreatedAt < cutoff {
				return false, nil
			}
		}
	}
	return false, nil
}

// Count returns how many orders owner has: the newest seq, read with one
// strongly consistent Query of one item.
func (s *Orders) Count(ctx context.Context, owner string) (int, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#o = :o"),
		ExpressionAttributeNames:  map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": avS(owner)},
		ProjectionExpression:      aws.String("seq"),
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(1),
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return 0, fail("Query", err)
	}
	if len(out.Items) == 0 {
		return 0, nil
	}
	// seq is the sort key: every item the Query returns has it.
	var it orderItem
	if err := attributevalue.UnmarshalMap(out.Items[0], &it); err != nil {
		return 0, rules.Internal(fmt.Errorf("order seq: %w", err))
	}
	return int(it.Seq), nil
}

// Page returns page (from 1) of owner's orders, newest first, size per page,
// and the exact total: Slice((page-1)*size, size).
func (s *Orders) Page(ctx context.Context, owner string, page, size int) ([]rules.Order, int, error) {
	if page < 1 || size < 1 {
		total, err := s.Count(ctx, owner)
		return []rules.Order{}, total, err
	}
	return s.Slice(ctx, owner, (page-1)*size, size)
}

// Slice returns limit of owner's orders, newest first, skipping the start
// newest, and the exact total. It costs two Queries wherever the slice is:
// the count, then the slice's seq range. The range is read eventually
// consistent (half the price); if it comes back short of what the count
// promises (an order written a moment ago not yet visible), it is read once
// more, consistently.
func (s *Orders) Slice(ctx context.Context, owner string, start, limit int) ([]rules.Order, int, error) {
	total, err := s.Count(ctx, owner)
	if err != nil {
		return nil, 0, err
	}
	// The newest seq of the slice is hi = total-start; past the end when < 1.
	if start < 0 || limit < 1 || start >= total {
		return []rules.Order{}, total, nil
	}
	hi := int64(total) - int64(start)
	lo := max(1, hi-int64(limit)+1)
	orders, err := s.seqRange(ctx, owner, lo, hi, false)
	if err != nil {
		return nil, 0, err
	}
	if int64(len(orders)) != hi-lo+1 {
		if orders, err = s.seqRange(ctx, owner, lo, hi, true); err != nil {
			return nil, 0, err
		}
	}
	return orders, total, nil
}

// seqRange returns owner's orders with lo <= seq <= hi, newest first.
func (s *Orders) seqRange(ctx context.Context, owner string, lo, hi int64, consistent bool) ([]rules.Order, error) {
	orders := make([]rules.Order, 0, hi-lo+1)
	p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
		TableName:                aws.String(s.table),
		KeyConditionExpression:   aws.String("#o = :o AND seq BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":o":  avS(owner),
			":lo": avN(lo),
			":hi": avN(hi),
		},
		ScanIndexForward: aws.Bool(false),
		ConsistentRead:   aws.Bool(consistent),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fail("Query", err)
		}
		page, err := decodeItems(out.Items, theOrder)
		if err != nil {
			return nil, err
		}
		orders = append(orders, page...)
	}
	return orders, nil
}

// The orders table's global secondary indexes (template.yaml defines them).
// Both project every attribute, so that a read through them is one call.
const (
	// DocumentIndex is keyed by doc: an order by its documentId.
	DocumentIndex = "by-document"
	// QueueIndex is keyed by (qs, qk): the orders waiting in a status,
	// oldest first.
	QueueIndex = "queue"
	// OutboxIndex is keyed by (obp, obk), sparse: the orders with pending
	// events, the longest-waiting first.
	OutboxIndex = "outbox"
)

// ByDocument returns the order with documentId doc from the documentId
// index: one Query of one item, eventually consistent (a change shows a
// moment later), ENOTFOUND when there is none.
func (s *Orders) ByDocument(ctx context.Context, doc string) (orders.Stored, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(DocumentIndex),
		KeyConditionExpression:    aws.String("doc = :doc"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":doc": avS(doc)},
	})
	if err != nil {
		return orders.Stored{}, fail("Query", err)
	}
	if len(out.Items) == 0 {
		return orders.Stored{}, rules.Errorf(rules.ENOTFOUND, "no order %s", doc)
	}
	return decodeStored(out.Items[0])
}

// lookups is how many documentId Queries ByDocuments runs at once.
const lookups = 10

// ByDocuments returns owner's orders among the documentIds docs, newest
// first: one Query of the documentId index per id (ByDocument), lookups at
// a time, so the cost follows len(docs), never the number of owner's
// orders. An id that is unknown, or another owner's, is left out.
func (s *Orders) ByDocuments(ctx context.Context, owner string, docs []string) ([]rules.Order, error) {
	found := make([]orders.Stored, len(docs))
	errs := make([]error, len(docs))
	sem := make(chan struct{}, lookups)
	var wg sync.WaitGroup
	for i, doc := range docs {
		if doc == "" { // no order has one, and DynamoDB refuses an empty key
			errs[i] = rules.Errorf(rules.ENOTFOUND, "no order")
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			found[i], errs[i] = s.ByDocument(ctx, doc)
		}()
	}
	wg.Wait()
	var own []orders.Stored
	for i, o := range found {
		switch err := errs[i]; {
		case rules.ErrorCode(err) == rules.ENOTFOUND:
		case err != nil:
			return nil, err
		case o.Owner == owner:
			own = append(own, o)
		}
	}
	slices.SortFunc(own, func(a, b orders.Stored) int { return cmp.Compare(b.Seq, a.Seq) })
	out := make([]rules.Order, len(own))
	for i, o := range own {
		out[i] = o.Order
	}
	return out, nil
}

// Reread returns the order stored at o's key now: a strongly consistent
// GetItem.
func (s *Orders) Reread(ctx context.Context, o orders.Stored) (orders.Stored, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            map[string]types.AttributeValue{"owner": avS(o.Owner), "seq": avN(o.Seq)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return orders.Stored{}, fail("GetItem", err)
	}
	if out.Item == nil {
		return orders.Stored{}, rules.Internal(fmt.Errorf("order %s#%d is gone", o.Owner, o.Seq))
	}
	return decodeStored(out.Item)
}

// Replace stores next at old's key as version old.Version+1, with
// old.Outbox followed by events as its pending events, with one conditional
// PutItem: the stored version must still be old's (an order
// stored before versions existed has none). A change stored in between
// fails the condition, and Replace returns orders.ErrChanged: no change is
// ever lost. The queue keys are recomputed from next.
func (s *Orders) Replace(ctx context.Context, old orders.Stored, next rules.Order, events ...rules.Pending) error {
	outbox := append(old.Outbox[:len(old.Outbox):len(old.Outbox)], events...)
	item, err := attributevalue.MarshalMap(newOrderItem(old.Owner, old.Seq, next, old.Version+1, outbox))
	if err != nil {
		return rules.Internal(fmt.Errorf("encode order: %w", err))
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

// Pending returns up to limit orders with pending events (their Outbox),
// the one whose oldest event has waited longest first: one Query of the
// outbox index, which holds only such orders, eventually consistent (an
// event shows a moment after its change, and stays a moment after it is
// relayed: relaying is idempotent, see Relayed).
func (s *Orders) Pending(ctx context.Context, limit int) ([]orders.Stored, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(OutboxIndex),
		KeyConditionExpression:    aws.String("obp = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": avS(outboxPending)},
		Limit:                     aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fail("Query", err)
	}
	return decodeItems(out.Items, theStored)
}

// Relayed removes the events ids from the outbox of o, an order as Pending
// (or a read) returned it, once the relay has handed them on: one
// UpdateItem that rewrites ob without them (and drops it, with the index
// keys, when none is left), on condition that o's version and outbox are
// still the stored ones. The relay never changes the version, so it never
// makes a change of the order fail; the only writes that change an outbox
// without changing the version are Relayed's own removals, so the version
// and the outbox's length and first id being unchanged means the outbox is
// the one read. A failed condition is orders.ErrChanged (wrapped): read
// again and retry. A writer who read the order before the relay removed
// its events writes them back with its change (it stores the outbox it
// read); the relay then finds them again, which is why relaying an event
// twice must do nothing the second time.
func (s *Orders) Relayed(ctx context.Context, o orders.Stored, ids []string) error {
	if len(o.Outbox) == 0 {
		return nil
	}
	rest := slices.DeleteFunc(slices.Clone(o.Outbox), func(p rules.Pending) bool { return slices.Contains(ids, p.ID) })
	if len(rest) == len(o.Outbox) {
		return nil
	}
	in := &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 map[string]types.AttributeValue{"owner": avS(o.Owner), "seq": avN(o.Seq)},
		ConditionExpression: aws.String("v = :v AND size(ob) = :n AND ob[0].id = :first"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":v": avN(o.Version), ":n": avN(int64(len(o.Outbox))), ":first": avS(o.Outbox[0].ID)},
	}
	if len(rest) == 0 {
		in.UpdateExpression = aws.String("REMOVE ob, obp, obk")
	} else {
		ob, err := attributevalue.Marshal(newEventItems(rest))
		if err != nil {
			return rules.Internal(fmt.Errorf("encode outbox: %w", err))
		}
		in.UpdateExpression = aws.String("SET ob = :ob, obk = :k")
		in.ExpressionAttributeValues[":ob"] = ob
		in.ExpressionAttributeValues[":k"] = avS(outboxKey(rest, o.DocumentID))
	}
	if _, err := s.db.client.UpdateItem(ctx, in); err != nil {
		if conditionFailed(err) {
			return fmt.Errorf("relay the events of order %s: %w", o.DocumentID, orders.ErrChanged)
		}
		return writeFail("UpdateItem", err)
	}
	return nil
}

// queueCursor is the position a queue page ends at: the last order's keys
// in the table and in the queue index.
type queueCursor struct {
	Status string `json:"s" dynamodbav:"qs"`
	Key    string `json:"k" dynamodbav:"qk"`
	Owner  string `json:"o" dynamodbav:"owner"`
	Seq    int64  `json:"n" dynamodbav:"seq"`
}

// Queue returns up to size orders waiting in status, oldest first (by
// createdAt, then documentId), after the position cursor names: one Query
// of the queue index whatever the position. The cursor is opaque to
// callers; one that Queue did not make for this status is EINVALID.
func (s *Orders) Queue(ctx context.Context, status, cursor string, size int) ([]rules.OpsOrder, string, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(QueueIndex),
		KeyConditionExpression:    aws.String("qs = :s"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": avS(status)},
		Limit:                     aws.Int32(int32(size)),
	}
	var err error
	if cursor != "" {
		c, ok := decodeCursor(cursor)
		if !ok || c.Status != status {
			return nil, "", rules.Errorf(rules.EINVALID, "Invalid pagination[cursor]: not a cursor of this queue")
		}
		if in.ExclusiveStartKey, err = attributevalue.MarshalMap(c); err != nil {
			return nil, "", rules.Internal(err)
		}
	}
	out, err := s.db.client.Query(ctx, in)
	if err != nil {
		return nil, "", fail("Query", err)
	}
	page, err := decodeItems(out.Items, theOpsOrder)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if lek := out.LastEvaluatedKey; len(lek) > 0 {
		var c queueCursor
		if err := attributevalue.UnmarshalMap(lek, &c); err != nil {
			return nil, "", rules.Internal(fmt.Errorf("queue cursor: %w", err))
		}
		b, _ := json.Marshal(c)
		next = base64.RawURLEncoding.EncodeToString(b)
	}
	return page, next, nil
}

// decodeCursor reads a cursor Queue made.
func decodeCursor(cursor string) (queueCursor, bool) {
	var c queueCursor
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) > 1024 {
		return c, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if dec.Decode(&c) != nil || rules.StatusRank(c.Status) < 0 || c.Key == "" || c.Owner == "" || c.Seq < 1 {
		return c, false
	}
	return c, true
}

// Backfill puts every order stored before the work queue existed into it:
// it scans the table and gives each order without queue keys its qs and
// qk (as Replace would), with a conditional UpdateItem that leaves alone an
// order a change reached first. It returns how many orders it queued.
// Running it again queues nothing more.
func (s *Orders) Backfill(ctx context.Context) (int, error) {
	n := 0
	err := s.db.scan(ctx, s.table, func(items []map[string]types.AttributeValue) error {
		for _, item := range items {
			if _, ok := item["qs"]; ok {
				continue
			}
			o, err := decodeStored(item)
			if err != nil {
				return err
			}
			_, err = s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:           aws.String(s.table),
				Key:                 map[string]types.AttributeValue{"owner": avS(o.Owner), "seq": avN(o.Seq)},
				UpdateExpression:    aws.String("SET qs = :qs, qk = :qk"),
				ConditionExpression: aws.String("attribute_exists(seq) AND attribute_not_exists(qs)"),
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":qs": avS(o.QueueStatus()), ":qk": avS(queueKey(o.Order))},
			})
			if conditionFailed(err) {
				continue
			}
			if err != nil {
				return writeFail("UpdateItem", err)
			}
			n++
		}
		return nil
	})
	return n, err
}
