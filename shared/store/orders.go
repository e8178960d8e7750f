package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/rules"
)

// Orders is the orders table: key (owner, seq). An owner's orders are
// numbered 1, 2, 3, ... in the order they were stored, with no gaps: each
// order claims the next number with a conditional PutItem, and the only
// write that makes an order is that PutItem, so a number is never skipped,
// reused or taken twice. The newest seq is therefore the exact count, and
// page N of the newest-first list is the seq range
// [count-N*size+1, count-(N-1)*size]: one Query, whatever N is.
type Orders struct {
	db    *DB
	table string
	// attempts bounds the conditional puts of one Create under contention.
	attempts int
}

// Orders returns the orders table of the given name.
func (db *DB) Orders(table string) *Orders { return &Orders{db: db, table: table, attempts: 8} }

// orderItem is an order as stored. Attribute names are short: DynamoDB bills
// them with every read and write, and a typical order stays under 1 KB.
type orderItem struct {
	Owner        string            `dynamodbav:"owner"`
	Seq          int64             `dynamodbav:"seq"`
	ID           int64             `dynamodbav:"id"`
	DocumentID   string            `dynamodbav:"doc"`
	CreatedAt    string            `dynamodbav:"at"`
	Fulfillments []fulfillmentItem `dynamodbav:"ff"`
	SD           stampDutyItem     `dynamodbav:"sd"`
}

type fulfillmentItem struct {
	ID         int64     `dynamodbav:"id"`
	DocumentID string    `dynamodbav:"doc"`
	Status     string    `dynamodbav:"st"`
	Ref        string    `dynamodbav:"ref"`
	CertNumber string    `dynamodbav:"cn"`
	CertFile   *fileItem `dynamodbav:"cf,omitempty"`
}

type fileItem struct {
	ID         int64  `dynamodbav:"id"`
	DocumentID string `dynamodbav:"doc"`
	URL        string `dynamodbav:"url"`
	Name       string `dynamodbav:"name"`
}

type stampDutyItem struct {
	ID                 int64  `dynamodbav:"id"`
	Amount             int64  `dynamodbav:"amt"`
	Description        string `dynamodbav:"desc"`
	FirstName          string `dynamodbav:"n1"`
	FirstAddress       string `dynamodbav:"a1"`
	FirstPAN           string `dynamodbav:"p1"`
	SecondName         string `dynamodbav:"n2"`
	SecondAddress      string `dynamodbav:"a2"`
	SecondPAN          string `dynamodbav:"p2"`
	PaidBy             string `dynamodbav:"pb"`
	PurchasedBy        string `dynamodbav:"pu"`
	Quantity           int64  `dynamodbav:"q"`
	State              string `dynamodbav:"state"`
	ConsiderationPrice int64  `dynamodbav:"cp"`
	Mobile             string `dynamodbav:"mob"`
	ArticleID          int64  `dynamodbav:"aid"`
	ArticleDocumentID  string `dynamodbav:"adoc"`
	Purpose            string `dynamodbav:"purpose"`
}

func toOrderItem(owner string, seq int64, o rules.Order) orderItem {
	it := orderItem{Owner: owner, Seq: seq, ID: o.ID, DocumentID: o.DocumentID, CreatedAt: o.CreatedAt}
	for _, f := range o.Fulfillments {
		fi := fulfillmentItem{ID: f.ID, DocumentID: f.DocumentID, Status: f.Status, Ref: f.UniqueDocRef, CertNumber: f.CertificateNumber}
		if c := f.CertificateFile; c != nil {
			fi.CertFile = &fileItem{ID: c.ID, DocumentID: c.DocumentID, URL: c.URL, Name: c.Name}
		}
		it.Fulfillments = append(it.Fulfillments, fi)
	}
	sd := o.StampDuty
	it.SD = stampDutyItem{ID: sd.ID, Amount: sd.Amount, Description: sd.Description,
		FirstName: sd.FirstPartyName, FirstAddress: sd.FirstPartyAddress, FirstPAN: sd.FirstPartyPAN,
		SecondName: sd.SecondPartyName, SecondAddress: sd.SecondPartyAddress, SecondPAN: sd.SecondPartyPAN,
		PaidBy: sd.PaidBy, PurchasedBy: sd.PurchasedBy, Quantity: sd.Quantity, State: sd.State,
		ConsiderationPrice: sd.ConsiderationPrice, Mobile: sd.MobileNumber,
		ArticleID: sd.StatePurpose.ID, ArticleDocumentID: sd.StatePurpose.DocumentID, Purpose: sd.StatePurpose.PurposeName}
	return it
}

func (it orderItem) order() rules.Order {
	o := rules.Order{ID: it.ID, DocumentID: it.DocumentID, CreatedAt: it.CreatedAt, Fulfillments: []rules.Fulfillment{}}
	for _, f := range it.Fulfillments {
		rf := rules.Fulfillment{ID: f.ID, DocumentID: f.DocumentID, Status: f.Status, UniqueDocRef: f.Ref, CertificateNumber: f.CertNumber}
		if c := f.CertFile; c != nil {
			rf.CertificateFile = &rules.File{ID: c.ID, DocumentID: c.DocumentID, URL: c.URL, Name: c.Name}
		}
		o.Fulfillments = append(o.Fulfillments, rf)
	}
	sd := it.SD
	o.StampDuty = rules.StampDuty{ID: sd.ID, Amount: sd.Amount, Description: sd.Description,
		FirstPartyName: sd.FirstName, FirstPartyAddress: sd.FirstAddress, FirstPartyPAN: sd.FirstPAN,
		SecondPartyName: sd.SecondName, SecondPartyAddress: sd.SecondAddress, SecondPartyPAN: sd.SecondPAN,
		PaidBy: sd.PaidBy, PurchasedBy: sd.PurchasedBy, Quantity: sd.Quantity, State: sd.State,
		ConsiderationPrice: sd.ConsiderationPrice, MobileNumber: sd.Mobile,
		StatePurpose: rules.StatePurpose{ID: sd.ArticleID, DocumentID: sd.ArticleDocumentID, PurposeName: sd.Purpose}}
	return o
}

