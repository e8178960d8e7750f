package store

// This file holds what the reconciler (accounts.Reconciler) reads and
// writes of the ledger table beyond the order path's changes: the list of
// accounts, each account with its newest entry, an entry put again, and
// the reconciler's checkpoint per account.
//
// The accounts are found without reading any entry, and without touching
// the account item every create writes: each account has a listing item
// (k = "listed", acct = "account"), put in the same BatchWriteItem as the
// entry of the account's first change (or with Open's opening entry, or by
// Configure for an account set up before its first change), never written
// again. acct is the key of the sparse KEYS_ONLY index accountsIndex, which
// holds nothing else. So the index costs one item and 1 WCU per account's
// life, and nothing per change: the account item carries no index key,
// which keeps every engine (dynalite maintains the indexes of any item a
// write touches) from doing index work on the hot item. Listing K accounts
// is one Query per 1 MB of keys (about 20,000 accounts).
//
// Crash point: the first change's writer stops between its UpdateItem and
// its BatchWriteItem: its entry is put by the next change, its listing by
// none, so the reconciler never checks that account (its money moves as
// any other's; only the repairs would wait for a person). Left so: the
// window is one call wide, once in an account's life.

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

// The accounts index: its name, and the value of its key every account
// item carries.
const (
	accountsIndex = "accounts"
	listedValue   = "account"
)

// listed is listedValue as an expression value.
var listed = &types.AttributeValueMemberS{Value: listedValue}

// listingKey is the sort key of an account's listing item.
const listingKey = "listed"

// listing is the put of owner's listing item.
func (s *Ledger) listing(owner string) types.WriteRequest {
	item := s.key(owner, listingKey)
	item["acct"] = listed
	return types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
}

// checkpointKey is the sort key of an account's reconciler checkpoint: an
// item of its own, so that the account item every create writes never
// grows with it.
const checkpointKey = "reconciled"

// checkpointItem is an accounts.Checkpoint as stored.
//
//	n              the seq up to which the entries were checked
//	bal, held      the sums after it
//	tc … tr        the running totals after it
//	open           the orders still holding then, by documentId: h what
//	               it holds, at its hold's time (Unix ms), c the papers
//	               charged
type checkpointItem struct {
	Owner    string              `dynamodbav:"owner"`
	K        string              `dynamodbav:"k"`
	Seq      int64               `dynamodbav:"n"`
	Balance  int64               `dynamodbav:"bal"`
	Held     int64               `dynamodbav:"held"`
	Credits  int64               `dynamodbav:"tc"`
	Charges  int64               `dynamodbav:"tg"`
	Adjusts  int64               `dynamodbav:"ta"`
	Holds    int64               `dynamodbav:"th"`
	Releases int64               `dynamodbav:"tr"`
	Open     map[string]openItem `dynamodbav:"open,omitempty"`
}

// openItem is an accounts.OpenHold as stored.
type openItem struct {
	Held    int64    `dynamodbav:"h"`
	At      int64    `dynamodbav:"at"`
	Charged []string `dynamodbav:"c,omitempty"`
}

// Owners calls fn with the owners of the stored accounts, one page of the
// accounts index at a time (a Query of its one key value).
func (s *Ledger) Owners(ctx context.Context, fn func(owners []string) error) error {
	in := &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(accountsIndex),
		KeyConditionExpression:    aws.String("acct = :acct"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":acct": listed},
	}
	for {
		page, err := s.db.client.Query(ctx, in)
		if err != nil {
			return fail("Query", err)
		}
		owners := make([]string, 0, len(page.Items))
		for _, item := range page.Items {
			if o, ok := item["owner"].(*types.AttributeValueMemberS); ok {
				owners = append(owners, o.Value)
			}
		}
		if err := fn(owners); err != nil {
			return err
		}
		if page.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// PutEntry stores e at its seq: one PutItem (in a BatchWriteItem), the
// same item whoever writes it.
func (s *Ledger) PutEntry(ctx context.Context, owner string, e accounts.Entry) error {
	return s.putEntries(ctx, owner, &e)
}

// Checkpoint returns owner's reconciler checkpoint, the zero one when none
// is stored: one consistent GetItem.
func (s *Ledger) Checkpoint(ctx context.Context, owner string) (accounts.Checkpoint, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: s.key(owner, checkpointKey), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return accounts.Checkpoint{}, fail("GetItem", err)
	}
	var it checkpointItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return accounts.Checkpoint{}, stampduty.Internal(fmt.Errorf("decode checkpoint: %w", err))
	}
	c := accounts.Checkpoint{Seq: it.Seq, Balance: accounts.Money(it.Balance), Held: accounts.Money(it.Held),
		Totals: accounts.Totals{Credits: accounts.Money(it.Credits), Charges: accounts.Money(it.Charges),
			Adjustments: accounts.Money(it.Adjusts), Holds: accounts.Money(it.Holds), Releases: accounts.Money(it.Releases)},
		Open: make(map[string]accounts.OpenHold, len(it.Open))}
	for doc, o := range it.Open {
		c.Open[doc] = accounts.OpenHold{Held: accounts.Money(o.Held), At: time.UnixMilli(o.At).UTC(), Charged: o.Charged}
	}
	return c, nil
}

// SaveCheckpoint stores owner's checkpoint: one PutItem of its own item,
// about 60 bytes per open order (an account with 6,000 orders open at
// once stays under DynamoDB's 400 KB item).
func (s *Ledger) SaveCheckpoint(ctx context.Context, owner string, c accounts.Checkpoint) error {
	it := checkpointItem{Owner: owner, K: checkpointKey, Seq: c.Seq, Balance: int64(c.Balance), Held: int64(c.Held),
		Credits: int64(c.Totals.Credits), Charges: int64(c.Totals.Charges), Adjusts: int64(c.Totals.Adjustments),
		Holds: int64(c.Totals.Holds), Releases: int64(c.Totals.Releases)}
	if len(c.Open) > 0 {
		it.Open = make(map[string]openItem, len(c.Open))
		for doc, o := range c.Open {
			it.Open[doc] = openItem{Held: int64(o.Held), At: o.At.UnixMilli(), Charged: o.Charged}
		}
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return stampduty.Internal(fmt.Errorf("encode checkpoint: %w", err))
	}
	if _, err := s.db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item}); err != nil {
		return writeFail("PutItem", err)
	}
	return nil
}
