package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
)

// batchKeys is the most keys one BatchGetItem may ask for.
const batchKeys = 100

// batchGet reads the items at keys (distinct) of table with BatchGetItem,
// eventually consistent, up to batchKeys a call, asking again for the keys
// DynamoDB leaves unprocessed (throttling, size) after a short wait while
// ctx allows, and hands each item found to each. A key with no item is
// not handed on.
func (db *DB) batchGet(ctx context.Context, table string, keys []map[string]types.AttributeValue, each func(map[string]types.AttributeValue) error) error {
	for chunk := range slices.Chunk(keys, batchKeys) {
		for try := 0; len(chunk) > 0; try++ {
			if try > 0 {
				if err := sleep(ctx, time.Duration(try)*20*time.Millisecond); err != nil {
					return stampduty.Unavailable(fmt.Errorf("read %s: %d keys left unprocessed: %w", table, len(chunk), err))
				}
			}
			out, err := db.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
				RequestItems: map[string]types.KeysAndAttributes{table: {Keys: chunk}}})
			if err != nil {
				return fail("BatchGetItem", err)
			}
			for _, item := range out.Responses[table] {
				if err := each(item); err != nil {
					return err
				}
			}
			chunk = out.UnprocessedKeys[table].Keys
		}
	}
	return nil
}

// batchWrite runs writes with BatchWriteItem, 25 a call, asking again for
// what DynamoDB leaves unprocessed.
func (db *DB) batchWrite(ctx context.Context, table string, writes []types.WriteRequest) error {
	for chunk := range slices.Chunk(writes, 25) {
		for try := 0; len(chunk) > 0; try++ {
			if try > 0 {
				if err := sleep(ctx, time.Duration(try)*50*time.Millisecond); err != nil {
					return stampduty.Unavailable(fmt.Errorf("write %s: %d items unprocessed: %w", table, len(chunk), err))
				}
			}
			out, err := db.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
				RequestItems: map[string][]types.WriteRequest{table: chunk}})
			if err != nil {
				return fail("BatchWriteItem", err)
			}
			chunk = out.UnprocessedItems[table]
		}
	}
	return nil
}
