package store

// This file holds the credits' references (accounts.md: a credit is
// idempotent by its reference per account): a claim item per reference in
// the owner's ledger partition, k "r#<reference>", kept for the account's
// life (the ledger's replay window covers only its newest entries).
//
// A credit (accounts.Staff.Credit) is five calls: the account read
// (GetItem), the claim (PutItem, attribute_not_exists), the credit's
// change (UpdateItem of the account on the seq read, BatchWriteItem of the
// entries), the claim's seq (UpdateItem). Its crash points:
//
//   - before the claim: nothing is written;
//   - after the claim, before the change: a claim without its credit. The
//     next request with that reference (the admin's retry; the same amount,
//     as another is refused) finds no entry after the claim's seq and
//     applies it;
//   - after the account's update, before the entries' write: the entry is
//     the account's last, which Find reads, and the next change writes it;
//   - after the change, before the claim's seq: the next request finds
//     the entry among those after the claim's seq (one Query) and records it.
//
// No entry of the credit's id can be written twice: each try applies it on
// the seq whose entries since the claim it looked through (Change.IfSeq).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

// refPrefix starts the sort key of a credit's reference claim.
const refPrefix = "r#"

// refItem is a credit's reference claim as stored.
//
//	am     the amount first recorded with it (paise)
//	aft    the account's seq read before the claim: the credit comes after
//	seq    the credit entry's seq once known applied; absent before
//	sub    the admin who first recorded it; at when (Unix ms)
type refItem struct {
	Owner  string `dynamodbav:"owner"`
	K      string `dynamodbav:"k"`
	Amount int64  `dynamodbav:"am"`
	After  int64  `dynamodbav:"aft"`
	Seq    int64  `dynamodbav:"seq,omitempty"`
	Sub    string `dynamodbav:"sub"`
	At     int64  `dynamodbav:"at"`
}

func (it refItem) claim() accounts.Claim {
	return accounts.Claim{Reference: it.K[len(refPrefix):], Amount: accounts.Money(it.Amount), After: it.After,
		Seq: it.Seq, Sub: it.Sub, At: time.UnixMilli(it.At).UTC()}
}

// References returns the credits' references of the ledger table.
func (s *Ledger) References() *References { return &References{l: s} }

// References keeps the credits' references in the ledger table
// (accounts.References).
type References struct{ l *Ledger }

var _ accounts.References = (*References)(nil)

// Claim stores c unless owner has a claim of c.Reference (one PutItem,
// attribute_not_exists), else reads the stored one (a consistent GetItem).
func (r *References) Claim(ctx context.Context, owner string, c accounts.Claim) (accounts.Claim, bool, error) {
	it := refItem{Owner: owner, K: refPrefix + c.Reference, Amount: int64(c.Amount), After: c.After, Sub: c.Sub, At: c.At.UnixMilli()}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return accounts.Claim{}, false, stampduty.Internal(fmt.Errorf("encode reference: %w", err))
	}
	_, err = r.l.db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &r.l.table, Item: item,
		ConditionExpression: aws.String("attribute_not_exists(k)")})
	switch {
	case err == nil:
		return it.claim(), true, nil
	case !conditionFailed(err):
		return accounts.Claim{}, false, writeFail("PutItem", err)
	}
	out, err := r.l.db.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &r.l.table,
		Key: r.l.key(owner, it.K), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return accounts.Claim{}, false, fail("GetItem", err)
	}
	var stored refItem
	if err := attributevalue.UnmarshalMap(out.Item, &stored); err != nil || stored.K == "" {
		return accounts.Claim{}, false, stampduty.Internal(fmt.Errorf("decode reference %s of %s: %v", c.Reference, owner, err))
	}
	return stored.claim(), false, nil
}

// errLedgerHole is a ledger whose entries have a gap below its newest (two
// writers in a row stopped between their calls): a credit is not applied
// on it, as its entry could be the one missing.
var errLedgerHole = errors.New("the ledger misses an entry")

// Find reads owner's account (a consistent GetItem) and looks for the
// entry id after seq after: the account's last (its newest, which its own
// writer may not have written yet), then the entries before it (one Query
// of the range, none when there are none). An entry of the range not
// written yet (its writer and the next one are between their two calls)
// is waited for a little, then Find reads again; a gap that stays (both
// writers stopped) is EUNAVAILABLE, never taken for "not there".
func (r *References) Find(ctx context.Context, owner, id string, after int64) (accounts.Account, *accounts.Entry, error) {
	var err error
	for try := range findTries {
		if try > 0 {
			if err := sleep(ctx, time.Duration(25<<try)*time.Millisecond); err != nil {
				return accounts.Account{}, nil, fail("Query", err)
			}
		}
		var a accounts.Account
		var e *accounts.Entry
		if a, e, err = r.find(ctx, owner, id, after); !errors.Is(err, errLedgerHole) {
			return a, e, err
		}
	}
	return accounts.Account{}, nil, stampduty.Unavailable(err)
}

// findTries is how often Find reads a range with a gap: the waits add up
// to about 1.5 s, far more than a writer between its two calls takes.
const findTries = 6

// find is one try of Find.
func (r *References) find(ctx context.Context, owner, id string, after int64) (accounts.Account, *accounts.Entry, error) {
	out, err := r.l.db.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &r.l.table, Key: r.l.key(owner, accountKey), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return accounts.Account{}, nil, fail("GetItem", err)
	}
	it, err := decodeAccount(out.Item)
	if err != nil {
		return accounts.Account{}, nil, stampduty.Internal(err)
	}
	a := it.account(owner)
	if it.N <= after {
		return a, nil, nil
	}
	if it.Last != nil && it.Last.ID == id {
		return a, it.newest(), nil
	}
	es, err := r.l.Entries(ctx, owner, after+1, it.N-1)
	if err != nil {
		return accounts.Account{}, nil, err
	}
	for _, e := range es {
		if e.ID == id {
			return a, &e, nil
		}
	}
	if int64(len(es)) != it.N-1-after {
		return accounts.Account{}, nil, fmt.Errorf("find %s in %s: %w (%d of seqs %d…%d)", id, owner, errLedgerHole, len(es), after+1, it.N-1)
	}
	return a, nil, nil
}

// Settle records on ref's claim that its credit is the entry seq (one
// UpdateItem; a claim settled already keeps its seq, which is the same).
func (r *References) Settle(ctx context.Context, owner, ref string, seq int64) error {
	_, err := r.l.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &r.l.table, Key: r.l.key(owner, refPrefix+ref),
		UpdateExpression:          aws.String("SET seq = :seq"),
		ConditionExpression:       aws.String("attribute_exists(k) AND attribute_not_exists(seq)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":seq": n(seq)},
	})
	switch {
	case conditionFailed(err):
		return nil
	case err != nil:
		return writeFail("UpdateItem", err)
	}
	return nil
}

// Entry returns owner's entry seq: one consistent GetItem; ENOTFOUND when
// it is not written.
func (r *References) Entry(ctx context.Context, owner string, seq int64) (accounts.Entry, error) {
	out, err := r.l.db.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &r.l.table, Key: r.l.key(owner, entryKey(seq)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return accounts.Entry{}, fail("GetItem", err)
	}
	if len(out.Item) == 0 {
		return accounts.Entry{}, stampduty.Errorf(stampduty.ENOTFOUND, "no entry %d of %s", seq, owner)
	}
	var it entryItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return accounts.Entry{}, stampduty.Internal(fmt.Errorf("decode entry: %w", err))
	}
	return it.entry(), nil
}
