package store

// This file holds the ledger table (accounts.md): each caller's account
// item and its entries, in one partition per owner. How it holds without
// transactions (the crash points between its two writes, and what repairs
// each) is in README.md beside this file, "The ledger".

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

// Ledger is the ledger table: key owner (S) and k (S). k "account" is the
// owner's account item; k "e#<seq, 12 digits>" its entries, oldest first;
// k "d#<YYYY-MM-DD>" the first entry of each day (India's), for the
// statements and the CSV's date ranges.
type Ledger struct {
	db    *DB
	table string
}

// Ledger returns the ledger table of the given name.
func (db *DB) Ledger(table string) *Ledger { return &Ledger{db: db, table: table} }

// The sort keys of a ledger partition.
const (
	accountKey  = "account"
	entryPrefix = "e#"
	dayPrefix   = "d#"
)

// entryKey is the sort key of entry seq: e# and 12 digits, so that the
// keys sort as the seqs do.
func entryKey(seq int64) string { return fmt.Sprintf("%s%012d", entryPrefix, seq) }

// accountItem is an account as stored.
//
//	bal, held   balance and held, in paise
//	room        balance + limit − held (limit 0 when unlimited): what a
//	            guarded change checks, as DynamoDB conditions cannot add
//	lim         the credit limit; absent is unlimited
//	thr         the low-balance threshold; absent is none
//	low         available is below thr and has not risen above it since
//	n           the number of entries: the newest entry's seq
//	at          when the newest entry or setting was made (Unix ms)
//	tc … tr     the running totals: credits, charges, adjustments, holds,
//	            releases
//	last        the newest entry, without what the item itself says of it
//	            (its seq is n, its after-values bal and held, its totals
//	            tc … tr): written in the change's own UpdateItem, so that
//	            no change is ever stored without its entry (see README.md)
type accountItem struct {
	Owner     string     `dynamodbav:"owner"`
	K         string     `dynamodbav:"k"`
	Balance   int64      `dynamodbav:"bal"`
	Held      int64      `dynamodbav:"held"`
	Room      int64      `dynamodbav:"room"`
	Limit     *int64     `dynamodbav:"lim,omitempty"`
	Threshold *int64     `dynamodbav:"thr,omitempty"`
	Low       bool       `dynamodbav:"low,omitempty"`
	N         int64      `dynamodbav:"n"`
	At        int64      `dynamodbav:"at"`
	Credits   int64      `dynamodbav:"tc"`
	Charges   int64      `dynamodbav:"tg"`
	Adjusts   int64      `dynamodbav:"ta"`
	Holds     int64      `dynamodbav:"th"`
	Releases  int64      `dynamodbav:"tr"`
	Last      *lastEntry `dynamodbav:"last,omitempty"`
}

// lastEntry is an entry as the account item's last holds it.
type lastEntry struct {
	ID          string `dynamodbav:"id"`
	Type        string `dynamodbav:"ty"`
	Amount      int64  `dynamodbav:"am"`
	Order       string `dynamodbav:"o,omitempty"`
	Fulfillment string `dynamodbav:"f,omitempty"`
	Reference   string `dynamodbav:"rf,omitempty"`
	Note        string `dynamodbav:"nt,omitempty"`
	By          string `dynamodbav:"by"`
	Sub         string `dynamodbav:"sub,omitempty"`
	At          int64  `dynamodbav:"at"`
}

// entryItem is an entry as stored at e#<seq>: lastEntry with its place and
// its after-values.
type entryItem struct {
	Owner string `dynamodbav:"owner"`
	K     string `dynamodbav:"k"`
	lastEntry
	Seq      int64 `dynamodbav:"n"`
	Balance  int64 `dynamodbav:"ba"`
	Held     int64 `dynamodbav:"ha"`
	Credits  int64 `dynamodbav:"tc"`
	Charges  int64 `dynamodbav:"tg"`
	Adjusts  int64 `dynamodbav:"ta"`
	Holds    int64 `dynamodbav:"th"`
	Releases int64 `dynamodbav:"tr"`
}

func newLastEntry(e accounts.Entry) lastEntry {
	return lastEntry{ID: e.ID, Type: e.Type, Amount: int64(e.Amount), Order: e.Order, Fulfillment: e.Fulfillment,
		Reference: e.Reference, Note: e.Note, By: e.By, Sub: e.Sub, At: e.CreatedAt.UnixMilli()}
}

