package store

// This file holds what a batch create (orders.Batcher) keeps in the
// idempotency table and reads of the orders table: a batch's key record,
// with its planned rows and its answers, and what a range of seqs holds.

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// batchKeyItem is a batch's idempotency record: a create's (keyItem, doc
// being the claim's own id) with the planned rows (rows) and, once done,
// the answers (ans).
type batchKeyItem struct {
	keyItem
	Rows    []plannedItem `dynamodbav:"rows"`
	Answers []answerItem  `dynamodbav:"ans,omitempty"`
}

// plannedItem is an orders.PlannedRow as stored.
type plannedItem struct {
	Index    int    `dynamodbav:"i"`
	Doc      string `dynamodbav:"d"`
	Seq      int64  `dynamodbav:"s,omitempty"`
	Amount   int64  `dynamodbav:"a"`
	Quantity int64  `dynamodbav:"q"`
}

// answerItem is an orders.RowAnswer as stored: a created order's d, a, q,
// or a refusal's c (code), m and f (its fields, path and message).
type answerItem struct {
	Index    int          `dynamodbav:"i"`
	OrderID  string       `dynamodbav:"d,omitempty"`
	Amount   int64        `dynamodbav:"a,omitempty"`
	Quantity int64        `dynamodbav:"q,omitempty"`
	Code     string       `dynamodbav:"c,omitempty"`
	Message  string       `dynamodbav:"m,omitempty"`
	Fields   []fieldError `dynamodbav:"f,omitempty"`
	// Du is a created order's duty, compressed as the order keeps it.
	Du []byte `dynamodbav:"du,omitempty"`
}

// fieldError is a stampduty.FieldError as stored.
type fieldError struct {
	Path    string `dynamodbav:"p"`
	Message string `dynamodbav:"m"`
}

func plannedItems(rows []orders.PlannedRow) []plannedItem {
	out := make([]plannedItem, len(rows))
	for i, r := range rows {
		out[i] = plannedItem(r)
	}
	return out
}

func (it batchKeyItem) record() orders.BatchRecord {
	rec := orders.BatchRecord{KeyRecord: it.keyItem.record()}
	for _, r := range it.Rows {
		rec.Rows = append(rec.Rows, orders.PlannedRow(r))
	}
	for _, a := range it.Answers {
		ans := orders.RowAnswer{Index: a.Index, OrderID: a.OrderID, Amount: a.Amount, Quantity: a.Quantity, Code: stampduty.Code(a.Code), Message: a.Message}
		ans.Duty, _ = decodeDuty(a.Du) // one this code wrote: an error leaves the duty untold, the order keeps it
		for _, f := range a.Fields {
			ans.Fields = append(ans.Fields, stampduty.FieldError{Path: f.Path, Message: f.Message})
		}
		rec.Answers = append(rec.Answers, ans)
	}
	return rec
}

// ClaimBatch records that a batch request (body fingerprint fp, claim id
// claim: a documentId chosen for this request alone) holds the key, with
// the rows it plans to create, unless a live record of another request
// exists; as Claim, with the same condition and retries. It returns the
// record now standing and whether this call made it.
func (s *Idempotency) ClaimBatch(ctx context.Context, owner, key, fp, claim string, rows []orders.PlannedRow, now time.Time, lease, ttl time.Duration) (orders.BatchRecord, bool, error) {
	if claim == "" {
		return orders.BatchRecord{}, false, stampduty.Internal(fmt.Errorf("claim idempotency key: no claim id"))
	}
	it := batchKeyItem{keyItem: keyItem{PK: pk(owner, key), Fingerprint: fp, State: orders.KeyPending, OrderID: claim,
		Claimed: now.UnixMilli(), Lease: now.Add(lease).UnixMilli(), Expires: expiresAttr{end: now.Add(ttl).Unix(), ok: true}},
		Rows: plannedItems(rows)}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return orders.BatchRecord{}, false, stampduty.Internal(fmt.Errorf("encode idempotency record: %w", err))
	}
	live, err := s.claim(ctx, owner, key, item, claim, now)
	if err != nil {
		return orders.BatchRecord{}, false, err
	}
	if live == nil {
		return it.record(), true, nil
	}
	rec, err := decodeBatchKey(live)
	return rec, false, err
}

func decodeBatchKey(item map[string]types.AttributeValue) (orders.BatchRecord, error) {
	var it batchKeyItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return orders.BatchRecord{}, stampduty.Internal(fmt.Errorf("decode idempotency record: %w", err))
	}
	return it.record(), nil
}

// GetBatch returns the live record of the key (strongly consistent), a
// batch's or a create's (whose fingerprint never matches a batch's); ok is
// false when there is none.
func (s *Idempotency) GetBatch(ctx context.Context, owner, key string, now time.Time) (orders.BatchRecord, bool, error) {
	item, err := s.live(ctx, owner, key, now)
	if err != nil || item == nil {
		return orders.BatchRecord{}, false, err
	}
	rec, err := decodeBatchKey(item)
	return rec, err == nil, err
}

