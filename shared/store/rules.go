package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
)

// Rule snapshots: every rule version an article has held, kept by its
// hash in the catalogue table (`rule#sha256:…`, the version's JSON in
// `j`), so that an order keeps the rule it was priced with
// (duty_rule_snapshot, duty-rules.md §8) without carrying up to 8 KiB of
// it in its own item: a create stays within 1 WCU of what it was, and
// the one-order read gets the snapshot with one GetItem by the hash its
// duty names. A snapshot is written before the article that first holds
// it and never changed or removed: its key is its content's hash.

// ruleKey is the key of a rule version's snapshot.
func ruleKey(hash string) string { return "rule#" + hash }

// ruleItem is a rule snapshot as stored.
type ruleItem struct {
	K string `dynamodbav:"k"`
	J string `dynamodbav:"j"`
}

// WithSnapshots returns the articles table that writes the snapshot of
// each new rule version into the catalogue table of the given name.
func (s *Articles) WithSnapshots(table string) *Articles {
	c := *s
	c.rules = table
	return &c
}

// putSnapshots writes the snapshot of each version of a that prev does
// not hold (every one, for a new article): one PutItem each (a version of
// at most 8 KiB: at most 8 WCU). Without a snapshot table, nothing.
func (s *Articles) putSnapshots(ctx context.Context, prev *stampduty.CatalogueEntry, a stampduty.Article) error {
	if s.rules == "" {
		return nil
	}
	if !a.Schedule() {
		a.Rules = nil // as toArticleItem: from its fields as they are now
	}
	rules, err := a.DutyRules()
	if err != nil {
		return err
	}
	held := map[string]bool{}
	if prev != nil && !prev.RulesDerived {
		for _, v := range prev.Rules {
			held[v.Hash()] = true
		}
	}
	for _, v := range rules {
		if held[v.Hash()] {
			continue
		}
		if err := PutRuleSnapshot(ctx, s.db, s.rules, v.Hash(), v.JSON()); err != nil {
			return err
		}
	}
	return nil
}

// PutRuleSnapshot writes one rule version's snapshot into table.
func PutRuleSnapshot(ctx context.Context, db *DB, table, hash string, version []byte) error {
	item, err := attributevalue.MarshalMap(ruleItem{K: ruleKey(hash), J: string(version)})
	if err != nil {
		return fmt.Errorf("encode rule snapshot: %w", err)
	}
	if _, err := db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		return fail("PutItem", err)
	}
	return nil
}

// RuleSnapshot returns the rule version whose hash is hash, as stored
// (json.RawMessage), with one GetItem; ENOTFOUND when there is none.
func (c *Catalogue) RuleSnapshot(ctx context.Context, hash string) (json.RawMessage, error) {
	out, err := c.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(c.table),
		Key:       map[string]types.AttributeValue{"k": avS(ruleKey(hash))},
	})
	if err != nil {
		return nil, fail("GetItem", err)
	}
	if out.Item == nil {
		return nil, stampduty.Errorf(stampduty.ENOTFOUND, "no rule version %s", hash)
	}
	var it ruleItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return nil, stampduty.Internal(fmt.Errorf("decode rule snapshot: %w", err))
	}
	return json.RawMessage(it.J), nil
}