func (l lastEntry) entry() accounts.Entry {
	return accounts.Entry{ID: l.ID, Type: l.Type, Amount: accounts.Money(l.Amount), Order: l.Order, Fulfillment: l.Fulfillment,
		Reference: l.Reference, Note: l.Note, By: l.By, Sub: l.Sub, CreatedAt: time.UnixMilli(l.At).UTC()}
}

// totals returns the running totals the item holds.
func (it accountItem) totals() accounts.Totals {
	return accounts.Totals{Credits: accounts.Money(it.Credits), Charges: accounts.Money(it.Charges),
		Adjustments: accounts.Money(it.Adjusts), Holds: accounts.Money(it.Holds), Releases: accounts.Money(it.Releases)}
}

// account returns the account the item stores.
func (it accountItem) account(owner string) accounts.Account {
	a := accounts.Account{Owner: owner, Balance: accounts.Money(it.Balance), Held: accounts.Money(it.Held),
		Low: it.Low, Seq: it.N, Totals: it.totals(), Opened: it.K != ""}
	if it.Limit != nil {
		v := accounts.Money(*it.Limit)
		a.Limit = &v
	}
	if it.Threshold != nil {
		v := accounts.Money(*it.Threshold)
		a.Threshold = &v
	}
	if it.At != 0 {
		a.UpdatedAt = time.UnixMilli(it.At).UTC()
	}
	return a
}

// newest returns the item's newest entry whole (nil when it has none).
func (it accountItem) newest() *accounts.Entry {
	if it.Last == nil {
		return nil
	}
	e := it.Last.entry()
	e.Seq, e.BalanceAfter, e.HeldAfter, e.Totals = it.N, accounts.Money(it.Balance), accounts.Money(it.Held), it.totals()
	return &e
}

// newEntryItem returns e as stored at its seq.
func newEntryItem(owner string, e accounts.Entry) entryItem {
	return entryItem{Owner: owner, K: entryKey(e.Seq), lastEntry: newLastEntry(e), Seq: e.Seq,
		Balance: int64(e.BalanceAfter), Held: int64(e.HeldAfter),
		Credits: int64(e.Totals.Credits), Charges: int64(e.Totals.Charges), Adjusts: int64(e.Totals.Adjustments),
		Holds: int64(e.Totals.Holds), Releases: int64(e.Totals.Releases)}
}

func (it entryItem) entry() accounts.Entry {
	e := it.lastEntry.entry()
	e.Seq, e.BalanceAfter, e.HeldAfter = it.Seq, accounts.Money(it.Balance), accounts.Money(it.Held)
	e.Totals = accounts.Totals{Credits: accounts.Money(it.Credits), Charges: accounts.Money(it.Charges),
		Adjustments: accounts.Money(it.Adjusts), Holds: accounts.Money(it.Holds), Releases: accounts.Money(it.Releases)}
	return e
}

func (s *Ledger) key(owner, k string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"owner": &types.AttributeValueMemberS{Value: owner}, "k": &types.AttributeValueMemberS{Value: k}}
}

// decodeAccount reads an account item; an empty item is an account never
// stored.
func decodeAccount(item map[string]types.AttributeValue) (accountItem, error) {
	var it accountItem
	if len(item) == 0 {
		return it, nil
	}
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return it, fmt.Errorf("decode account: %w", err)
	}
	return it, nil
}

// Account returns owner's account: one strongly consistent GetItem. An
// account never stored reads with its defaults: unlimited, nothing held.
func (s *Ledger) Account(ctx context.Context, owner string) (accounts.Account, error) {
	it, err := s.readAccount(ctx, owner)
	return it.account(owner), err
}

// readAccount reads owner's account item: one strongly consistent GetItem
// (the zero item when it is not stored).
func (s *Ledger) readAccount(ctx context.Context, owner string) (accountItem, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: s.key(owner, accountKey), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return accountItem{}, fail("GetItem", err)
	}
	it, err := decodeAccount(out.Item)
	if err != nil {
		return accountItem{}, stampduty.Internal(err)
	}
	return it, nil
}

