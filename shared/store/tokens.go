package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
)

// Tokens is the tokens table: key hash (the keyed hash of a token,
// auth.Hasher: 64 hex digits), and the callers' own records under the key
// `caller#<owner>`, which no token's hash can be.
type Tokens struct {
	db    *DB
	table string
}

// Tokens returns the tokens table of the given name.
func (db *DB) Tokens(table string) *Tokens { return &Tokens{db: db, table: table} }

// tokenItem is a token record as stored, through attributevalue.
type tokenItem struct {
	Hash      string `dynamodbav:"hash"`
	Owner     string `dynamodbav:"owner"`
	CreatedAt string `dynamodbav:"created_at"`
	CreatedBy string `dynamodbav:"by,omitempty"`
	RevokedAt string `dynamodbav:"revoked_at,omitempty"`
	// Test marks a test token (auth.Token.Test); absent on a live one.
	Test bool `dynamodbav:"test,omitempty"`
}

// callerPrefix starts the key of a caller's record in the tokens table.
const callerPrefix = "caller#"

func (it tokenItem) token() auth.Token {
	t := auth.Token{Hash: it.Hash, Owner: it.Owner, CreatedBy: it.CreatedBy, Test: it.Test}
	t.CreatedAt, _ = time.Parse(time.RFC3339Nano, it.CreatedAt)
	t.RevokedAt, _ = time.Parse(time.RFC3339Nano, it.RevokedAt)
	return t
}

// Token returns the token with the given hash (one GetItem), or ENOTFOUND.
func (s *Tokens) Token(ctx context.Context, hash string) (auth.Token, error) {
	if strings.HasPrefix(hash, callerPrefix) {
		return auth.Token{}, stampduty.Errorf(stampduty.ENOTFOUND, "no such token") // a caller's record is no token
	}
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table),
		Key:       map[string]types.AttributeValue{"hash": avS(hash)},
	})
	if err != nil {
		return auth.Token{}, fail("GetItem", err)
	}
	if out.Item == nil {
		return auth.Token{}, stampduty.Errorf(stampduty.ENOTFOUND, "no such token")
	}
	var it tokenItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return auth.Token{}, stampduty.Internal(fmt.Errorf("decode token: %w", err))
	}
	return it.token(), nil
}

// Create stores a token record. It fails with ECONFLICT if the hash exists.
func (s *Tokens) Create(ctx context.Context, t auth.Token) error {
	if strings.HasPrefix(t.Hash, callerPrefix) {
		return stampduty.Internal(fmt.Errorf("a token's hash cannot start with %s", callerPrefix))
	}
	return s.putNew(ctx, tokenItem{Hash: t.Hash, Owner: t.Owner, CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339Nano), CreatedBy: t.CreatedBy, Test: t.Test},
		stampduty.Errorf(stampduty.ECONFLICT, "token exists"))
}

// putNew stores it with one PutItem on condition that its hash is new;
// when it is not, the error is taken.
func (s *Tokens) putNew(ctx context.Context, it tokenItem, taken error) error {
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return stampduty.Internal(fmt.Errorf("encode a tokens-table record: %w", err))
	}
	_, err = s.db.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(s.table),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(#h)"),
		ExpressionAttributeNames: map[string]string{"#h": "hash"},
	})
	if conditionFailed(err) {
		return taken
	}
	if err != nil {
		return fail("PutItem", err)
	}
	return nil
}

// List returns every token record (a Scan: an operator's command over a small
// table), oldest first.
func (s *Tokens) List(ctx context.Context) ([]auth.Token, error) {
	_, ts, err := s.Everything(ctx)
	return ts, err
}

