package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/webhooks"
)

// Deliveries is the deliveries table: key pk = "<owner>#<webhook
// documentId>" (owners never contain '#'), sk. It holds two kinds of item
// per webhook: a job per event to deliver to it (sk "job#<eventId>"), and a
// record per attempt made (sk "att#<at>#<eventId>#<attempt, 2 digits>", so
// that a Query of "att#" reads them in time order). A job not done carries
// the keys of two sparse indexes: dp = "due#<shard>" (jobDueShard) and
// dk = "<next>#<pk>#<eventId>" of the global index due, which the
// dispatcher reads soonest due first, shard by shard,
// and wq = its oseq of the local index waiting, where the dispatcher finds
// the earlier jobs of an order that a job must wait for.
type Deliveries struct {
	db    *DB
	table string
}

// Deliveries returns the deliveries table of the given name.
func (db *DB) Deliveries(table string) *Deliveries { return &Deliveries{db: db, table: table} }

// The deliveries table's indexes.
const (
	// DueIndex holds the jobs not done, by when they are due.
	DueIndex = "due"
	// WaitingIndex holds the jobs not done of each webhook, by oseq.
	WaitingIndex = "waiting"
)

// due is the base of dp on a job not done: dp = jobDueShard(pk, eventId), one
// of "due#00"…"due#15"; jobs stored before the sharding have "due" until
// their next write (a lease, an attempt, a postponement), which moves them
// to their shard.
const due = "due"

// jobDueShard is the due index's partition key of the job of event eventID
// under pk: by the job, not the webhook, so that one busy webhook's jobs
// spread over every shard too.
func jobDueShard(pk, eventID string) string { return shardKey(due, pk+"#"+eventID) }

// leave is the part of an update that makes a job done: it leaves both
// indexes (dp, dk, wq), has no next attempt and no lease.
const leave = " REMOVE #next, dp, dk, wq, ls"

// jobItem is a delivery job as stored, through attributevalue: the event
// as an outbox stores it (id, t, at, ps?, st?, f?, o: the order right after the
// change with its file keys; addresses are pre-signed when it is sent),
// flattened into the item. While the job is not done, done is absent (the
// design's "": dynalite refuses empty strings) and dp, dk and wq are the
// keys of the indexes; ls is the time a lease holds it until.
type jobItem struct {
	PK string `dynamodbav:"pk"` // <owner>#<webhook documentId>
	SK string `dynamodbav:"sk"` // job#<eventId>
	eventItem
	OSeq    string `dynamodbav:"oseq"`              // webhooks.Seq: the order of an order's events
	First   string `dynamodbav:"first,omitempty"`   // the first attempt's time (absent until made)
	N       int    `dynamodbav:"n"`                 // attempts made
	Next    string `dynamodbav:"next,omitempty"`    // when the next attempt is due (absent: none is)
	Done    string `dynamodbav:"done,omitempty"`    // delivered, gave_up or disabled; absent while not done
	DuePK   string `dynamodbav:"dp,omitempty"`      // "due" while not done
	DueKey  string `dynamodbav:"dk,omitempty"`      // <next>#<pk>#<eventId> while not done
	Waiting string `dynamodbav:"wq,omitempty"`      // oseq while not done
	Lease   string `dynamodbav:"ls,omitempty"`      // until when a dispatcher run holds it
	Expires int64  `dynamodbav:"expires,omitempty"` // a test owner's: its order's TTL (testExpires)
	// Body is an account event's whole body (webhooks.Publisher), absent
	// for an order event, whose o holds its order.
	Body []byte `dynamodbav:"b,omitempty"`
}

// newJobItem returns j as stored.
func newJobItem(j webhooks.Job) jobItem {
	pk := deliveriesPK(j.Owner, j.Webhook)
	it := jobItem{PK: pk, SK: jobSK(j.ID), eventItem: newEventItem(j.Pending), OSeq: j.Seq, First: j.First, N: j.N,
		Next: j.Next, Done: j.Done, Lease: j.Lease, Expires: testExpires(j.Owner, j.Order.CreatedAt), Body: j.Body}
	if j.Body != nil { // an account event: no order; a test account's expires as a test order made then would
		it.Order, it.Expires = nil, testExpires(j.Owner, j.At)
	}
	if j.Done == webhooks.JobDue && j.Next != "" {
		it.DuePK, it.DueKey, it.Waiting = jobDueShard(pk, j.ID), dueKey(j.Next, pk, j.ID), j.Seq
	}
	return it
}

