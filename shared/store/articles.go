package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/duty"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// Articles is the articles table: key (purpose_name, state); with a
// change log (WithLog), the article log table too (articlelog.go).
type Articles struct {
	db    *DB
	table string
	log   string // the article log table; "" when not given
	rules string // the table of rule snapshots (WithSnapshots); "" when not given
}

// Articles returns the articles table of the given name.
func (db *DB) Articles(table string) *Articles { return &Articles{db: db, table: table} }

// articleItem is an article as stored, through attributevalue.
type articleItem struct {
	PurposeName string                `dynamodbav:"purpose_name"`
	State       string                `dynamodbav:"state"`
	ID          int64                 `dynamodbav:"id"`
	DocumentID  string                `dynamodbav:"doc"`
	Min         int64                 `dynamodbav:"min"`
	Max         int64                 `dynamodbav:"max"`
	Fixed       *int64                `dynamodbav:"fixed,omitempty"`
	Follow      bool                  `dynamodbav:"follow"`
	Factor      attributevalue.Number `dynamodbav:"factor,omitempty"`
	// V is the article's version: +1 per change since change logs (absent:
	// 0, an article stored before them).
	V int64 `dynamodbav:"v,omitempty"`
	// Ret is when the article was retired (RFC 3339); absent while it can
	// be ordered.
	Ret string `dynamodbav:"ret,omitempty"`
	// Lg is the article's newest change, kept in the item until the next
	// change has put it into the log table (see Write).
	Lg *changeItem `dynamodbav:"lg,omitempty"`
	// DR is the article's duty_rules, compact JSON (duty-rules.md §1: at
	// most 24 KiB); absent on an item stored before duty rules, whose one
	// version is migrated when it is read (Article.RulesDerived).
	DR string `dynamodbav:"dr,omitempty"`
}

func toArticleItem(a stampduty.Article) (articleItem, error) {
	it := articleItem{PurposeName: a.PurposeName, State: a.State, ID: a.ID, DocumentID: a.DocumentID,
		Min: a.Min, Max: a.Max, Fixed: a.Fixed, Follow: a.FollowsConsideration}
	if a.Factor != nil {
		it.Factor = attributevalue.Number(a.Factor.String())
	}
	if !a.Schedule() {
		a.Rules = nil // a legacy article's version follows from its fields as they are now
	}
	rules, err := a.DutyRules()
	if err != nil {
		return it, err
	}
	b, _ := rules.MarshalJSON() // never fails
	it.DR = string(b)
	return it, nil
}

// decodeEntry reads an article item with its version, retirement and
// newest change.
func decodeEntry(item map[string]types.AttributeValue) (stampduty.CatalogueEntry, error) {
	var it articleItem
	err := attributevalue.UnmarshalMap(item, &it)
	a := stampduty.Article{ID: it.ID, DocumentID: it.DocumentID, PurposeName: it.PurposeName, State: it.State,
		Min: it.Min, Max: it.Max, Fixed: it.Fixed, FollowsConsideration: it.Follow}
	if err == nil && it.Factor != "" {
		d, perr := stampduty.ParseDecimal(string(it.Factor))
		if perr != nil {
			err = fmt.Errorf("factor: %w", perr)
		}
		a.Factor = &d
	}
	if err == nil && it.DR != "" {
		rules, problems := duty.ParseRules([]byte(it.DR))
		if problems != nil {
			err = fmt.Errorf("dr: %s", problems[0])
		}
		a.Rules = rules
	}
	if err == nil && it.DR == "" {
		a.Rules, err = a.DutyRules()
		a.RulesDerived = true
	}
	a.CatalogueVersion = it.V
	e := stampduty.CatalogueEntry{Article: a, Version: it.V}
	if err == nil && it.Ret != "" {
		if e.RetiredAt, err = time.Parse(time.RFC3339Nano, it.Ret); err != nil {
			err = fmt.Errorf("ret: %w", err)
		}
	}
	if err == nil && it.Lg != nil {
		var c stampduty.ArticleChange
		if c, err = it.Lg.change(); err == nil {
			e.Last = &c
		}
	}
	if err != nil {
		return e, stampduty.Internal(fmt.Errorf("decode article %q/%q: %w", a.PurposeName, a.State, err))
	}
	return e, nil
}

// Get returns the article of (purpose, state) with one GetItem, or an
// ENOTFOUND error naming the purpose. Keys no article can have
// (stampduty.ValidArticleKey) are answered without asking DynamoDB. A
// retired article is not found, with the same message as one that never
// was: no new order or quote can use it (orders keep what they were
// priced with), and a caller cannot tell a retired purpose from a typo.
func (s *Articles) Get(ctx context.Context, purpose, state string) (stampduty.Article, error) {
	e, err := s.entry(ctx, purpose, state, false)
	if err == nil && e.Retired() {
		return stampduty.Article{}, stampduty.NotFoundPurpose(purpose)
	}
	return e.Article, err
}

