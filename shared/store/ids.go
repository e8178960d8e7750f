package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
)

// IDs hands out unique positive integer ids from one counter item of the
// counters table. It takes them from DynamoDB in blocks (one atomic ADD per
// block) and serves them from memory, so most ids cost no DynamoDB call. Ids
// are unique across every entity (orders, fulfillments, stamp duties,
// articles); they increase within an instance but not across instances, and
// the unused rest of a block is lost when an instance ends.
type IDs struct {
	db      *DB
	table   string
	counter string
	block   int64

	mu         sync.Mutex
	next, last int64 // the ids next..last are reserved and unused
}

// IDBlock is how many ids a function reserves per counter call: 100 orders'
// worth (an order takes 3: order, fulfillment, stamp duty), so a warm create
// makes the counter call once per 100 orders.
const IDBlock = 300

// IDs returns the id source of the given counters table, reserving block ids
// per DynamoDB call.
func (db *DB) IDs(table string, block int64) *IDs {
	if block < 1 {
		block = 1
	}
	return &IDs{db: db, table: table, counter: "id", block: block}
}

// counterItem is the part of a counter item Reserve reads back: its value,
// nil when the answer has none.
type counterItem struct {
	Value *int64 `dynamodbav:"value"`
}

// Reserve returns the first of n consecutive unused ids.
func (s *IDs) Reserve(ctx context.Context, n int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last-s.next+1 < n || s.next == 0 {
		size := max(s.block, n)
		out, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.table),
			Key:                       map[string]types.AttributeValue{"name": avS(s.counter)},
			UpdateExpression:          aws.String("ADD #v :n"),
			ExpressionAttributeNames:  map[string]string{"#v": "value"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": avN(size)},
			ReturnValues:              types.ReturnValueUpdatedNew,
		})
		if err != nil {
			return 0, fail("UpdateItem", err)
		}
		var c counterItem
		if err := attributevalue.UnmarshalMap(out.Attributes, &c); err != nil {
			return 0, stampduty.Internal(fmt.Errorf("counter %s: %w", s.counter, err))
		}
		if c.Value == nil {
			return 0, stampduty.Internal(fmt.Errorf("counter %s: no value returned", s.counter))
		}
		last := *c.Value
		s.next, s.last = last-size+1, last
	}
	first := s.next
	s.next += n
	return first, nil
}