// job returns the job it stores.
func (it jobItem) job() (webhooks.Job, error) {
	owner, webhook, _ := strings.Cut(it.PK, "#")
	if it.isStep() { // no event: the step names its order
		return webhooks.Job{Owner: owner, Webhook: webhook, Pending: stampduty.Pending{ID: it.ID, Type: it.Type, At: it.At},
			N: it.N, Next: it.Next, Done: it.Done, Lease: it.Lease}, nil
	}
	if it.Body != nil { // an account event: its body is whole
		return webhooks.Job{Owner: owner, Webhook: webhook, Pending: stampduty.Pending{ID: it.ID, Type: it.Type, At: it.At},
			Body: it.Body, Seq: it.OSeq, First: it.First, N: it.N, Next: it.Next, Done: it.Done, Lease: it.Lease}, nil
	}
	p, err := it.pending(owner, nil)
	if err != nil {
		return webhooks.Job{}, err
	}
	return webhooks.Job{Owner: owner, Webhook: webhook, Pending: p, Seq: it.OSeq, First: it.First, N: it.N,
		Next: it.Next, Done: it.Done, Lease: it.Lease}, nil
}

// decodeJobs reads job items.
func decodeJobs(items []map[string]types.AttributeValue) ([]webhooks.Job, error) {
	out := make([]webhooks.Job, 0, len(items))
	for _, item := range items {
		var it jobItem
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return nil, stampduty.Internal(fmt.Errorf("decode job: %w", err))
		}
		j, err := it.job()
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// attemptItem is one delivery attempt as stored.
//
//	pk, sk          <owner>#<webhook documentId>, att#<at>#<eventId>#<n, 2 digits>
//	id, t, n        the event's id and type, the attempt's number (from 1)
//	status, at, ms  the receiver's status (0: none), when it started, how long it took
//	next            when the next attempt is due (absent: none)
//	expires         a test owner's: its job's, the order's TTL (testExpires); absent when live
type attemptItem struct {
	PK      string  `dynamodbav:"pk"`
	SK      string  `dynamodbav:"sk"`
	ID      string  `dynamodbav:"id"`
	Type    string  `dynamodbav:"t"`
	N       int     `dynamodbav:"n"`
	Status  int     `dynamodbav:"status"`
	At      string  `dynamodbav:"at"`
	MS      int64   `dynamodbav:"ms"`
	Next    *string `dynamodbav:"next,omitempty"`
	Expires int64   `dynamodbav:"expires,omitempty"`
}

// deliveriesPK is the partition of owner's webhook doc.
func deliveriesPK(owner, webhook string) string { return owner + "#" + webhook }

// jobSK is the sort key of an event's job.
func jobSK(eventID string) string { return "job#" + eventID }

// dueKey is a due job's sort key in the due index: due time first.
func dueKey(next, pk, eventID string) string { return next + "#" + pk + "#" + eventID }

func keyOfJob(owner, webhook, eventID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": avS(deliveriesPK(owner, webhook)), "sk": avS(jobSK(eventID))}
}

// Put stores j unless its webhook has a job of its event already
// (attribute_not_exists: each event is delivered once per webhook however
// often it is relayed); ok is false when it had.
func (s *Deliveries) Put(ctx context.Context, j webhooks.Job) (bool, error) {
	item, err := attributevalue.MarshalMap(newJobItem(j))
	if err != nil {
		return false, stampduty.Internal(fmt.Errorf("encode job: %w", err))
	}
	_, err = s.db.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(sk)"),
	})
	return applied("PutItem", err)
}

// applied is the outcome of a conditional write op that answered err:
// false when its condition failed, an error when it failed otherwise.
func applied(op string, err error) (bool, error) {
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, writeFail(op, err)
	}
	return true, nil
}

// attr is a map of one attribute, for keys and expression values.
func attr(name string, v types.AttributeValue) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{name: v}
}

// Job returns the job of event eventID for owner's webhook (a strongly
// consistent GetItem); ok is false when there is none.
func (s *Deliveries) Job(ctx context.Context, owner, webhook, eventID string) (webhooks.Job, bool, error) {
	out, err := s.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            keyOfJob(owner, webhook, eventID),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return webhooks.Job{}, false, fail("GetItem", err)
	}
	if out.Item == nil {
		return webhooks.Job{}, false, nil
	}
	js, err := decodeJobs([]map[string]types.AttributeValue{out.Item})
	if err != nil {
		return webhooks.Job{}, false, err
	}
	return js[0], true, nil
}