// PlanBatch replaces the planned rows of the pending claim claim: the
// rows with the seqs reserved for them, written before any of their
// orders, so that a request taking the claim over reads where they are.
func (s *Idempotency) PlanBatch(ctx context.Context, owner, key, claim string, rows []orders.PlannedRow) error {
	av, err := attributevalue.Marshal(plannedItems(rows))
	if err != nil {
		return stampduty.Internal(fmt.Errorf("encode planned rows: %w", err))
	}
	return s.updateClaim(ctx, owner, key, claim, "SET #rows = :rows", map[string]types.AttributeValue{":rows": av})
}

// CompleteBatch marks the claim's batch done, with each row's answer.
func (s *Idempotency) CompleteBatch(ctx context.Context, owner, key, claim string, answers []orders.RowAnswer) error {
	items := make([]answerItem, len(answers))
	for i, a := range answers {
		du, err := encodeDuty(a.Duty)
		if err != nil {
			return stampduty.Internal(err)
		}
		items[i] = answerItem{Index: a.Index, OrderID: a.OrderID, Amount: a.Amount, Quantity: a.Quantity, Code: string(a.Code), Message: a.Message, Du: du}
		for _, f := range a.Fields {
			items[i].Fields = append(items[i].Fields, fieldError{Path: f.Path, Message: f.Message})
		}
	}
	if answerBytes(items) > maxAnswerBytes {
		// Keep every row's outcome, but not the refusals' words: a replay
		// reads those again from the same body (orders.replay).
		for i := range items {
			items[i].Message, items[i].Fields = "", nil
		}
	}
	av, err := attributevalue.Marshal(items)
	if err != nil {
		return stampduty.Internal(fmt.Errorf("encode answers: %w", err))
	}
	return s.updateClaim(ctx, owner, key, claim, "SET st = :done, ans = :ans", map[string]types.AttributeValue{":done": avS(orders.KeyDone), ":ans": av})
}

// maxAnswerBytes bounds the answers a batch's record keeps word for word:
// a record is at most 400 KB, and a 1 MiB batch of rows each naming
// thousands of unknown fields would have megabytes of messages. Past it,
// refused rows keep only their code. 100 rows' ordinary answers are a few
// KB.
const maxAnswerBytes = 256 << 10

// answerBytes is about the stored size of answers: their strings' bytes
// and a few per number and name.
func answerBytes(answers []answerItem) int {
	n := 0
	for _, a := range answers {
		n += 40 + len(a.OrderID) + len(a.Code) + len(a.Message) + len(a.Du)
		for _, f := range a.Fields {
			n += 8 + len(f.Path) + len(f.Message)
		}
	}
	return n
}

// Yield ends the lease of the pending claim claim at now: its request
// answered with rows a retry may yet create, and the retry takes the
// claim over at once instead of waiting out the lease.
func (s *Idempotency) Yield(ctx context.Context, owner, key, claim string, now time.Time) error {
	return s.updateClaim(ctx, owner, key, claim, "SET lease = :now", map[string]types.AttributeValue{":now": avN(now.UnixMilli())})
}

// updateClaim applies update to the key's record while it is the pending
// claim claim; when it is not (taken over after the lease ran out), the
// answer is 409, as to a request that finds the key busy: this request no
// longer holds it.
func (s *Idempotency) updateClaim(ctx context.Context, owner, key, claim, update string, vals map[string]types.AttributeValue) error {
	vals[":pending"] = avS(orders.KeyPending)
	vals[":claim"] = avS(claim)
	in := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOf(owner, key),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String("st = :pending AND doc = :claim"),
		ExpressionAttributeValues: vals,
	}
	if _, ok := vals[":rows"]; ok {
		in.ExpressionAttributeNames = map[string]string{"#rows": "rows"}
	}
	_, err := s.db.client.UpdateItem(ctx, in)
	if conditionFailed(err) {
		return stampduty.Errorf(stampduty.ECONFLICT, "A request with this Idempotency-Key is in progress; retry in a moment")
	}
	if err != nil {
		return fail("UpdateItem", err)
	}
	return nil
}

// Slots returns the documentId stored at each of owner's seqs lo…hi that
// holds something ("" for a void marker): one strongly consistent Query of
// the range, projecting seq, doc and p (which trims the answer, not the
// units: 1 RCU per 4 KB of the items read), paged only past DynamoDB's 1
// MB. The papers' items of the orders in the range (seq s.kk, marked p)
// are skipped.
func (s *Orders) Slots(ctx context.Context, owner string, lo, hi int64) (map[int64]string, error) {
	p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#o = :o AND seq BETWEEN :lo AND :hi"),
		ExpressionAttributeNames:  map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": avS(owner), ":lo": avN(lo), ":hi": avN(hi)},
		ProjectionExpression:      aws.String("seq, doc, p"),
		ConsistentRead:            aws.Bool(true),
	})
	out := map[int64]string{}
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fail("Query", err)
		}
		for _, item := range page.Items {
			if isPaper(item) { // a paper's item, at s.kk beside its order's
				continue
			}
			seq, err := seqOf(item)
			if err != nil {
				return nil, err
			}
			var it struct {
				Doc string `dynamodbav:"doc"`
			}
			if err := attributevalue.UnmarshalMap(item, &it); err != nil {
				return nil, stampduty.Internal(fmt.Errorf("decode slots: %w", err))
			}
			out[seq] = it.Doc
		}
	}
	return out, nil
}
