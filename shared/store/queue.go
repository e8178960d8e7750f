package store

// This file holds the operators' work queue: the queue index's keys, its
// pages and their cursors, and the backfill of orders stored before it.

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

	"stampduty/shared/stampduty"
)

// queueKey is o's sort key in the queue index: createdAt#documentId, so
// that the queue is oldest first, ties broken by documentId.
func queueKey(o stampduty.Order) string { return o.CreatedAt + "#" + o.DocumentID }

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
func (s *Orders) Queue(ctx context.Context, status, cursor string, size int) ([]stampduty.OpsOrder, string, error) {
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
			return nil, "", stampduty.Errorf(stampduty.EINVALID, "Invalid pagination[cursor]: not a cursor of this queue")
		}
		if in.ExclusiveStartKey, err = attributevalue.MarshalMap(c); err != nil {
			return nil, "", stampduty.Internal(err)
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
			return nil, "", stampduty.Internal(fmt.Errorf("queue cursor: %w", err))
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
	if dec.Decode(&c) != nil || stampduty.StatusRank(c.Status) < 0 || c.Key == "" || c.Owner == "" || c.Seq < 1 {
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
			if _, ok := item["doc"]; !ok { // a caller's counter or a void (seq.go)
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
