package store

// This file counts the operators' work queue per status, for the console's
// tabs (functions/console).

import (
	"context"
	"errors"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// QueueCount returns how many orders wait in status's queue, the live
// orders or, with test, the test orders (queues of their own, so neither
// count reads the other's entries): the distinct
// sort keys (createdAt#documentId, one per order; its papers share it) of
// every partition of the status (queuePartitions: the 16 shards and, for
// the live queue, the bare status), read all at once, each Query projecting qk only and paged
// by DynamoDB's 1 MB. There is no cheaper honest count: Select COUNT
// costs the same read units (DynamoDB charges the entries read, not
// returned) and could not tell one order's several papers apart; a
// counter kept on every move would add a write to each. Cost: 17 Queries
// (16 for the test queue)
// (more past 1 MB a partition), about 0.5 RCU per 4 KB of entries read
// (eventually consistent), an entry being about 100 bytes: some 80
// waiting orders per RCU. An order whose papers have all moved on may be
// counted until a page of the queue drops its stale entry (queueOrders).
func (s *Orders) QueueCount(ctx context.Context, status string, test bool) (int, error) {
	parts := queuePartitions(status, test)
	keys := make([]map[string]bool, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Go(func() { keys[i], errs[i] = s.queueKeys(ctx, p) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	all := map[string]bool{}
	for _, k := range keys {
		for key := range k {
			all[key] = true
		}
	}
	return len(all), nil
}

// queueKeys returns the sort keys of every entry of the queue partition p.
func (s *Orders) queueKeys(ctx context.Context, p string) (map[string]bool, error) {
	keys := map[string]bool{}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(QueueIndex),
		KeyConditionExpression:    aws.String("qs = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": avS(p)},
		ProjectionExpression:      aws.String("qk"),
	}
	for {
		out, err := s.db.client.Query(ctx, in)
		if err != nil {
			return nil, fail("Query", err)
		}
		for _, item := range out.Items {
			if v, ok := item["qk"].(*types.AttributeValueMemberS); ok {
				keys[v.Value] = true
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return keys, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
