package store

// This file records the attempts of webhook deliveries: their records and
// their jobs after them, many at once.

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
	"stampduty/shared/webhooks"
)

// Attempted records attempts, then stores their jobs as they are after
// them (attempts, first, next or done, the index keys) with no lease:
// BatchWriteItem of the records (25 at most to a call), then of the jobs,
// each whole (a job item holds only what its Job does, so a put is the
// update), retrying what DynamoDB leaves unprocessed. The records go
// first, so that no attempt goes unrecorded; if the run dies between
// them, the lease runs out and the attempt is made again, as delivery at
// least once allows. A dispatcher gathers the attempts that end together
// into one call (webhooks.Dispatcher).
func (s *Deliveries) Attempted(ctx context.Context, done ...webhooks.AttemptDone) error {
	var records, jobs []types.WriteRequest
	for _, d := range done {
		j, a := d.Job, d.Attempt
		rec, err := attributevalue.MarshalMap(attemptItem{PK: deliveriesPK(j.Owner, j.Webhook),
			SK: fmt.Sprintf("att#%s#%s#%02d", a.At, a.EventID, a.Attempt), ID: a.EventID, Type: a.Type, N: a.Attempt,
			Status: a.Status, At: a.At, MS: a.DurationMS, Next: a.NextAttemptAt, Expires: testExpires(j.Owner, j.Order.CreatedAt)})
		if err != nil {
			return stampduty.Internal(fmt.Errorf("encode attempt: %w", err))
		}
		job, err := attributevalue.MarshalMap(newJobItem(j))
		if err != nil {
			return stampduty.Internal(fmt.Errorf("encode job: %w", err))
		}
		records = append(records, types.WriteRequest{PutRequest: &types.PutRequest{Item: rec}})
		jobs = append(jobs, types.WriteRequest{PutRequest: &types.PutRequest{Item: job}})
	}
	for _, batch := range [][]types.WriteRequest{records, jobs} {
		for len(batch) > 0 {
			n := min(len(batch), maxBatchWrite)
			if err := s.writeAll(ctx, batch[:n]); err != nil {
				return err
			}
			batch = batch[n:]
		}
	}
	return nil
}

// maxBatchWrite is how many items one BatchWriteItem may carry.
const maxBatchWrite = 25

// writeAll writes reqs with BatchWriteItem, again for what comes back
// unprocessed (after 10, 20, 40… ms), at most 8 times.
func (s *Deliveries) writeAll(ctx context.Context, reqs []types.WriteRequest) error {
	for try := 0; ; try++ {
		out, err := s.db.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{s.table: reqs}})
		if err != nil {
			return writeFail("BatchWriteItem", err)
		}
		if reqs = out.UnprocessedItems[s.table]; len(reqs) == 0 {
			return nil
		}
		if try == 7 {
			return writeFail("BatchWriteItem", fmt.Errorf("%d items left unprocessed", len(reqs)))
		}
		select {
		case <-time.After(10 * time.Millisecond << try):
		case <-ctx.Done():
			return writeFail("BatchWriteItem", ctx.Err())
		}
	}
}
