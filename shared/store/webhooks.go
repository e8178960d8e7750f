package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
	"stampduty/shared/webhooks"
)

// Webhooks is the webhooks table: key owner, one item per caller holding
// all of the caller's webhooks, live and deleted, with a version v. Every
// change rewrites the item with a PutItem conditioned on v, so the limit of
// webhooks.MaxPerCaller holds under concurrent registrations without a
// transaction, and a caller's webhooks are one GetItem.
type Webhooks struct {
	db    *DB
	table string
}

// Webhooks returns the webhooks table of the given name.
func (db *DB) Webhooks(table string) *Webhooks { return &Webhooks{db: db, table: table} }

// hooksItem is a caller's webhooks as stored, through attributevalue.
//
//	owner   the caller (key)
//	v       version: 1 when first stored, +1 per save
//	hooks   the live webhooks, oldest first: [{id, doc, url, ev, fmt?, on, at, sec}]
//	gone    the deleted ones, newest first, at most webhooks.MaxGone: [{id, doc, url, ev, fmt?, on, at, del}]
//
// fmt is a webhook's format when it is not the default: absent is
// webhooks.FormatStampduty, so the webhooks stored before formats existed
// read as what they are, and a rewrite of the item (any change of the
// caller's webhooks) leaves them as they were.
type hooksItem struct {
	Owner string     `dynamodbav:"owner"`
	V     int64      `dynamodbav:"v"`
	Hooks []hookItem `dynamodbav:"hooks,omitempty"`
	Gone  []hookItem `dynamodbav:"gone,omitempty"`
}

// hookItem is one webhook in a hooksItem.
type hookItem struct {
	ID        int64    `dynamodbav:"id"`
	Doc       string   `dynamodbav:"doc"`
	URL       string   `dynamodbav:"url"`
	Events    []string `dynamodbav:"ev"`
	Format    string   `dynamodbav:"fmt,omitempty"`
	Enabled   bool     `dynamodbav:"on"`
	CreatedAt string   `dynamodbav:"at"`
	Secret    string   `dynamodbav:"sec,omitempty"`
	Deleted   string   `dynamodbav:"del,omitempty"`
}

// newHookItem returns w as stored: its format only when not the default.
func newHookItem(w webhooks.Webhook) hookItem {
	h := hookItem{ID: w.ID, Doc: w.DocumentID, URL: w.URL, Events: w.Events, Enabled: w.Enabled, CreatedAt: w.CreatedAt, Secret: w.Secret}
	if w.Format != webhooks.FormatStampduty {
		h.Format = w.Format
	}
	return h
}

// webhook returns the webhook h stores, of owner; no format is the default.
func (h hookItem) webhook(owner string) webhooks.Webhook {
	return webhooks.Webhook{ID: h.ID, DocumentID: h.Doc, URL: h.URL, Events: h.Events, Format: cmp.Or(h.Format, webhooks.FormatStampduty),
		Enabled: h.Enabled, CreatedAt: h.CreatedAt, Secret: h.Secret, Owner: owner}
}

// Webhooks returns owner's webhooks (one strongly consistent GetItem): V 0
// and none when the caller has never had any.
func (s *Webhooks) Webhooks(ctx context.Context, owner string) (webhooks.Set, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            attr("owner", avS(owner)),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return webhooks.Set{}, fail("GetItem", err)
	}
	if out.Item == nil {
		return webhooks.Set{}, nil
	}
	var it hooksItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return webhooks.Set{}, stampduty.Internal(fmt.Errorf("decode webhooks of a caller: %w", err))
	}
	set := webhooks.Set{V: it.V}
	for _, h := range it.Hooks {
		set.Live = append(set.Live, h.webhook(owner))
	}
	for _, h := range it.Gone {
		set.Gone = append(set.Gone, webhooks.Gone{Webhook: h.webhook(owner), Deleted: h.Deleted})
	}
	return set, nil
}

// SaveWebhooks stores set as owner's webhooks at version v+1, with one
// PutItem conditioned on the stored version being v (on there being none
// when v is 0). A stored version other than v fails with webhooks.ErrRaced
// and changes nothing.
func (s *Webhooks) SaveWebhooks(ctx context.Context, owner string, set webhooks.Set, v int64) error {
	it := hooksItem{Owner: owner, V: v + 1}
	for _, w := range set.Live {
		it.Hooks = append(it.Hooks, newHookItem(w))
	}
	for _, g := range set.Gone {
		h := newHookItem(g.Webhook)
		h.Secret, h.Deleted = "", g.Deleted
		it.Gone = append(it.Gone, h)
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return stampduty.Internal(fmt.Errorf("encode webhooks of a caller: %w", err))
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}
	if v == 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(#o)")
		in.ExpressionAttributeNames = map[string]string{"#o": "owner"}
	} else {
		in.ConditionExpression = aws.String("v = :v")
		in.ExpressionAttributeValues = attr(":v", avN(v))
	}
	if _, err := s.db.client.PutItem(ctx, in); err != nil {
		if conditionFailed(err) {
			return fmt.Errorf("save webhooks at version %d: %w", v, webhooks.ErrRaced)
		}
		return writeFail("PutItem", err)
	}
	return nil
}

// Disabled returns every caller's live webhooks that are disabled (a
// receiver answered 410), by owner: a paginated Scan of the table with a
// filter on the hooks' on flags. A Scan, because nothing indexes a
// disabled webhook; the table is one small item per caller, and only
// operators (stampctl webhooks failing) call it.
func (s *Webhooks) Disabled(ctx context.Context) ([]webhooks.Webhook, error) {
	conds := make([]string, webhooks.MaxPerCaller)
	for i := range conds {
		conds[i] = fmt.Sprintf("hooks[%d].#on = :off", i)
	}
	var out []webhooks.Webhook
	err := s.db.scanWith(ctx, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String(strings.Join(conds, " OR ")),
		ExpressionAttributeNames:  map[string]string{"#on": "on"},
		ExpressionAttributeValues: attr(":off", &types.AttributeValueMemberBOOL{Value: false}),
	}, func(page []map[string]types.AttributeValue) error {
		var items []hooksItem
		if err := attributevalue.UnmarshalListOfMaps(page, &items); err != nil {
			return stampduty.Internal(fmt.Errorf("decode webhooks of a caller: %w", err))
		}
		for _, it := range items {
			for _, h := range it.Hooks {
				if !h.Enabled {
					w := h.webhook(it.Owner)
					w.Secret = ""
					out = append(out, w)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b webhooks.Webhook) int {
		return cmp.Or(cmp.Compare(a.Owner, b.Owner), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Listens reports whether owner has an enabled webhook subscribed to event
// type typ (orders.Listeners): the strongly consistent GetItem of Webhooks,
// so that a webhook registered before a change is seen by it.
func (s *Webhooks) Listens(ctx context.Context, owner, typ string) (bool, error) {
	set, err := s.Webhooks(ctx, owner)
	if err != nil {
		return false, err
	}
	for _, w := range set.Live {
		if w.Subscribed(typ) {
			return true, nil
		}
	}
	return false, nil
}