// Everything returns the callers' records, oldest first, and every token
// record, oldest first, with one paginated Scan of the table (0.5 RCU per
// 4 KB: a token record is about 150 bytes, so 1,000 callers with 3 tokens
// each are about 50 RCU).
func (s *Tokens) Everything(ctx context.Context) ([]auth.Caller, []auth.Token, error) {
	var cs []auth.Caller
	var ts []auth.Token
	err := s.db.scan(ctx, s.table, func(page []map[string]types.AttributeValue) error {
		var items []tokenItem
		if err := attributevalue.UnmarshalListOfMaps(page, &items); err != nil {
			return stampduty.Internal(fmt.Errorf("decode tokens: %w", err))
		}
		for _, it := range items {
			if strings.HasPrefix(it.Hash, callerPrefix) {
				cs = append(cs, it.caller())
			} else {
				ts = append(ts, it.token())
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].CreatedAt.Before(ts[j].CreatedAt) })
	sort.Slice(cs, func(i, j int) bool { return cs[i].CreatedAt.Before(cs[j].CreatedAt) })
	return cs, ts, nil
}

func (it tokenItem) caller() auth.Caller {
	c := auth.Caller{Owner: it.Owner, CreatedBy: it.CreatedBy}
	c.CreatedAt, _ = time.Parse(time.RFC3339Nano, it.CreatedAt)
	return c
}

// CreateCaller stores a caller's record with one conditional PutItem; a
// caller of that name that exists is ECONFLICT.
func (s *Tokens) CreateCaller(ctx context.Context, c auth.Caller) error {
	return s.putNew(ctx, tokenItem{Hash: callerPrefix + c.Owner, Owner: c.Owner, CreatedAt: c.CreatedAt.UTC().Format(time.RFC3339Nano), CreatedBy: c.CreatedBy},
		stampduty.Errorf(stampduty.ECONFLICT, "caller %s exists already", c.Owner))
}

// Caller returns the record of the caller owner (one GetItem, consistent:
// 1 RCU), or ENOTFOUND.
func (s *Tokens) Caller(ctx context.Context, owner string) (auth.Caller, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            map[string]types.AttributeValue{"hash": avS(callerPrefix + owner)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return auth.Caller{}, fail("GetItem", err)
	}
	if out.Item == nil {
		return auth.Caller{}, stampduty.Errorf(stampduty.ENOTFOUND, "no caller %s", owner)
	}
	var it tokenItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return auth.Caller{}, stampduty.Internal(fmt.Errorf("decode caller: %w", err))
	}
	return it.caller(), nil
}

// Revoke marks the token whose ID (a hash prefix of at least auth.IDLength
// hex digits) is id as revoked at now, and returns it. A token revoked
// already keeps its first revocation time. It fails with EINVALID for a
// shorter or ambiguous ID and ENOTFOUND when no token has it.
func (s *Tokens) Revoke(ctx context.Context, id string, now time.Time) (auth.Token, error) {
	if len(id) < auth.IDLength {
		return auth.Token{}, stampduty.Errorf(stampduty.EINVALID, "a token ID has at least %d hex digits", auth.IDLength)
	}
	ts, err := s.List(ctx)
	if err != nil {
		return auth.Token{}, err
	}
	var match []auth.Token
	for _, t := range ts {
		if strings.HasPrefix(t.Hash, strings.ToLower(id)) {
			match = append(match, t)
		}
	}
	switch len(match) {
	case 0:
		return auth.Token{}, stampduty.Errorf(stampduty.ENOTFOUND, "no token with id %s", id)
	case 1:
	default:
		return auth.Token{}, stampduty.Errorf(stampduty.EINVALID, "%d tokens have ids starting with %s", len(match), id)
	}
	t := match[0]
	if t.Revoked() {
		return t, nil
	}
	t.RevokedAt = now.UTC()
	_, err = s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       map[string]types.AttributeValue{"hash": avS(t.Hash)},
		UpdateExpression:          aws.String("SET revoked_at = :r"),
		ConditionExpression:       aws.String("attribute_exists(#h) AND attribute_not_exists(revoked_at)"),
		ExpressionAttributeNames:  map[string]string{"#h": "hash"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":r": avS(t.RevokedAt.Format(time.RFC3339Nano))},
	})
	if conditionFailed(err) {
		// Revoked meanwhile by someone else: report the stored revocation.
		return s.Token(ctx, t.Hash)
	}
	if err != nil {
		return auth.Token{}, fail("UpdateItem", err)
	}
	return t, nil
}
