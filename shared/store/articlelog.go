package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
)

// The catalogue's change log: the article log table, key `doc` (S, the
// article's documentId) and `v` (N, the version the change made), one
// item per change (`k` kind, `by`, `at`, `ch` the fields before and after,
// `p` and `s` the article's purpose_name and state). The article's item
// keeps its newest change in `lg` as well, written in the same PutItem as
// the change itself, so no change is ever stored without its entry; the
// entry reaches the log table right after, and at the latest when the
// next change is written (Write puts the entry it replaces first). A
// reader merges `lg` into what the log table holds (Log).

// changeItem is an ArticleChange as stored, in the article's `lg` and in
// the log table.
type changeItem struct {
	V  int64       `dynamodbav:"v"`
	K  string      `dynamodbav:"k"`
	By string      `dynamodbav:"by"`
	At string      `dynamodbav:"at"`
	Ch []fieldItem `dynamodbav:"ch"`
}

// fieldItem is a FieldChange as stored.
type fieldItem struct {
	F string `dynamodbav:"f"`
	B string `dynamodbav:"b,omitempty"`
	A string `dynamodbav:"a"`
}

// logItem is an entry of the log table.
type logItem struct {
	Doc string `dynamodbav:"doc"`
	P   string `dynamodbav:"p"`
	S   string `dynamodbav:"s"`
	changeItem
}

func toChangeItem(c stampduty.ArticleChange) changeItem {
	it := changeItem{V: c.Version, K: c.Kind, By: c.By, At: c.At.UTC().Format(time.RFC3339Nano)}
	for _, f := range c.Changes {
		it.Ch = append(it.Ch, fieldItem{F: f.Field, B: f.Before, A: f.After})
	}
	return it
}

func (it changeItem) change() (stampduty.ArticleChange, error) {
	at, err := time.Parse(time.RFC3339Nano, it.At)
	if err != nil {
		return stampduty.ArticleChange{}, fmt.Errorf("change at: %w", err)
	}
	c := stampduty.ArticleChange{Version: it.V, Kind: it.K, By: it.By, At: at, Changes: []stampduty.FieldChange{}}
	for _, f := range it.Ch {
		c.Changes = append(c.Changes, stampduty.FieldChange{Field: f.F, Before: f.B, After: f.A})
	}
	return c, nil
}

// WithLog returns the articles table with its change log in the article
// log table of the given name: what Write and Log need.
func (s *Articles) WithLog(table string) *Articles {
	c := *s
	c.log = table
	return &c
}

// Entry returns the article of (purpose, state) as admins see it, retired
// or not, with one strongly consistent GetItem (1 RCU); ENOTFOUND when
// there is none.
func (s *Articles) Entry(ctx context.Context, purpose, state string) (stampduty.CatalogueEntry, error) {
	e, err := s.entry(ctx, purpose, state, true)
	if stampduty.ErrorCode(err) == stampduty.ENOTFOUND {
		return e, stampduty.Errorf(stampduty.ENOTFOUND, "no article %q in %s", purpose, state)
	}
	return e, err
}

// Entries returns every article, retired ones included, with a strongly
// consistent paginated Scan (an admin's read of a small table), in no
// particular order.
func (s *Articles) Entries(ctx context.Context) ([]stampduty.CatalogueEntry, error) {
	return s.scanEntries(ctx, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)})
}

// EntryByDoc returns the article whose documentId is doc (a Scan of the
// articles table filtered by `doc`: no index serves this admin's read);
// ENOTFOUND when none has it.
func (s *Articles) EntryByDoc(ctx context.Context, doc string) (stampduty.CatalogueEntry, error) {
	found, err := s.scanEntries(ctx, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
		FilterExpression:          aws.String("#d = :d"),
		ExpressionAttributeNames:  map[string]string{"#d": "doc"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":d": avS(doc)}})
	if err != nil {
		return stampduty.CatalogueEntry{}, err
	}
	if len(found) != 1 {
		return stampduty.CatalogueEntry{}, stampduty.Errorf(stampduty.ENOTFOUND, "no article with documentId %q", doc)
	}
	return found[0], nil
}