// n is a DynamoDB number.
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// Apply appends ch to owner's ledger in two calls: an UpdateItem of the
// account item that moves its numbers and puts the entry in its last
// (ReturnValues ALL_OLD: the account before it, whose last is the entry
// before this one), then a BatchWriteItem of this entry and the one before
// it at their seqs. The entry before is written again by every change after
// it, so an entry whose own writer stopped between its two calls is stored
// by the next change (or the reconciler, which reads last); writing it
// again writes the same item. The UpdateItem's condition refuses an entry
// that is already the account's last: a retry of a change whose answer was
// lost finds its own entry there and is answered as Replayed.
func (s *Ledger) Apply(ctx context.Context, owner string, ch accounts.Change) (accounts.Applied, error) {
	e := ch.Entry
	db, dh := e.Effects()
	values := map[string]types.AttributeValue{
		":one": n(1), ":z": n(0), ":at": n(e.CreatedAt.UnixMilli()), ":id": &types.AttributeValueMemberS{Value: e.ID},
	}
	last, err := attributevalue.Marshal(newLastEntry(e))
	if err != nil {
		return accounts.Applied{}, stampduty.Internal(fmt.Errorf("encode entry: %w", err))
	}
	values[":last"] = last
	set := "SET n = if_not_exists(n, :z) + :one, #at = :at, #last = :last"
	add := ""
	addN := func(attr string, v accounts.Money) {
		if v == 0 {
			return
		}
		if add == "" {
			add = " ADD "
		} else {
			add += ", "
		}
		add += attr + " :" + attr
		values[":"+attr] = n(int64(v))
	}
	addN("bal", db)
	addN("held", dh)
	addN("room", db-dh)
	var totals accounts.Totals
	totals = totals.Add(e.Type, e.Amount)
	addN("tc", totals.Credits)
	addN("tg", totals.Charges)
	addN("ta", totals.Adjustments)
	addN("th", totals.Holds)
	addN("tr", totals.Releases)
	cond := "(attribute_not_exists(#last) OR #last.id <> :id)"
	if need := -(db - dh); ch.Guard && need > 0 {
		cond += " AND (attribute_not_exists(lim) OR room >= :need)"
		values[":need"] = n(int64(need))
	}
	if accounts.MustOpen(owner) {
		cond += " AND attribute_exists(n)"
	}
	if ch.IfSeq != nil {
		cond += " AND (n = :seq OR (attribute_not_exists(n) AND :seq = :z))"
		values[":seq"] = n(*ch.IfSeq)
	}
	out, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: s.key(owner, accountKey),
		UpdateExpression:                    aws.String(set + add),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            map[string]string{"#at": "at", "#last": "last"},
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			return accounts.Applied{}, writeFail("UpdateItem", err)
		}
		return s.refused(ctx, owner, ch)
	}
	old, err := decodeAccount(out.Attributes)
	if err != nil {
		return accounts.Applied{}, stampduty.Internal(err)
	}
	now := old
	now.K = accountKey
	now.N, now.At = old.N+1, e.CreatedAt.UnixMilli()
	now.Balance, now.Held, now.Room = old.Balance+int64(db), old.Held+int64(dh), old.Room+int64(db-dh)
	now.Credits, now.Charges, now.Adjusts = old.Credits+int64(totals.Credits), old.Charges+int64(totals.Charges), old.Adjusts+int64(totals.Adjustments)
	now.Holds, now.Releases = old.Holds+int64(totals.Holds), old.Releases+int64(totals.Releases)
	le := newLastEntry(e)
	now.Last = &le
	mine := now.newest()
	// The account's first change lists it for the reconciler (ledgerscan.go).
	if err := s.putWrites(ctx, owner, old.N == 0, old.newest(), mine); err != nil {
		return accounts.Applied{}, err
	}
	return accounts.Applied{Entry: *mine, Account: now.account(owner)}, nil
}

