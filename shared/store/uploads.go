package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// Uploads is the uploads table: key id, one item per orders.Watch (the
// objects a write is about to store or replace) or staged upload, which is
// a watch too. Items stay only while a file is in flight: a request that
// ends well removes its item, and the sweeper removes the rest once due.
// A DynamoDB TTL (expires, WatchTTL after the item is due) is only a
// backstop against a sweeper switched off for weeks.
//
// The sparse global index due (dp, dk) holds every item: dp is one of
// DueShards partitions ("due#0".."due#7", by a hash of id, so that no one
// partition takes every write), dk is <due>#<id>; the sweeper reads each
// shard's items due by now.
type Uploads struct {
	db    *DB
	table string
}

// Uploads returns the uploads table of the given name.
func (db *DB) Uploads(table string) *Uploads { return &Uploads{db: db, table: table} }

// UploadsDueIndex is the uploads table's index of items by when they are due.
const UploadsDueIndex = "due"

// DueShards is how many partitions the due index spreads items over.
const DueShards = 8

// WatchTTL is how long after it is due DynamoDB's TTL drops an item the
// sweeper never finished.
const WatchTTL = 30 * 24 * time.Hour

// uploadItem is an orders.Watch as stored, through attributevalue:
//
//	id             the record's key (an object key: uploads/<id>, documents/…, certificates/…)
//	oo, os         the order's key (owner, seq)
//	ks             the object keys to check
//	dp, dk         the due index: due#<shard>, <due>#<id>
//	expires        TTL, epoch seconds
//	k, who, od, ff a staged upload: kind (document, certificate), caller (absent for
//	               certificates), the order's and the fulfillment's documentIds
//	name, mime, sz what it was declared to be
//	until, used    attachable until; attached or expired once it may not be (absent before)
type uploadItem struct {
	ID      string   `dynamodbav:"id"`
	Owner   string   `dynamodbav:"oo"`
	Seq     int64    `dynamodbav:"os"`
	Keys    []string `dynamodbav:"ks"`
	DuePK   string   `dynamodbav:"dp"`
	DueKey  string   `dynamodbav:"dk"`
	Expires int64    `dynamodbav:"expires"`

	Kind        string `dynamodbav:"k,omitempty"`
	Caller      string `dynamodbav:"who,omitempty"`
	Order       string `dynamodbav:"od,omitempty"`
	Fulfillment string `dynamodbav:"ff,omitempty"`
	Name        string `dynamodbav:"name,omitempty"`
	Mime        string `dynamodbav:"mime,omitempty"`
	Size        int64  `dynamodbav:"sz,omitempty"`
	Until       string `dynamodbav:"until,omitempty"`
	Used        string `dynamodbav:"used,omitempty"`
}

// The stored names of the file kinds.
var kindNames = map[stampduty.FileKind]string{stampduty.Document: "document", stampduty.Certificate: "certificate"}

// dueShard is the due index partition of record id.
func dueShard(id string) string {
	return "due#" + strconv.Itoa(int(shardOf(id, DueShards)))
}

// uploadDueKey is record id's sort key in the due index.
func uploadDueKey(due time.Time, id string) string { return stampduty.FormatTime(due) + "#" + id }

func newUploadItem(w orders.Watch) uploadItem {
	it := uploadItem{ID: w.ID, Owner: w.Owner, Seq: w.Seq, Keys: w.Keys, DuePK: dueShard(w.ID),
		DueKey: uploadDueKey(w.Due, w.ID), Expires: w.Due.Add(WatchTTL).Unix()}
	if u := w.Upload; u != nil {
		it.Kind, it.Caller, it.Order, it.Fulfillment = kindNames[u.Kind], u.Caller, u.Order, u.Fulfillment
		it.Name, it.Mime, it.Size, it.Until, it.Used = u.Name, u.Mime, u.Size, stampduty.FormatTime(u.Until), u.Used
	}
	return it
}

func (it uploadItem) watch() (orders.Watch, error) {
	due, _, _ := strings.Cut(it.DueKey, "#") // <due>#<id>: times hold no '#'
	at, err := time.Parse(stampduty.TimeLayout, due)
	if err != nil {
		return orders.Watch{}, stampduty.Internal(fmt.Errorf("decode upload %s: due %q", it.ID, due))
	}
	w := orders.Watch{ID: it.ID, Owner: it.Owner, Seq: it.Seq, Keys: it.Keys, Due: at}
	if it.Kind != "" {
		until, err := time.Parse(stampduty.TimeLayout, it.Until)
		if err != nil {
			return orders.Watch{}, stampduty.Internal(fmt.Errorf("decode upload %s: until %q", it.ID, it.Until))
		}
		k := stampduty.Document
		if it.Kind == kindNames[stampduty.Certificate] {
			k = stampduty.Certificate
		}
		w.Upload = &orders.Staged{Kind: k, Caller: it.Caller, Order: it.Order, Fulfillment: it.Fulfillment,
			Name: it.Name, Mime: it.Mime, Size: it.Size, Until: until, Used: it.Used}
	}
	return w, nil
}