// scanEntries returns the articles a paginated Scan of in finds (every
// page, decoded), with what it read before an error.
func (s *Articles) scanEntries(ctx context.Context, in *dynamodb.ScanInput) ([]stampduty.CatalogueEntry, error) {
	var out []stampduty.CatalogueEntry
	err := s.db.scanWith(ctx, in, func(items []map[string]types.AttributeValue) error {
		for _, item := range items {
			e, err := decodeEntry(item)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// Write stores next, the article after one change, over prev, the article
// as the writer read it (nil: next is a new article), and logs the change
// (next.Last, which must make version next.Version = prev's + 1, or 1).
// Three calls: PutItem of prev's newest change into the log table (when
// prev has one: it may not have reached it, if its writer stopped right
// after its change; putting an entry again changes nothing), the
// article's PutItem conditioned on prev's version (ECONFLICT when another
// change came first: exactly one of two concurrent writers wins, and no
// update is lost), then PutItem of next's change into the log table. A
// failure after the article's write leaves the entry in the article's
// item, where Log and the next Write find it.
func (s *Articles) Write(ctx context.Context, prev *stampduty.CatalogueEntry, next stampduty.CatalogueEntry) error {
	if s.log == "" {
		return stampduty.Internal(fmt.Errorf("articles: no change log table"))
	}
	if next.Last == nil || next.Last.Version != next.Version {
		return stampduty.Internal(fmt.Errorf("article %q/%q: version %d without its change", next.PurposeName, next.State, next.Version))
	}
	if prev != nil && prev.Last != nil {
		if err := s.putLog(ctx, prev.Article, *prev.Last); err != nil {
			return err
		}
	}
	if err := s.put(ctx, prev, next); err != nil {
		return err
	}
	return s.putLog(ctx, next.Article, *next.Last)
}

// putLog puts one entry into the log table.
func (s *Articles) putLog(ctx context.Context, a stampduty.Article, c stampduty.ArticleChange) error {
	item, err := attributevalue.MarshalMap(logItem{Doc: a.DocumentID, P: a.PurposeName, S: a.State, changeItem: toChangeItem(c)})
	if err != nil {
		return fmt.Errorf("encode article change: %w", err)
	}
	if _, err := s.db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.log), Item: item}); err != nil {
		return fail("PutItem", err)
	}
	return nil
}

// Log returns e's change log, newest first: a Query of the log table by
// e's documentId (paginated; 0.5 RCU per 4 KB, about 20 entries), with e's
// newest change added when it has not reached the table yet.
func (s *Articles) Log(ctx context.Context, e stampduty.CatalogueEntry) ([]stampduty.ArticleChange, error) {
	if s.log == "" {
		return nil, stampduty.Internal(fmt.Errorf("articles: no change log table"))
	}
	var out []stampduty.ArticleChange
	p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
		TableName:                 aws.String(s.log),
		KeyConditionExpression:    aws.String("#d = :d"),
		ExpressionAttributeNames:  map[string]string{"#d": "doc"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":d": avS(e.DocumentID)},
		ScanIndexForward:          aws.Bool(false),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fail("Query", err)
		}
		for _, item := range page.Items {
			var it logItem
			if err := attributevalue.UnmarshalMap(item, &it); err != nil {
				return nil, stampduty.Internal(fmt.Errorf("decode article change: %w", err))
			}
			c, err := it.change()
			if err != nil {
				return nil, stampduty.Internal(fmt.Errorf("decode article change: %w", err))
			}
			out = append(out, c)
		}
	}
	if e.Last != nil && !slices.ContainsFunc(out, func(c stampduty.ArticleChange) bool { return c.Version == e.Last.Version }) {
		out = append(out, *e.Last)
		slices.SortFunc(out, func(a, b stampduty.ArticleChange) int { return cmp.Compare(b.Version, a.Version) })
	}
	return out, nil
}
