package store

// This file holds the step jobs of test orders (orders.Steps): one job per
// test order in the deliveries table, filed under the order's owner and
// orders.StepsHook, due when the order's next step is. It sits in the due
// index with the delivery jobs, so the dispatcher's reads of that index,
// made anyway, find it: nothing polls for test orders.

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/webhooks"
)

// Schedule makes the first step of owner's test order doc due at at: one
// PutItem of its step job (sk job#<doc>, type orders.StepType, no order
// body), on condition that the order has none, so a create retried with its
// documentId schedules nothing twice.
func (s *Deliveries) Schedule(ctx context.Context, owner, doc string, at time.Time) error {
	next := stampduty.FormatTime(at)
	pk := deliveriesPK(owner, orders.StepsHook)
	it := jobItem{PK: pk, SK: jobSK(doc), eventItem: eventItem{ID: doc, Type: orders.StepType, At: next},
		Next: next, DuePK: jobDueShard(pk, doc), DueKey: dueKey(next, pk, doc),
		// The order's TTL, counted from the first step's due time: seconds
		// after the order's createdAt.
		Expires: testExpires(owner, next)}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return stampduty.Internal(fmt.Errorf("encode step job: %w", err))
	}
	_, err = s.db.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(sk)"),
	})
	_, err = applied("PutItem", err)
	return err
}

// Stepped stores step job j after a step, releasing its lease: due again at
// j.Next with j.N, or, when j.Next is "", done (j.Done) and out of the
// indexes. One UpdateItem, on condition that the job is not done.
func (s *Deliveries) Stepped(ctx context.Context, j webhooks.Job) error {
	in := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOfJob(j.Owner, j.Webhook, j.ID),
		ConditionExpression:       aws.String("attribute_not_exists(done)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": avN(int64(j.N))},
	}
	if j.Next != "" {
		pk := deliveriesPK(j.Owner, j.Webhook)
		in.UpdateExpression = aws.String("SET #next = :next, dp = :dp, dk = :dk, n = :n REMOVE ls")
		in.ExpressionAttributeNames = map[string]string{"#next": "next"}
		in.ExpressionAttributeValues[":next"] = avS(j.Next)
		in.ExpressionAttributeValues[":dp"] = avS(jobDueShard(pk, j.ID))
		in.ExpressionAttributeValues[":dk"] = avS(dueKey(j.Next, pk, j.ID))
	} else {
		in.UpdateExpression = aws.String("SET done = :done, n = :n" + leave)
		in.ExpressionAttributeNames = map[string]string{"#next": "next"}
		in.ExpressionAttributeValues[":done"] = avS(j.Done)
	}
	if _, err := s.db.client.UpdateItem(ctx, in); err != nil {
		if conditionFailed(err) {
			return nil // done already: a step of another run ended it
		}
		return writeFail("UpdateItem", err)
	}
	return nil
}

// isStep reports whether a job item is a test order's step job.
func (it jobItem) isStep() bool { return it.Type == orders.StepType }

var _ orders.Steps = (*Deliveries)(nil)
