package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// Articles is the articles table: key (purpose_name, state).
type Articles struct {
	db    *DB
	table string
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
}

func toArticleItem(a stampduty.Article) articleItem {
	it := articleItem{PurposeName: a.PurposeName, State: a.State, ID: a.ID, DocumentID: a.DocumentID,
		Min: a.Min, Max: a.Max, Fixed: a.Fixed, Follow: a.FollowsConsideration}
	if a.Factor != nil {
		it.Factor = attributevalue.Number(a.Factor.String())
	}
	return it
}

// decodeArticle reads an article item; an item that is not one, or whose
// factor is not a valid stampduty.Decimal, is EINTERNAL.
func decodeArticle(item map[string]types.AttributeValue) (stampduty.Article, error) {
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
	if err != nil {
		return a, stampduty.Internal(fmt.Errorf("decode article %q/%q: %w", a.PurposeName, a.State, err))
	}
	return a, nil
}

// Get returns the article of (purpose, state) with one GetItem, or an
// ENOTFOUND error naming the purpose. Keys no article can have
// (stampduty.ValidArticleKey) are answered without asking DynamoDB.
func (s *Articles) Get(ctx context.Context, purpose, state string) (stampduty.Article, error) {
	return s.get(ctx, purpose, state, false)
}

// get is Get, with a strongly consistent read when consistent is true.
func (s *Articles) get(ctx context.Context, purpose, state string, consistent bool) (stampduty.Article, error) {
	if !stampduty.ValidArticleKey(purpose, state) {
		return stampduty.Article{}, stampduty.NotFoundPurpose(purpose)
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
		return stampduty.Article{}, fail("GetItem", err)
	}
	if out.Item == nil {
		return stampduty.Article{}, stampduty.NotFoundPurpose(purpose)
	}
	return decodeArticle(out.Item)
}

// All returns every article, in no particular order, with a paginated Scan.
// The catalogue is small (one row per purpose and state) and read whole, then
// cached by the caller.
func (s *Articles) All(ctx context.Context) ([]stampduty.Article, error) {
	var arts []stampduty.Article
	err := s.db.scan(ctx, s.table, func(items []map[string]types.AttributeValue) error {
		for _, item := range items {
			a, err := decodeArticle(item)
			if err != nil {
				return err
			}
			arts = append(arts, a)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return arts, nil
}

// Upsert writes arts, each keyed by (purpose_name, state). An article that
// exists keeps its id and documentId; a new one gets a fresh id from ids and
// a fresh documentId. It returns how many were created and updated.
func (s *Articles) Upsert(ctx context.Context, ids orders.IDs, arts []stampduty.Article) (created, updated int, err error) {
	for _, a := range arts {
		// A consistent read: an import right after another must see its ids.
		old, err := s.get(ctx, a.PurposeName, a.State, true)
		switch {
		case err == nil:
			a.ID, a.DocumentID = old.ID, old.DocumentID
		case stampduty.ErrorCode(err) == stampduty.ENOTFOUND:
			if a.ID, err = ids.Reserve(ctx, 1); err != nil {
				return created, updated, err
			}
			if a.DocumentID, err = stampduty.NewDocumentID(); err != nil {
				return created, updated, err
			}
		default:
			return created, updated, err
		}
		item, err := attributevalue.MarshalMap(toArticleItem(a))
		if err != nil {
			return created, updated, fmt.Errorf("encode article: %w", err)
		}
		in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}
		// The condition keeps a concurrent import from giving one article two ids.
		if old.ID != 0 {
			in.ConditionExpression = aws.String("id = :id")
			in.ExpressionAttributeValues = map[string]types.AttributeValue{":id": avN(old.ID)}
		} else {
			in.ConditionExpression = aws.String("attribute_not_exists(purpose_name)")
		}
		if _, err := s.db.client.PutItem(ctx, in); err != nil {
			if conditionFailed(err) {
				return created, updated, stampduty.Errorf(stampduty.ECONFLICT, "article %q in %s changed during the import; run it again", a.PurposeName, a.State)
			}
			return created, updated, fail("PutItem", err)
		}
		if old.ID != 0 {
			updated++
		} else {
			created++
		}
	}
	return created, updated, nil
}
