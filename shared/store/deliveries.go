package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/notify"
	"stampduty/shared/rules"
	"stampduty/shared/webhooks"
)

// Deliveries is the deliveries table: key pk = "<owner>#<webhook
// documentId>" (owners never contain '#'), sk. It holds two kinds of item
// per webhook: a job per event to deliver to it (sk "job#<eventId>"), and a
// record per attempt made (sk "att#<at>#<eventId>#<attempt, 2 digits>", so
// that a Query of "att#" reads them in time order). A job that is due
// carries dp = "due" and dk = "<next>#<pk>#<eventId>", the keys of the
// sparse index due, which the dispatcher reads oldest due first.
type Deliveries struct {
	db    *DB
	table string
}

// Deliveries returns the deliveries table of the given name.
func (db *DB) Deliveries(table string) *Deliveries { return &Deliveries{db: db, table: table} }

// DueIndex is the deliveries table's index of due jobs.
const DueIndex = "due"

// due is the value of dp on a due job.
const due = "due"

// jobItem is a delivery job as stored, through attributevalue. Its order
// (o) is in the order item's own form (id, doc, at, up, ff, sd): file keys
// are kept, and addresses are pre-signed when it is sent. While the job is
// due, done is absent (the design's "": dynalite refuses empty strings) and
// dp and dk are the due index's keys.
type jobItem struct {
	PK     string    `dynamodbav:"pk"`              // <owner>#<webhook documentId>
	SK     string    `dynamodbav:"sk"`              // job#<eventId>
	ID     string    `dynamodbav:"id"`              // the event's id
	Type   string    `dynamodbav:"t"`               // its type
	At     string    `dynamodbav:"at"`              // its time
	PS     *string   `dynamodbav:"ps,omitempty"`    // the previous status (absent: null)
	ST     *string   `dynamodbav:"st,omitempty"`    // the status (absent: null)
	Order  storedMap `dynamodbav:"o"`               // the order right after the change
	OSeq   string    `dynamodbav:"oseq"`            // <order documentId>#<order version, 10 digits>: the order of an order's events
	First  string    `dynamodbav:"first,omitempty"` // the first attempt's time (absent until made)
	N      int       `dynamodbav:"n"`               // attempts made
	Next   string    `dynamodbav:"next,omitempty"`  // when the next attempt is due (absent: none is)
	Done   string    `dynamodbav:"done,omitempty"`  // delivered, gave_up or disabled; absent while due
	DuePK  string    `dynamodbav:"dp,omitempty"`    // "due" while due
	DueKey string    `dynamodbav:"dk,omitempty"`    // <next>#<pk>#<eventId> while due
}

// storedMap is a map attribute kept as stored (the order of a job, in the
// order item's form, decoded by decodeOrder).
type storedMap map[string]types.AttributeValue

// MarshalDynamoDBAttributeValue writes m as a map.
func (m storedMap) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberM{Value: m}, nil
}

// UnmarshalDynamoDBAttributeValue reads a map; anything else is an error.
func (m *storedMap) UnmarshalDynamoDBAttributeValue(v types.AttributeValue) error {
	mv, ok := v.(*types.AttributeValueMemberM)
	if !ok {
		return fmt.Errorf("not a map: %T", v)
	}
	*m = mv.Value
	return nil
}

// attemptItem is one delivery attempt as stored.
//
//	pk, sk          <owner>#<webhook documentId>, att#<at>#<eventId>#<n, 2 digits>
//	id, t, n        the event's id and type, the attempt's number (from 1)
//	status, at, ms  the receiver's status (0: none), when it started, how long it took
//	next            when the next attempt is due (absent: none)
type attemptItem struct {
	PK     string  `dynamodbav:"pk"`
	SK     string  `dynamodbav:"sk"`
	ID     string  `dynamodbav:"id"`
	Type   string  `dynamodbav:"t"`
	N      int     `dynamodbav:"n"`
	Status int     `dynamodbav:"status"`
	At     string  `dynamodbav:"at"`
	MS     int64   `dynamodbav:"ms"`
	Next   *string `dynamodbav:"next,omitempty"`
}

// deliveriesPK is the partition of owner's webhook doc.
func deliveriesPK(owner, webhook string) string { return owner + "#" + webhook }

// jobSK is the sort key of an event's job.
func jobSK(eventID string) string { return "job#" + eventID }

// dueKey is a due job's sort key in the due index: due time first.
func dueKey(next, pk, eventID string) string { return next + "#" + pk + "#" + eventID }

// OrderSeq is the oseq of an order's event: its documentId and its
// version after the change, 10 digits.
func OrderSeq(doc string, v int64) string { return fmt.Sprintf("%s#%010d", doc, v) }

// orderForm is o in the order item's own form, without the item's keys,
// version and queue attributes: what a job (and an outbox event) keeps.
func orderForm(o rules.Order) (map[string]types.AttributeValue, error) {
	m, err := attributevalue.MarshalMap(newOrderItem("", 0, o, 0))
	if err != nil {
		return nil, err
	}
	for k := range m {
		switch k {
		case "id", "doc", "at", "up", "ff", "sd":
		default:
			delete(m, k)
		}
	}
	return m, nil
}