// Create stores o as owner's newest order and returns its seq. It reads the
// newest seq (a strongly consistent Query of one key) and puts the order at
// the next one on condition that the slot is free; when another request took
// that slot first it reads again and retries, a bounded number of times with
// jittered backoff, then fails with EUNAVAILABLE.
func (s *Orders) Create(ctx context.Context, owner string, o rules.Order) (int64, error) {
	for attempt := 0; attempt < s.attempts; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return 0, &rules.Error{Code: rules.EUNAVAILABLE, Message: "Service Unavailable", Err: err}
			}
		}
		n, err := s.Count(ctx, owner)
		if err != nil {
			return 0, err
		}
		seq := int64(n) + 1
		item, err := attributevalue.MarshalMap(toOrderItem(owner, seq, o))
		if err != nil {
			return 0, fmt.Errorf("encode order: %w", err)
		}
		_, err = s.db.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:              aws.String(s.table),
			Item:                   item,
			ConditionExpression:    aws.String("attribute_not_exists(seq)"),
			ReturnConsumedCapacity: s.db.capacity(),
		})
		if err == nil {
			return seq, nil
		}
		if !conditionFailed(err) {
			return 0, fail("PutItem", err)
		}
	}
	return 0, &rules.Error{Code: rules.EUNAVAILABLE, Message: "Service Unavailable",
		Err: fmt.Errorf("create order: %d attempts lost the race for the next number", s.attempts)}
}

// backoff is the wait before retry attempt: full jitter over 10ms·2^attempt, at most 320ms.
func backoff(attempt int) time.Duration {
	ceiling := 10 * time.Millisecond << min(attempt, 5)
	return time.Duration(rand.Int64N(int64(ceiling)) + 1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Count returns how many orders owner has: the newest seq, read with one
// strongly consistent Query of one item.
func (s *Orders) Count(ctx context.Context, owner string) (int, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#o = :o"),
		ExpressionAttributeNames:  map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": &types.AttributeValueMemberS{Value: owner}},
		ProjectionExpression:      aws.String("seq"),
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(1),
		ConsistentRead:            aws.Bool(true),
		ReturnConsumedCapacity:    s.db.capacity(),
	})
	if err != nil {
		return 0, fail("Query", err)
	}
	if len(out.Items) == 0 {
		return 0, nil
	}
	n, ok := out.Items[0]["seq"].(*types.AttributeValueMemberN)
	if !ok {
		return 0, &rules.Error{Code: rules.EINTERNAL, Message: "Internal Server Error", Err: fmt.Errorf("order without seq")}
	}
	seq, err := strconv.Atoi(n.Value)
	if err != nil {
		return 0, &rules.Error{Code: rules.EINTERNAL, Message: "Internal Server Error", Err: fmt.Errorf("order seq: %w", err)}
	}
	return seq, nil
}

// Page returns page (from 1) of owner's orders, newest first, size per page,
// and the exact total. It costs two Queries whatever the page: the count,
// then the page's seq range. The range is read eventually consistent (half
// the price); if it comes back short of what the count promises (an order
// written a moment ago not yet visible), it is read once more, consistently.
func (s *Orders) Page(ctx context.Context, owner string, page, size int) ([]rules.Order, int, error) {
	total, err := s.Count(ctx, owner)
	if err != nil {
		return nil, 0, err
	}
	// The newest seq of the page is hi = total-(page-1)*size; past the end when < 1.
	if page < 1 || size < 1 || (page-1) >= (total+size-1)/size {
		return []rules.Order{}, total, nil
	}
	hi := int64(total) - int64(page-1)*int64(size)
	lo := max(1, hi-int64(size)+1)
	orders, err := s.seqRange(ctx, owner, lo, hi, false)
	if err != nil {
		return nil, 0, err
	}
	if int64(len(orders)) != hi-lo+1 {
		if orders, err = s.seqRange(ctx, owner, lo, hi, true); err != nil {
			return nil, 0, err
		}
	}
	return orders, total, nil
}

// seqRange returns owner's orders with lo <= seq <= hi, newest first.
func (s *Orders) seqRange(ctx context.Context, owner string, lo, hi int64, consistent bool) ([]rules.Order, error) {
	orders := make([]rules.Order, 0, hi-lo+1)
	p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
		TableName:                aws.String(s.table),
		KeyConditionExpression:   aws.String("#o = :o AND seq BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":o":  &types.AttributeValueMemberS{Value: owner},
			":lo": &types.AttributeValueMemberN{Value: strconv.FormatInt(lo, 10)},
			":hi": &types.AttributeValueMemberN{Value: strconv.FormatInt(hi, 10)},
		},
		ScanIndexForward:       aws.Bool(false),
		ConsistentRead:         aws.Bool(consistent),
		ReturnConsumedCapacity: s.db.capacity(),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fail("Query", err)
		}
		var items []orderItem
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
			return nil, &rules.Error{Code: rules.EINTERNAL, Message: "Internal Server Error", Err: fmt.Errorf("decode orders: %w", err)}
		}
		for _, it := range items {
			orders = append(orders, it.order())
		}
	}
	return orders, nil
}