// refused answers an Apply whose condition failed, from the account as it
// stands (a consistent GetItem: dynalite does not return the item with the
// failure, so both engines take this one path) and, when its newest entry
// is another, the newest entries (a consistent Query of the last
// replayWindow): a change whose entry is there was applied before (a
// retry whose first answer was lost: Replayed, and its entry is written
// again, in case its first writer stopped before). Otherwise the account is
// not opened, changed since IfSeq, or has no room.
func (s *Ledger) refused(ctx context.Context, owner string, ch accounts.Change) (accounts.Applied, error) {
	old, err := s.readAccount(ctx, owner)
	if err != nil {
		return accounts.Applied{}, err
	}
	acct := old.account(owner)
	if old.Last != nil && old.Last.ID == ch.Entry.ID {
		mine := old.newest()
		if err := s.putEntries(ctx, owner, mine); err != nil {
			return accounts.Applied{}, err
		}
		return accounts.Applied{Entry: *mine, Account: acct, Replayed: true}, nil
	}
	switch {
	case old.K == "" && accounts.MustOpen(owner):
		return accounts.Applied{}, accounts.ErrNotOpened
	case old.K == "":
		return accounts.Applied{}, &accounts.NoRoomError{Account: acct}
	}
	recent, err := s.Entries(ctx, owner, old.N-replayWindow+1, old.N)
	if err != nil {
		return accounts.Applied{}, err
	}
	for _, e := range recent {
		if e.ID == ch.Entry.ID {
			return accounts.Applied{Entry: e, Account: acct, Replayed: true}, nil
		}
	}
	if ch.IfSeq != nil && old.N != *ch.IfSeq {
		return accounts.Applied{}, accounts.ErrChanged
	}
	return accounts.Applied{}, &accounts.NoRoomError{Account: acct}
}

// replayWindow is how many of the newest entries a refused change looks
// among for its own: a retry comes within seconds of its first attempt,
// and the entries made in between by other requests are fewer.
const replayWindow = 32

// putEntries stores es (nil ones skipped) at their seqs, in one
// BatchWriteItem: plain puts of the same item whoever writes it.
func (s *Ledger) putEntries(ctx context.Context, owner string, es ...*accounts.Entry) error {
	return s.putWrites(ctx, owner, false, es...)
}

// putWrites is putEntries that also puts owner's listing (ledgerscan.go)
// when list is true, in the same BatchWriteItem.
func (s *Ledger) putWrites(ctx context.Context, owner string, list bool, es ...*accounts.Entry) error {
	var writes []types.WriteRequest
	if list {
		writes = append(writes, s.listing(owner))
	}
	for _, e := range es {
		if e == nil {
			continue
		}
		item, err := attributevalue.MarshalMap(newEntryItem(owner, *e))
		if err != nil {
			return stampduty.Internal(fmt.Errorf("encode entry: %w", err))
		}
		writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	if len(writes) == 0 {
		return nil
	}
	return s.db.batchWrite(ctx, s.table, writes)
}

// Open stores owner's account as a is, with opening as its first entry when
// not nil, unless the account is stored already (PutItem with
// attribute_not_exists); then it returns the account as stored.
func (s *Ledger) Open(ctx context.Context, owner string, a accounts.Account, opening *accounts.Entry) (accounts.Account, error) {
	it := accountItem{Owner: owner, K: accountKey, At: time.Now().UnixMilli()}
	if a.Limit != nil {
		v := int64(*a.Limit)
		it.Limit, it.Room = &v, v
	}
	if a.Threshold != nil {
		v := int64(*a.Threshold)
		it.Threshold = &v
	}
	if opening != nil {
		db, _ := opening.Effects()
		le := newLastEntry(*opening)
		it.N, it.Last, it.At = 1, &le, opening.CreatedAt.UnixMilli()
		it.Balance, it.Room = int64(db), it.Room+int64(db)
		t := accounts.Totals{}.Add(opening.Type, opening.Amount)
		it.Credits, it.Adjusts = int64(t.Credits), int64(t.Adjustments)
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return accounts.Account{}, stampduty.Internal(fmt.Errorf("encode account: %w", err))
	}
	_, err = s.db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item,
		ConditionExpression:                 aws.String("attribute_not_exists(k)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		stored, err := decodeAccount(ccf.Item)
		if err != nil {
			return accounts.Account{}, stampduty.Internal(err)
		}
		return stored.account(owner), nil
	case err != nil:
		return accounts.Account{}, writeFail("PutItem", err)
	}
	if err := s.putWrites(ctx, owner, true, it.newest()); err != nil {
		return accounts.Account{}, err
	}
	return it.account(owner), nil
}

// Configure sets owner's limit and threshold (nil: unlimited, none) and its
// Low flag, on condition that its newest entry is still seq: room is
// recomputed from the balance and held read with seq, which no entry has
// moved since. One UpdateItem.
func (s *Ledger) Configure(ctx context.Context, owner string, seq int64, limit, threshold *accounts.Money, low bool, at time.Time) (accounts.Account, error) {
	cur, err := s.Account(ctx, owner)
	if err != nil {
		return accounts.Account{}, err
	}
	if cur.Seq != seq {
		return accounts.Account{}, accounts.ErrChanged
	}
	room := cur.Balance - cur.Held
	if limit != nil {
		room += *limit
	}
	values := map[string]types.AttributeValue{":room": n(int64(room)), ":at": n(at.UnixMilli()), ":z": n(0),
		":seq": n(seq), ":low": &types.AttributeValueMemberBOOL{Value: low}}
	set := "SET room = :room, #at = :at, low = :low, n = if_not_exists(n, :z), bal = if_not_exists(bal, :z), held = if_not_exists(held, :z)"
	var remove []string
	if limit != nil {
		set += ", lim = :lim"
		values[":lim"] = n(int64(*limit))
	} else {
		remove = append(remove, "lim")
	}
	if threshold != nil {
		set += ", thr = :thr"
		values[":thr"] = n(int64(*threshold))
	} else {
		remove = append(remove, "thr")
	}
	expr := set
	if len(remove) > 0 {
		expr += " REMOVE " + join(remove)
	}
	out, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: s.key(owner, accountKey),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("n = :seq OR (attribute_not_exists(n) AND :seq = :z)"),
		ExpressionAttributeNames:  map[string]string{"#at": "at"},
		ExpressionAttributeValues: values,
		ReturnValues:              types.ReturnValueAllNew,
	})
	switch {
	case conditionFailed(err):
		return accounts.Account{}, accounts.ErrChanged
	case err != nil:
		return accounts.Account{}, writeFail("UpdateItem", err)
	}
	it, err := decodeAccount(out.Attributes)
	if err != nil {
		return accounts.Account{}, stampduty.Internal(err)
	}
	if it.N == 0 { // an account set up before its first change: list it
		if err := s.putWrites(ctx, owner, true); err != nil {
			return accounts.Account{}, err
		}
	}
	return it.account(owner), nil
}

