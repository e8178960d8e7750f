package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/rules"
)

// The orders table's global secondary indexes (template.yaml defines them).
// Both project every attribute, so that a read through them is one call.
const (
	// DocumentIndex is keyed by doc: an order by its documentId.
	DocumentIndex = "by-document"
	// QueueIndex is keyed by (qs, qk): the orders waiting in a status,
	// oldest first.
	QueueIndex = "queue"
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

// Replace stores next at old's key as version old.Version+1, with one
// conditional PutItem: the stored version must still be old's (an order
// stored before versions existed has none). A change stored in between
// fails the condition, and Replace returns orders.ErrChanged: no change is
// ever lost. The queue keys are recomputed from next.
func (s *Orders) Replace(ctx context.Context, old orders.Stored, next rules.Order) error {
	item, err := attributevalue.MarshalMap(newOrderItem(old.Owner, old.Seq, next, old.Version+1))
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
	page := make([]rules.OpsOrder, 0, len(out.Items))
	for _, item := range out.Items {
		o, err := decodeStored(item)
		if err != nil {
			return nil, "", err
		}
		page = append(page, o.OpsOrder)
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
					":qs": avS(o.QueueStatus()), ":qk": avS(o.CreatedAt + "#" + o.DocumentID)},
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
