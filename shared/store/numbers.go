package store

// This file holds the numbers table: which paper holds each e-stamp number
// (papers.md, "A number names one paper in the whole service"), one item a
// number, written with a conditional PutItem before the paper's own write.

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
)

// Numbers is the numbers table: key n, one item per number a paper holds
// or is about to hold (orders.Claim). No index: a number is only ever
// looked up by itself.
type Numbers struct {
	db    *DB
	table string
}

// Numbers returns the numbers table of the given name.
func (db *DB) Numbers(table string) *Numbers { return &Numbers{db: db, table: table} }

// numberItem is an orders.Claim as stored, through attributevalue:
//
//	n        the key: <field code>#<number>, test#<field code>#<number> for a
//	         test paper's (its numbers are unique among test papers only)
//	o, d, p  the paper's order's owner and documentId, the paper's documentId
//	t, tk    when the claim was made (Unix ms) and the token naming it
//	expires  a test paper's claim: TTL with its order's test data
//	         (testExpires); absent for a live one, which never expires
type numberItem struct {
	Key     string `dynamodbav:"n"`
	Owner   string `dynamodbav:"o"`
	Order   string `dynamodbav:"d"`
	Paper   string `dynamodbav:"p"`
	At      int64  `dynamodbav:"t"`
	Token   string `dynamodbav:"tk"`
	Expires int64  `dynamodbav:"expires,omitempty"`
}

// fieldCodes are the key's codes of the numbered fields.
var fieldCodes = map[string]string{orders.FieldDocRef: "ref", orders.FieldCertificateNumber: "cn"}

// numberKey is the key of c's number.
func numberKey(c orders.Claim) string {
	k := fieldCodes[c.Field] + "#" + c.Number
	if c.Test {
		k = "test#" + k
	}
	return k
}

func newNumberItem(c orders.Claim) numberItem {
	it := numberItem{Key: numberKey(c), Owner: c.Owner, Order: c.Order, Paper: c.Paper, At: c.At.UnixMilli(), Token: c.Token}
	if c.Test {
		it.Expires = testExpires(c.Owner, c.CreatedAt)
	}
	return it
}

// claim returns it as the claim of c's number (Field, Number and Test are
// c's: the key says them).
func (it numberItem) claim(c orders.Claim) orders.Claim {
	return orders.Claim{Field: c.Field, Number: c.Number, Test: c.Test, Owner: it.Owner, Order: it.Order, Paper: it.Paper,
		At: time.UnixMilli(it.At), Token: it.Token}
}

// Claim puts c with one PutItem conditioned on the number having no claim
// or c's paper's (attribute_not_exists(n) OR p = :p); when the condition
// fails, one consistent GetItem reads the claim that stands (DynamoDB can
// return it with the failure, but dynalite cannot: one code path). 1 WCU;
// +1 RCU when the number is another paper's.
func (s *Numbers) Claim(ctx context.Context, c orders.Claim) (orders.Claim, bool, error) {
	err := s.put(ctx, c, "attribute_not_exists(n) OR p = :p", map[string]types.AttributeValue{":p": avS(c.Paper)})
	if err == nil {
		return c, true, nil
	}
	if !conditionFailed(err) {
		return orders.Claim{}, false, writeFail("PutItem", err)
	}
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table),
		Key: attr("n", avS(numberKey(c))), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return orders.Claim{}, false, fail("GetItem", err)
	}
	if out.Item == nil {
		// Released between the two calls: the caller tries again.
		return orders.Claim{Field: c.Field, Number: c.Number, Test: c.Test}, false, nil
	}
	var it numberItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return orders.Claim{}, false, stampduty.Internal(fmt.Errorf("decode number %s: %w", numberKey(c), err))
	}
	return it.claim(c), false, nil
}

// Take puts c in place of old with one PutItem conditioned on old's token
// (an empty token: on there being no claim); orders.ErrClaimChanged when
// the condition fails.
func (s *Numbers) Take(ctx context.Context, old, c orders.Claim) error {
	cond, vals := "tk = :tk", map[string]types.AttributeValue{":tk": avS(old.Token)}
	if old.Token == "" {
		cond, vals = "attribute_not_exists(n)", nil
	}
	err := s.put(ctx, c, cond, vals)
	switch {
	case err == nil:
		return nil
	case conditionFailed(err):
		return fmt.Errorf("take number %s: %w", numberKey(c), orders.ErrClaimChanged)
	}
	return writeFail("PutItem", err)
}

// Release deletes c with one DeleteItem conditioned on its token: a claim
// taken over since is left alone.
func (s *Numbers) Release(ctx context.Context, c orders.Claim) error {
	_, err := s.db.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table),
		Key: attr("n", avS(numberKey(c))), ConditionExpression: aws.String("tk = :tk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":tk": avS(c.Token)}})
	if err != nil && !conditionFailed(err) {
		return writeFail("DeleteItem", err)
	}
	return nil
}

// put writes c's item on condition cond with the values vals.
func (s *Numbers) put(ctx context.Context, c orders.Claim, cond string, vals map[string]types.AttributeValue) error {
	item, err := attributevalue.MarshalMap(newNumberItem(c))
	if err != nil {
		return stampduty.Internal(fmt.Errorf("encode number %s: %w", numberKey(c), err))
	}
	_, err = s.db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item,
		ConditionExpression: aws.String(cond), ExpressionAttributeValues: vals})
	return err
}

// Each calls visit with every order of the table, each read whole (its
// papers too), eventually consistent: a Scan of the items' keys, then one
// Query per order (readOrder), in the order the Scan meets them. It is the
// backfill's read (orders.ClaimStored), an operator's command run once,
// not a request's: 0.5 RCU per 4 KB of the table for the Scan, plus the
// orders' reads.
func (s *Orders) Each(ctx context.Context, visit func(orders.Stored) error) error {
	in := &dynamodb.ScanInput{TableName: aws.String(s.table), ProjectionExpression: aws.String("#o, seq, doc, vd, p"),
		ExpressionAttributeNames: map[string]string{"#o": "owner"}}
	return s.db.scanWith(ctx, in, func(items []map[string]types.AttributeValue) error {
		for _, item := range items {
			if _, ok := item["doc"]; !ok || isVoid(item) || isPaper(item) {
				continue // a caller's counter or voids item, a void, a paper's item
			}
			var key struct {
				Owner string `dynamodbav:"owner"`
				Seq   int64  `dynamodbav:"seq"`
			}
			if err := attributevalue.UnmarshalMap(item, &key); err != nil {
				return stampduty.Internal(fmt.Errorf("decode an order's key: %w", err))
			}
			o, found, err := s.readOrder(ctx, key.Owner, key.Seq, false)
			if err != nil {
				return err
			}
			if found {
				if err := visit(o); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