func keyOfJob(owner, webhook, eventID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": avS(deliveriesPK(owner, webhook)), "sk": avS(jobSK(eventID))}
}

// PutJob stores j unless its webhook has a job of its event already
// (attribute_not_exists: each event is delivered once per webhook however
// often it is relayed); ok is false when it had. A job with no Done and a
// Next is due at Next.
func (s *Deliveries) PutJob(ctx context.Context, j notify.Job) (bool, error) {
	o, err := orderForm(j.Order)
	if err != nil {
		return false, rules.Internal(fmt.Errorf("encode job's order: %w", err))
	}
	pk := deliveriesPK(j.Owner, j.Webhook)
	it := jobItem{PK: pk, SK: jobSK(j.EventID), ID: j.EventID, Type: j.Type, At: j.At, PS: j.PreviousStatus, ST: j.Status,
		Order: o, OSeq: OrderSeq(j.Order.DocumentID, j.OrderVersion), First: j.First, N: j.Attempts, Next: j.Next, Done: j.Done}
	if j.Done == "" && j.Next != "" {
		it.DuePK, it.DueKey = due, dueKey(j.Next, pk, j.EventID)
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return false, rules.Internal(fmt.Errorf("encode job: %w", err))
	}
	_, err = s.db.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(sk)"),
	})
	return applied("PutItem", err)
}

// applied is the outcome of a conditional write op that answered err:
// false when its condition failed, an error when it failed otherwise.
func applied(op string, err error) (bool, error) {
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, writeFail(op, err)
	}
	return true, nil
}

// attr is a map of one attribute, for keys and expression values.
func attr(name string, v types.AttributeValue) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{name: v}
}

// Job returns the job of event eventID for owner's webhook (a strongly
// consistent GetItem); ok is false when there is none.
func (s *Deliveries) Job(ctx context.Context, owner, webhook, eventID string) (notify.Job, bool, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            keyOfJob(owner, webhook, eventID),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return notify.Job{}, false, fail("GetItem", err)
	}
	if out.Item == nil {
		return notify.Job{}, false, nil
	}
	var it jobItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return notify.Job{}, false, rules.Internal(fmt.Errorf("decode job: %w", err))
	}
	o, err := decodeOrder(it.Order)
	if err != nil {
		return notify.Job{}, false, err
	}
	var v int64
	if i := len(it.OSeq) - 10; i > 0 {
		fmt.Sscan(it.OSeq[i:], &v)
	}
	return notify.Job{Owner: owner, Webhook: webhook, EventID: it.ID, Type: it.Type, At: it.At, PreviousStatus: it.PS,
		Status: it.ST, Order: o, OrderVersion: v, First: it.First, Attempts: it.N, Next: it.Next, Done: it.Done}, true, nil
}

// Redeliver makes the job of event eventID for owner's webhook due at now,
// whatever its state (a delivered or given-up job becomes due again; its
// attempts keep counting), with one UpdateItem conditioned on the job
// existing; ok is false when it does not.
func (s *Deliveries) Redeliver(ctx context.Context, owner, webhook, eventID string, now time.Time) (bool, error) {
	pk, next := deliveriesPK(owner, webhook), rules.FormatTime(now)
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOfJob(owner, webhook, eventID),
		UpdateExpression:          aws.String("SET #next = :next, dp = :due, dk = :dk REMOVE done"),
		ConditionExpression:       aws.String("attribute_exists(sk)"),
		ExpressionAttributeNames:  map[string]string{"#next": "next"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":next": avS(next), ":due": avS(due), ":dk": avS(dueKey(next, pk, eventID))},
	})
	return applied("UpdateItem", err)
}

// PutAttempt records attempt a of owner's webhook.
func (s *Deliveries) PutAttempt(ctx context.Context, owner, webhook string, a webhooks.Attempt) error {
	item, err := attributevalue.MarshalMap(attemptItem{PK: deliveriesPK(owner, webhook),
		SK: fmt.Sprintf("att#%s#%s#%02d", a.At, a.EventID, a.Attempt), ID: a.EventID, Type: a.Type, N: a.Attempt,
		Status: a.Status, At: a.At, MS: a.DurationMS, Next: a.NextAttemptAt})
	if err != nil {
		return rules.Internal(fmt.Errorf("encode attempt: %w", err))
	}
	if _, err := s.db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return writeFail("PutItem", err)
	}
	return nil
}

// Attempts returns the newest limit attempts of owner's webhook, newest
// first: one Query of the partition's "att#" items, backwards.
func (s *Deliveries) Attempts(ctx context.Context, owner, webhook string, limit int) ([]webhooks.Attempt, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :att)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": avS(deliveriesPK(owner, webhook)), ":att": avS("att#")},
		ScanIndexForward: aws.Bool(false),
		Limit:            aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fail("Query", err)
	}
	var items []attemptItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, rules.Internal(fmt.Errorf("decode attempts: %w", err))
	}
	atts := make([]webhooks.Attempt, 0, len(items))
	for _, it := range items {
		atts = append(atts, webhooks.Attempt{EventID: it.ID, Type: it.Type, Attempt: it.N, Status: it.Status,
			At: it.At, DurationMS: it.MS, NextAttemptAt: it.Next})
	}
	return atts, nil
}
