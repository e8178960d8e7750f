package store

// This file holds the backfill of the work queue: the orders stored before
// it or before its shards, and the test orders stored in the live queue
// before test orders had queues of their own.

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Backfill puts every order stored before the work queue existed, or
// before its shards, into its shard: it scans the table and gives each
// order without queue keys, or with the bare status as its qs, its
// sharded qs and its qk (as Replace would), with a conditional UpdateItem
// that leaves alone an order a change reached first. A test order's item
// (or paper's) whose entry is in the live queue, stored before test
// orders had queues of their own, moves to the test queue (the same qs
// prefixed testQueue, on condition that qs is still the one read). The
// own item of an order of several papers is never queued here: without
// queue keys, its papers wait in their own items. It
// returns how many items it queued or moved. Running it again queues
// nothing more.
func (s *Orders) Backfill(ctx context.Context) (int, error) {
	n := 0
	err := s.db.scan(ctx, s.table, func(items []map[string]types.AttributeValue) error {
		for _, item := range items {
			old, ok := item["qs"].(*types.AttributeValueMemberS)
			if ok && strings.Contains(old.Value, "#") {
				moved, err := s.toTestQueue(ctx, item, old.Value)
				if err != nil {
					return err
				}
				if moved {
					n++
				}
				continue
			}
			if _, ok := item["doc"]; !ok { // a caller's counter or a void (seq.go)
				continue
			}
			if _, ok := item["pa"]; ok {
				// An order of several papers came after the queue: its own
				// item without queue keys is one whose papers all wait in
				// items of their own (the stale-entry cleanup, a cancel).
				continue
			}
			o, err := decodeStored(item)
			if err != nil {
				return err
			}
			if o.QueueStatus() == "" { // a cancelled order waits in no queue
				continue
			}
			in := &dynamodb.UpdateItemInput{
				TableName:           aws.String(s.table),
				Key:                 orderKey{o.Owner, o.Seq}.av(),
				UpdateExpression:    aws.String("SET qs = :qs, qk = :qk"),
				ConditionExpression: aws.String("attribute_exists(seq) AND attribute_not_exists(qs)"),
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":qs": avS(queuePartition(o.Owner, o.QueueStatus(), o.DocumentID)), ":qk": avS(queueKey(o.Order))},
			}
			if ok {
				in.ConditionExpression = aws.String("qs = :old")
				in.ExpressionAttributeValues[":old"] = avS(old.Value)
			}
			_, err = s.db.client.UpdateItem(ctx, in)
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

// toTestQueue moves item's queue entry, qs, to the test queue when item is
// a test order's (or paper's) and qs a live queue's (Backfill): UpdateItem
// SET qs = test#qs on condition qs = :old (a change meanwhile wrote the
// right one). It reports whether it moved the entry.
func (s *Orders) toTestQueue(ctx context.Context, item map[string]types.AttributeValue, qs string) (bool, error) {
	owner, _ := item["owner"].(*types.AttributeValueMemberS)
	if owner == nil || isLive(owner.Value) || strings.HasPrefix(qs, testQueue) {
		return false, nil
	}
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       map[string]types.AttributeValue{"owner": item["owner"], "seq": item["seq"]},
		UpdateExpression:          aws.String("SET qs = :qs"),
		ConditionExpression:       aws.String("qs = :old"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":qs": avS(testQueue + qs), ":old": avS(qs)},
	})
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, writeFail("UpdateItem", err)
	}
	return true, nil
}