func decodeWatch(item map[string]types.AttributeValue) (orders.Watch, error) {
	var it uploadItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return orders.Watch{}, stampduty.Internal(fmt.Errorf("decode upload: %w", err))
	}
	return it.watch()
}

// Watch stores w with one PutItem, in place of any item with its ID.
func (s *Uploads) Watch(ctx context.Context, w orders.Watch) error {
	item, err := attributevalue.MarshalMap(newUploadItem(w))
	if err != nil {
		return stampduty.Internal(fmt.Errorf("encode upload: %w", err))
	}
	if _, err := s.db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return writeFail("PutItem", err)
	}
	return nil
}

// Unwatch removes item id with one DeleteItem (nothing when there is none).
func (s *Uploads) Unwatch(ctx context.Context, id string) error {
	_, err := s.db.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: attr("id", avS(id))})
	if err != nil {
		return writeFail("DeleteItem", err)
	}
	return nil
}

// Get returns item id with one strongly consistent GetItem, or ENOTFOUND.
func (s *Uploads) Get(ctx context.Context, id string) (orders.Watch, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: attr("id", avS(id)),
		ConsistentRead: aws.Bool(true)})
	if err != nil {
		return orders.Watch{}, fail("GetItem", err)
	}
	if out.Item == nil {
		return orders.Watch{}, stampduty.Errorf(stampduty.ENOTFOUND, "no upload %s", id)
	}
	return decodeWatch(out.Item)
}

// Claim marks staged upload id attached with one conditional UpdateItem
// (see orders.Watches.Claim), returning the item after it (ReturnValues
// ALL_NEW). A certificate's upload is matched without its caller.
func (s *Uploads) Claim(ctx context.Context, id string, want orders.Staged, keys []string, now, due time.Time) (orders.Watch, error) {
	ks, err := attributevalue.Marshal(keys)
	if err != nil {
		return orders.Watch{}, stampduty.Internal(fmt.Errorf("encode upload keys: %w", err))
	}
	cond := "attribute_not_exists(used) AND k = :k AND od = :od AND #until > :now"
	vals := map[string]types.AttributeValue{
		":k": avS(kindNames[want.Kind]), ":od": avS(want.Order), ":now": avS(stampduty.FormatTime(now)),
		":used": avS(orders.UsedAttached), ":ks": ks, ":dk": avS(uploadDueKey(due, id)),
		":exp": avN(due.Add(WatchTTL).Unix()),
	}
	if want.Kind == stampduty.Document {
		cond += " AND who = :who"
		vals[":who"] = avS(want.Caller)
	} else {
		cond += " AND ff = :ff"
		vals[":ff"] = avS(want.Fulfillment)
	}
	out, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       attr("id", avS(id)),
		UpdateExpression:          aws.String("SET used = :used, ks = :ks, dk = :dk, expires = :exp"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#until": "until"},
		ExpressionAttributeValues: vals,
		ReturnValues:              types.ReturnValueAllNew,
	})
	if conditionFailed(err) {
		return orders.Watch{}, stampduty.Errorf(stampduty.ENOTFOUND, "upload %s may not be attached", id)
	}
	if err != nil {
		return orders.Watch{}, writeFail("UpdateItem", err)
	}
	return decodeWatch(out.Attributes)
}

// Due returns up to limit items due at now: one Query of the due index per
// shard, eventually consistent (Hold checks each on the table before the
// sweeper acts).
func (s *Uploads) Due(ctx context.Context, now time.Time, limit int) ([]orders.Watch, error) {
	var out []orders.Watch
	for shard := 0; shard < DueShards && len(out) < limit; shard++ {
		res, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
			TableName:              aws.String(s.table),
			IndexName:              aws.String(UploadsDueIndex),
			KeyConditionExpression: aws.String("dp = :p AND dk < :now"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":p": avS("due#" + strconv.Itoa(shard)), ":now": avS(stampduty.FormatTime(now))},
			Limit: aws.Int32(int32(limit - len(out))),
		})
		if err != nil {
			return nil, fail("Query", err)
		}
		for _, item := range res.Items {
			w, err := decodeWatch(item)
			if err != nil {
				return nil, err
			}
			out = append(out, w)
		}
	}
	return out, nil
}

// Hold makes w due at until (and an unused upload's used used) with one
// UpdateItem on condition that its due and use are still those read; false
// when they are not (or the item is gone).
func (s *Uploads) Hold(ctx context.Context, w orders.Watch, until time.Time, used string) (bool, error) {
	in := &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 attr("id", avS(w.ID)),
		UpdateExpression:    aws.String("SET dk = :dk, expires = :exp"),
		ConditionExpression: aws.String("dk = :was"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":dk": avS(uploadDueKey(until, w.ID)), ":exp": avN(until.Add(WatchTTL).Unix()),
			":was": avS(uploadDueKey(w.Due, w.ID))},
	}
	if w.Upload != nil && w.Upload.Used == "" && used != "" {
		in.UpdateExpression = aws.String("SET dk = :dk, expires = :exp, used = :used")
		in.ConditionExpression = aws.String("dk = :was AND attribute_not_exists(used)")
		in.ExpressionAttributeValues[":used"] = avS(used)
	}
	_, err := s.db.client.UpdateItem(ctx, in)
	return applied("UpdateItem", err)
}