// entry reads the item of (purpose, state), retired or not; ENOTFOUND
// naming the purpose when there is none.
func (s *Articles) entry(ctx context.Context, purpose, state string, consistent bool) (stampduty.CatalogueEntry, error) {
	if !stampduty.ValidArticleKey(purpose, state) {
		return stampduty.CatalogueEntry{}, stampduty.NotFoundPurpose(purpose)
	}
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table),
		Key: map[string]types.AttributeValue{
			"purpose_name": avS(purpose),
			"state":        avS(state),
		},
		ConsistentRead: aws.Bool(consistent),
	})
	if err != nil {
		return stampduty.CatalogueEntry{}, fail("GetItem", err)
	}
	if out.Item == nil {
		return stampduty.CatalogueEntry{}, stampduty.NotFoundPurpose(purpose)
	}
	return decodeEntry(out.Item)
}

// All returns every article that can be ordered (retired ones left out),
// in no particular order, with a paginated Scan. The catalogue is small
// (one row per purpose and state) and read whole, then cached by the
// caller; it is what a publish makes the public catalogue of.
func (s *Articles) All(ctx context.Context) ([]stampduty.Article, error) {
	var arts []stampduty.Article
	err := s.db.scan(ctx, s.table, func(items []map[string]types.AttributeValue) error {
		for _, item := range items {
			e, err := decodeEntry(item)
			if err != nil {
				return err
			}
			if !e.Retired() {
				arts = append(arts, e.Article)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return arts, nil
}

// Upsert writes arts, each keyed by (purpose_name, state), without a
// change log: the local stack's seed, the bench and test fixtures
// (operators' imports go through shared/catalogue, which logs each
// change). An article that exists keeps its id, documentId, retirement
// and newest change, and takes the next version; a new one gets a fresh
// id from ids and a fresh documentId. It returns how many were created and
// updated.
func (s *Articles) Upsert(ctx context.Context, ids orders.IDs, arts []stampduty.Article) (created, updated int, err error) {
	for _, a := range arts {
		// A consistent read: an import right after another must see its ids.
		old, err := s.entry(ctx, a.PurposeName, a.State, true)
		var prev *stampduty.CatalogueEntry
		// An article with rules of its own stores their projection (§9).
		next := stampduty.CatalogueEntry{Article: a.Projected(duty.TodayInIndia(time.Now())), Version: 1}
		switch {
		case err == nil:
			prev = &old
			next.ID, next.DocumentID = old.ID, old.DocumentID
			next.Version, next.RetiredAt, next.Last = old.Version+1, old.RetiredAt, old.Last
		case stampduty.ErrorCode(err) == stampduty.ENOTFOUND:
			if next.ID, err = ids.Reserve(ctx, 1); err != nil {
				return created, updated, err
			}
			if next.DocumentID, err = stampduty.NewDocumentID(); err != nil {
				return created, updated, err
			}
		default:
			return created, updated, err
		}
		if err := s.put(ctx, prev, next); err != nil {
			if stampduty.ErrorCode(err) == stampduty.ECONFLICT {
				return created, updated, stampduty.Errorf(stampduty.ECONFLICT, "article %q in %s changed during the import; run it again", a.PurposeName, a.State)
			}
			return created, updated, err
		}
		if prev != nil {
			updated++
		} else {
			created++
		}
	}
	return created, updated, nil
}

// put writes next over prev (nil: next is new) with one PutItem whose
// condition makes it fail with ECONFLICT when the stored item is not prev
// any more (another writer's change came first) or, for a new article,
// when one exists.
func (s *Articles) put(ctx context.Context, prev *stampduty.CatalogueEntry, next stampduty.CatalogueEntry) error {
	it, err := toArticleItem(next.Article)
	if err != nil {
		return err
	}
	it.V = next.Version
	if next.Retired() {
		it.Ret = next.RetiredAt.UTC().Format(time.RFC3339Nano)
	}
	if next.Last != nil {
		c := toChangeItem(*next.Last)
		it.Lg = &c
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return fmt.Errorf("encode article: %w", err)
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}
	switch {
	case prev == nil:
		in.ConditionExpression = aws.String("attribute_not_exists(purpose_name)")
	case prev.Version == 0:
		// Stored before versions: its id is what tells it from a
		// concurrent writer's (which would have written v).
		in.ConditionExpression = aws.String("id = :id AND attribute_not_exists(v)")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":id": avN(prev.ID)}
	default:
		in.ConditionExpression = aws.String("v = :v")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": avN(prev.Version)}
	}
	if err := s.putSnapshots(ctx, prev, next.Article); err != nil {
		return err
	}
	if _, err := s.db.client.PutItem(ctx, in); err != nil {
		if conditionFailed(err) {
			if prev == nil {
				return stampduty.Errorf(stampduty.ECONFLICT, "article %q in %s exists already", next.PurposeName, next.State)
			}
			return stampduty.Errorf(stampduty.ECONFLICT, "article %q in %s was changed by someone else since version %d; read it again",
				next.PurposeName, next.State, prev.Version)
		}
		return fail("PutItem", err)
	}
	return nil
}