// MarkLow sets the account's low flag to low unless it is so already:
// changed says this call changed it, so that of the changes that cross the
// threshold together only one tells the caller.
func (s *Ledger) MarkLow(ctx context.Context, owner string, low bool) (bool, error) {
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: s.key(owner, accountKey),
		UpdateExpression:          aws.String("SET low = :low"),
		ConditionExpression:       aws.String("attribute_exists(k) AND (attribute_not_exists(low) OR low <> :low)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":low": &types.AttributeValueMemberBOOL{Value: low}},
	})
	switch {
	case conditionFailed(err):
		return false, nil
	case err != nil:
		return false, writeFail("UpdateItem", err)
	}
	return true, nil
}

// join writes names comma-separated.
func join(names []string) string {
	out := ""
	for i, s := range names {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

// Entries returns owner's entries with seqs lo … hi (both included), newest
// first: one Query of the range, strongly consistent, 0.5 RCU per 4 KB (an
// entry is about 200 bytes: a page of 100 is 3 RCU).
func (s *Ledger) Entries(ctx context.Context, owner string, lo, hi int64) ([]accounts.Entry, error) {
	if hi < lo || hi < 1 {
		return nil, nil
	}
	lo = max(lo, 1)
	in := &dynamodb.QueryInput{
		TableName:                &s.table,
		KeyConditionExpression:   aws.String("#o = :o AND k BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":o": &types.AttributeValueMemberS{Value: owner}, ":lo": &types.AttributeValueMemberS{Value: entryKey(lo)},
			":hi": &types.AttributeValueMemberS{Value: entryKey(hi)}},
		ScanIndexForward: aws.Bool(false),
		ConsistentRead:   aws.Bool(true),
	}
	var out []accounts.Entry
	for {
		page, err := s.db.client.Query(ctx, in)
		if err != nil {
			return nil, fail("Query", err)
		}
		for _, item := range page.Items {
			var it entryItem
			if err := attributevalue.UnmarshalMap(item, &it); err != nil {
				return nil, stampduty.Internal(fmt.Errorf("decode entry: %w", err))
			}
			out = append(out, it.entry())
		}
		if page.LastEvaluatedKey == nil {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}