// Redeliver makes the job of event eventID for owner's webhook due at now,
// whatever its state (a delivered or given-up job becomes due again,
// waiting again for any earlier job of its order not done; its attempts
// keep counting), with one UpdateItem conditioned on the job
// existing; ok is false when it does not.
func (s *Deliveries) Redeliver(ctx context.Context, owner, webhook, eventID string, now time.Time) (bool, error) {
	pk, next := deliveriesPK(owner, webhook), stampduty.FormatTime(now)
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOfJob(owner, webhook, eventID),
		UpdateExpression:          aws.String("SET #next = :next, dp = :dp, dk = :dk, wq = oseq REMOVE done"),
		ConditionExpression:       aws.String("attribute_exists(sk)"),
		ExpressionAttributeNames:  map[string]string{"#next": "next"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":next": avS(next), ":dp": avS(jobDueShard(pk, eventID)), ":dk": avS(dueKey(next, pk, eventID))},
	})
	return applied("UpdateItem", err)
}

// Attempts returns the newest limit attempts of owner's webhook, newest
// first: one Query of the partition's "att#" items, backwards.
func (s *Deliveries) Attempts(ctx context.Context, owner, webhook string, limit int) ([]webhooks.Attempt, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :att)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": avS(deliveriesPK(owner, webhook)), ":att": avS("att#")},
		ScanIndexForward: aws.Bool(false),
		Limit:            aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fail("Query", err)
	}
	var items []attemptItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, stampduty.Internal(fmt.Errorf("decode attempts: %w", err))
	}
	atts := make([]webhooks.Attempt, 0, len(items))
	for _, it := range items {
		atts = append(atts, webhooks.Attempt{EventID: it.ID, Type: it.Type, Attempt: it.N, Status: it.Status,
			At: it.At, DurationMS: it.MS, NextAttemptAt: it.Next})
	}
	return atts, nil
}

// Due returns jobs not done whose next attempt is due at or before now,
// up to limit of each shard, soonest first (exactly so within a shard):
// one Query per shard of the due index that poller p reads, all at once
// (the shards s with s mod n = i for poller i of n, and for poller 0 the
// unsharded "due" of jobs stored before the sharding; every one of them
// for the only poller: 17 Queries).
func (s *Deliveries) Due(ctx context.Context, p webhooks.Poller, now time.Time, limit int) ([]webhooks.Job, error) {
	// '$' sorts right after '#': every dk of a job due at now.
	after := avS(stampduty.FormatTime(now) + "$")
	items, err := s.db.queryShards(ctx, pollerKeys(due, p), "dk", func(key string) *dynamodb.QueryInput {
		return &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			IndexName:                 aws.String(DueIndex),
			KeyConditionExpression:    aws.String("dp = :due AND dk < :after"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":due": avS(key), ":after": after},
			Limit:                     aws.Int32(int32(limit)),
		}
	})
	if err != nil {
		return nil, err
	}
	return decodeJobs(items)
}

// Failing returns the jobs not done that have had at least minAttempts
// attempts, across every webhook: a paginated Query of the due index
// (which holds exactly the jobs not done), shard after shard, with the FilterExpression
// n >= :min; never a Scan of the table. Eventually consistent; the filter
// does not lower the units: every job not done is read. Test orders' step
// jobs, in the same index, are left out.
func (s *Deliveries) Failing(ctx context.Context, minAttempts int) ([]webhooks.Job, error) {
	var out []webhooks.Job
	for _, key := range shardKeys(due) {
		p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			IndexName:                 aws.String(DueIndex),
			KeyConditionExpression:    aws.String("dp = :due"),
			FilterExpression:          aws.String("n >= :min"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":due": avS(key), ":min": avN(int64(minAttempts))},
		})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fail("Query", err)
			}
			js, err := decodeJobs(page.Items)
			if err != nil {
				return nil, err
			}
			// A test order's steps are no webhook's deliveries.
			out = append(out, slices.DeleteFunc(js, func(j webhooks.Job) bool { return j.Webhook == orders.StepsHook })...)
		}
	}
	return out, nil
}

