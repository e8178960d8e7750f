package store

// This file holds the ledger table's reads for the caller's account API
// (accounts.md, Caller endpoints): the account with its newest entry, one
// entry by seq (the binary searches over createdAt), and a seq range read
// through a filter on type and order (the filtered entry pages).

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

// Head returns owner's account and its newest entry (nil when it has
// none), as the account item holds them: one strongly consistent GetItem.
// The newest entry is in the item itself (its last), so a reader that
// merges it never sees the account ahead of its entries, even while the
// entry's own item is not written yet.
func (s *Ledger) Head(ctx context.Context, owner string) (accounts.Account, *accounts.Entry, error) {
	it, err := s.readAccount(ctx, owner)
	if err != nil {
		return accounts.Account{}, nil, err
	}
	return it.account(owner), it.newest(), nil
}

// EntryAt returns owner's entry seq, nil when its item is not stored (no
// such seq, or its writer is between its two calls): one strongly
// consistent GetItem, 1 RCU (an entry is far below 4 KB).
func (s *Ledger) EntryAt(ctx context.Context, owner string, seq int64) (*accounts.Entry, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: s.key(owner, entryKey(seq)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fail("GetItem", err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	var it entryItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return nil, stampduty.Internal(fmt.Errorf("decode entry: %w", err))
	}
	e := it.entry()
	return &e, nil
}

// maxFilteredPages bounds the Query pages (1 MB each, about 5,000
// entries) one EntriesWhere reads: a filter that matches little answers a
// short page and where to go on, never a read of the whole ledger.
const maxFilteredPages = 4

// EntriesWhere returns up to limit of owner's entries with seqs lo … hi
// that f keeps, newest first, read by a Query of the range with a
// FilterExpression (type IN …, o = …): DynamoDB bills what it reads, not
// what it keeps. next is the highest seq not yet read (below lo when the
// range is done): where the next page starts.
func (s *Ledger) EntriesWhere(ctx context.Context, owner string, lo, hi int64, f accounts.EntryFilter, limit int) ([]accounts.Entry, int64, error) {
	lo = max(lo, 1)
	if hi < lo || limit < 1 {
		return nil, lo - 1, nil
	}
	names := map[string]string{"#o": "owner"}
	values := map[string]types.AttributeValue{
		":o": &types.AttributeValueMemberS{Value: owner}, ":lo": &types.AttributeValueMemberS{Value: entryKey(lo)},
		":hi": &types.AttributeValueMemberS{Value: entryKey(hi)}}
	var conds []string
	if len(f.Types) > 0 {
		var in []string
		for i, t := range f.Types {
			p := ":t" + strconv.Itoa(i)
			values[p] = &types.AttributeValueMemberS{Value: t}
			in = append(in, p)
		}
		names["#ty"] = "ty"
		conds = append(conds, "#ty IN ("+strings.Join(in, ", ")+")")
	}
	if f.Order != "" {
		names["#ord"] = "o"
		values[":ord"] = &types.AttributeValueMemberS{Value: f.Order}
		conds = append(conds, "#ord = :ord")
	}
	in := &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    aws.String("#o = :o AND k BETWEEN :lo AND :hi"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
	}
	if len(conds) > 0 {
		in.FilterExpression = aws.String(strings.Join(conds, " AND "))
	}
	var out []accounts.Entry
	for range maxFilteredPages {
		page, err := s.db.client.Query(ctx, in)
		if err != nil {
			return nil, 0, fail("Query", err)
		}
		for _, item := range page.Items {
			var it entryItem
			if err := attributevalue.UnmarshalMap(item, &it); err != nil {
				return nil, 0, stampduty.Internal(fmt.Errorf("decode entry: %w", err))
			}
			out = append(out, it.entry())
			if len(out) == limit {
				return out, it.Seq - 1, nil
			}
		}
		if page.LastEvaluatedKey == nil {
			return out, lo - 1, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	var last struct {
		K string `dynamodbav:"k"`
	}
	if err := attributevalue.UnmarshalMap(in.ExclusiveStartKey, &last); err != nil {
		return nil, 0, stampduty.Internal(fmt.Errorf("decode the last key read: %w", err))
	}
	seq, err := strconv.ParseInt(strings.TrimPrefix(last.K, entryPrefix), 10, 64)
	if err != nil {
		return nil, 0, stampduty.Internal(fmt.Errorf("the last key read %q: %w", last.K, err))
	}
	return out, seq - 1, nil
}