// Waiting returns the next of the earliest job of j's webhook and order
// before j that is not done ("" when none): one strongly consistent Query
// of the waiting index, which holds only jobs not done (with their next),
// for one item.
func (s *Deliveries) Waiting(ctx context.Context, j webhooks.Job) (string, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		IndexName:              aws.String(WaitingIndex),
		KeyConditionExpression: aws.String("pk = :pk AND wq BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": avS(deliveriesPK(j.Owner, j.Webhook)), ":from": avS(webhooks.OrderOf(j.Seq) + "#"), ":to": avS(j.Seq)},
		ConsistentRead: aws.Bool(true),
		Limit:          aws.Int32(1),
	})
	if err != nil {
		return "", fail("Query", err)
	}
	for _, item := range out.Items {
		var it struct {
			SK   string `dynamodbav:"sk"`
			Next string `dynamodbav:"next"`
		}
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return "", stampduty.Internal(fmt.Errorf("decode waiting job: %w", err))
		}
		if it.SK != jobSK(j.ID) {
			return it.Next, nil
		}
	}
	return "", nil
}

// Postpone makes j due at next instead (its next and its due index key),
// with one UpdateItem on condition that it has made j.N attempts and is
// not done; false when it moved on.
func (s *Deliveries) Postpone(ctx context.Context, j webhooks.Job, next string) (bool, error) {
	pk := deliveriesPK(j.Owner, j.Webhook)
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.table),
		Key:                      keyOfJob(j.Owner, j.Webhook, j.ID),
		UpdateExpression:         aws.String("SET #next = :next, dp = :dp, dk = :dk"),
		ConditionExpression:      aws.String("n = :n AND attribute_not_exists(done)"),
		ExpressionAttributeNames: map[string]string{"#next": "next"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":next": avS(next), ":dp": avS(jobDueShard(pk, j.ID)),
			":dk": avS(dueKey(next, pk, j.ID)), ":n": avN(int64(j.N))},
	})
	return applied("UpdateItem", err)
}

// Lease claims j until until for this run: one UpdateItem on condition
// that the job has made j.N attempts, is not done, and holds no lease
// unexpired at now, or holds j.Lease when that is not "" (the lease this
// run's relay put the job with, taken again). false: another run has it,
// or it moved on. The job
// stays where it is in the due index (moving it would move its index
// entry, 1 WCU more per attempt): a run reads up to a batch of each
// shard, far more than the attempts it can have under way, so jobs being
// attempted never crowd the others out of a pass's read.
func (s *Deliveries) Lease(ctx context.Context, j webhooks.Job, now, until time.Time) (bool, error) {
	cond := "n = :n AND attribute_not_exists(done) AND (attribute_not_exists(ls) OR ls <= :now)"
	vals := map[string]types.AttributeValue{
		":until": avS(stampduty.FormatTime(until)), ":n": avN(int64(j.N)), ":now": avS(stampduty.FormatTime(now))}
	if j.Lease != "" {
		cond = "n = :n AND attribute_not_exists(done) AND (attribute_not_exists(ls) OR ls <= :now OR ls = :mine)"
		vals[":mine"] = avS(j.Lease)
	}
	_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       keyOfJob(j.Owner, j.Webhook, j.ID),
		UpdateExpression:          aws.String("SET ls = :until"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeValues: vals,
	})
	return applied("UpdateItem", err)
}

// Stop marks every job of owner's webhook doc that is not done disabled:
// Queries of the waiting index (which holds exactly those), then an
// UpdateItem per job, each on condition that it is still there and not
// done (a test owner's job that its TTL removed in between is not made
// again as a stub that would never expire).
func (s *Deliveries) Stop(ctx context.Context, owner, doc string) error {
	pk := deliveriesPK(owner, doc)
	p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(WaitingIndex),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: attr(":pk", avS(pk)),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return fail("Query", err)
		}
		for _, item := range out.Items {
			_, err := s.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 aws.String(s.table),
				Key:                       map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]},
				UpdateExpression:          aws.String("SET done = :done" + leave),
				ConditionExpression:       aws.String("attribute_exists(sk) AND attribute_not_exists(done)"),
				ExpressionAttributeNames:  map[string]string{"#next": "next"},
				ExpressionAttributeValues: attr(":done", avS(webhooks.JobDisabled)),
			})
			if _, err := applied("UpdateItem", err); err != nil {
				return err
			}
		}
	}
	return nil
}

// The store is the jobs and webhooks of package webhooks' workflows.
var (
	_ webhooks.Jobs   = (*Deliveries)(nil)
	_ webhooks.Hooks  = (*Webhooks)(nil)
	_ webhooks.Outbox = (*Orders)(nil)

	_ webhooks.FailingJobs   = (*Deliveries)(nil)
	_ webhooks.DisabledHooks = (*Webhooks)(nil)
)
