package store

// This file holds the reads of a caller's orders by seq: the count, the
// pages of the newest-first list, and the repair of a seq whose create
// vanished.

import (
	"context"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// DeadAfter is how long after its reservation a seq that holds no order is
// taken for the seq of a create that ended without storing it (a killed
// instance, say): far beyond the functions' 10 s timeout, and any clock
// difference between instances. A reader that meets such a seq voids it.
const DeadAfter = time.Minute

// tally is what the count Query tells of a caller's orders: top, the
// highest seq that holds or may yet hold an order (the last reserved, or
// for a caller without a counter the newest stored); floor, the lowest
// (1, or for a test owner its oldest order's: see testFloor); the voided
// seqs from floor to top, newest first, and those below floor (expired);
// and when the last seq was reserved (zero without a counter).
type tally struct {
	top, floor int64
	voids      []int64
	expired    []int64
	reserved   time.Time
}

// total is the number of orders the caller has or is creating.
func (t tally) total() int { return int(t.top-t.floor+1) - len(t.voids) }

// seqAt returns the seq of the pos-th newest order (from 0): top - pos,
// moved down past each void at or above it.
func (t tally) seqAt(pos int) int64 {
	s := t.top - int64(pos)
	for _, v := range t.voids {
		if v < s {
			break
		}
		s--
	}
	return s
}

// tally reads owner's counter and voids items (or, for a caller without a
// counter, its newest order): one strongly consistent Query of the two
// highest keys.
func (s *Orders) tally(ctx context.Context, owner string) (tally, error) {
	out, err := s.db.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#o = :o"),
		ExpressionAttributeNames:  map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": avS(owner)},
		ProjectionExpression:      aws.String("seq, n, b, t, vs"),
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(2),
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return tally{}, fail("Query", err)
	}
	var t tally
	stored := true // top is the newest stored seq, not the counter's
	for _, item := range out.Items {
		h, err := decodeHead(item)
		if err != nil {
			return tally{}, err
		}
		switch {
		case h.Seq == headSeq && h.N != nil && h.Base != nil:
			t.top, t.reserved, stored = *h.Base+*h.N, time.UnixMilli(h.At), false
		case h.Seq == voidsSeq:
			t.voids = h.Voids
		case h.Seq < orderSeqs && t.top == 0 && stored:
			t.top = h.Seq
		}
	}
	if stored && len(out.Items) == 2 && t.top == 0 {
		// The counter is being seeded (no reservation is usable yet), or
		// only the voids item was read: the newest order is further down.
		if t.top, err = s.newestStored(ctx, owner); err != nil {
			return tally{}, err
		}
	}
	t.floor = 1
	if _, live := stampduty.CallerOf(owner); !live && t.top > 0 {
		if t.floor, err = s.testFloor(ctx, owner, t.top); err != nil {
			return tally{}, err
		}
	}
	slices.Sort(t.voids)
	slices.Reverse(t.voids)
	for _, v := range t.voids {
		if v < t.floor {
			t.expired = append(t.expired, v)
		}
	}
	t.voids = slices.DeleteFunc(t.voids, func(v int64) bool { return v > t.top || v < t.floor })
	return t, nil
}

// testFloor returns the seq of test owner's oldest stored order, or top+1
// when it has none: a strongly consistent Query of its lowest items, a few
// at a time until one is an order's (a void marker or a paper's item
// whose order is gone is not), projecting seq and doc. Test orders expire
// (expiry.go): DynamoDB's TTL deletes them, about in the order of their
// seqs, so the seqs below the oldest left held orders that are gone and
// count no more, and no list reads them or voids them; the caller's total
// falls as its orders expire. An order whose create is still under way
// below the oldest stored one (two first creates at once) counts from the
// moment it is stored rather than reserved. An order expired out of turn
// (TTL deletes within about two days, in no set order) is a gap the list
// voids as it does a create that vanished. 1 RCU more per count or page
// of a test owner; none for a live owner.
func (s *Orders) testFloor(ctx context.Context, owner string, top int64) (int64, error) {
	p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#o = :o AND seq < :top"),
		ExpressionAttributeNames:  map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": avS(owner), ":top": avN(orderSeqs)},
		ProjectionExpression:      aws.String("seq, doc"),
		Limit:                     aws.Int32(8),
		ConsistentRead:            aws.Bool(true),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return 0, fail("Query", err)
		}
		for _, item := range out.Items {
			if _, ok := item["doc"]; ok {
				return seqOf(item)
			}
		}
	}
	return top + 1, nil
}

// Count returns how many orders owner has: its top seq less its voids, from
// one strongly consistent Query of two small items. An order counts from
// the moment its seq is reserved, a moment before it is stored.
func (s *Orders) Count(ctx context.Context, owner string) (int, error) {
	t, err := s.tally(ctx, owner)
	return t.total(), err
}

// Page returns page (from 1) of owner's orders, newest first, size per page,
// and the exact total: Slice((page-1)*size, size).
func (s *Orders) Page(ctx context.Context, owner string, page, size int) ([]stampduty.Order, int, error) {
	if page < 1 || size < 1 {
		total, err := s.Count(ctx, owner)
		return []stampduty.Order{}, total, err
	}
	return s.Slice(ctx, owner, (page-1)*size, size)
}

// Slice returns limit of owner's orders, newest first, skipping the start
// newest, and the exact total. It costs two Queries wherever the slice is:
// the tally, then the seq range that holds the slice (the voids tell where
// it is). The range is read eventually consistent (half the price); if it
// comes back short of what the tally promises, it is read once more,
// consistently. Still short, the seqs missing are orders being created, or
// seqs whose create vanished: those reserved more than DeadAfter ago are
// voided (repair), and the slice is read again.
func (s *Orders) Slice(ctx context.Context, owner string, start, limit int) ([]stampduty.Order, int, error) {
	for round := 0; ; round++ {
		t, err := s.tally(ctx, owner)
		if err != nil {
			return nil, 0, err
		}
		total := t.total()
		if start < 0 || limit < 1 || start >= total {
			return []stampduty.Order{}, total, nil
		}
		end := min(start+limit, total)
		hi, lo := t.seqAt(start), t.seqAt(end-1)
		found, marks, err := s.seqRange(ctx, owner, lo, hi, false)
		if err == nil && len(found) != end-start {
			found, marks, err = s.seqRange(ctx, owner, lo, hi, true)
		}
		if err != nil {
			return nil, 0, err
		}
		if len(found) == end-start || round > 0 {
			return ordersOf(found), total, nil
		}
		if repaired, err := s.repair(ctx, owner, t, lo, hi, found, marks); err != nil || !repaired {
			return ordersOf(found), total, err
		}
	}
}

// repair voids the seqs of [lo, hi] that hold nothing and whose create
// must have ended: reserved more than DeadAfter ago, as the tally's last
// reservation or an older order stored above them shows (an order's
// createdAt precedes its own seq's reservation by at most a request's
// time, and every lower seq was reserved before it). It also lists void
// markers the voids item lacks. It reports whether it changed anything.
func (s *Orders) repair(ctx context.Context, owner string, t tally, lo, hi int64, found []orders.Stored, marks []int64) (bool, error) {
	changed := false
	if len(t.expired) > 0 {
		// A test owner's voids below its oldest order count no more:
		// dropped from the voids item while repairing adds others, so it
		// never grows with orders that expired.
		if err := s.unlistVoids(ctx, owner, t.expired); err != nil {
			return false, err
		}
	}
	for _, m := range marks {
		if !slices.Contains(t.voids, m) {
			if err := s.listVoid(ctx, owner, m); err != nil {
				return false, err
			}
			changed = true
		}
	}
	dead := stampduty.FormatTime(time.Now().Add(-DeadAfter))
	quiet := !t.reserved.IsZero() && time.Since(t.reserved) > DeadAfter
	for seq := hi; seq >= lo; seq-- {
		if slices.Contains(t.voids, seq) || slices.Contains(marks, seq) || slices.ContainsFunc(found, func(o orders.Stored) bool { return o.Seq == seq }) {
			continue
		}
		older := slices.ContainsFunc(found, func(o orders.Stored) bool { return o.Seq > seq && o.CreatedAt < dead })
		if !quiet && !older {
			continue
		}
		// Void reports false when the order landed meanwhile: the next
		// read finds it, so that is a change too.
		if _, err := s.Void(ctx, owner, seq); err != nil {
			return false, err
		}
		changed = true
	}
	return changed, nil
}

func ordersOf(found []orders.Stored) []stampduty.Order {
	out := make([]stampduty.Order, len(found))
	for i, o := range found {
		out[i] = o.Order
	}
	return out
}

// seqRange returns owner's orders with lo <= seq <= hi, newest first, and
// the seqs of the void markers among them.
func (s *Orders) seqRange(ctx context.Context, owner string, lo, hi int64, consistent bool) ([]orders.Stored, []int64, error) {
	found, marks, _, err := s.seqPages(ctx, owner, lo, hi, consistent, 0)
	return found, marks, err
}

// seqPages is seqRange reading at most pages pages of the Query (0: all),
// which also returns the lowest seq it covered: lo when it read the whole
// range, else the last order (or void) read (a page holds at most 1 MB).
// The range runs to hi's papers (rangeTop), so the orders come with theirs:
// newest first, an order's papers come just before it.
func (s *Orders) seqPages(ctx context.Context, owner string, lo, hi int64, consistent bool, pages int) ([]orders.Stored, []int64, int64, error) {
	found := make([]orders.Stored, 0, hi-lo+1)
	var marks []int64
	p := dynamodb.NewQueryPaginator(s.db.client, &dynamodb.QueryInput{
		TableName:                aws.String(s.table),
		KeyConditionExpression:   aws.String("#o = :o AND seq BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#o": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":o":  avS(owner),
			":lo": avN(lo),
			":hi": avSeq(rangeTop(hi)),
		},
		ScanIndexForward: aws.Bool(false),
		ConsistentRead:   aws.Bool(consistent),
	})
	covered := hi + 1                            // nothing yet
	var papers []map[string]types.AttributeValue // of the order read next
	for read := 0; p.HasMorePages(); read++ {
		if pages > 0 && read == pages {
			return found, marks, covered, nil
		}
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, nil, 0, fail("Query", err)
		}
		for _, item := range out.Items {
			if isPaper(item) {
				papers = append(papers, item)
				continue
			}
			if isVoid(item) {
				papers = papers[:0]
				h, err := decodeHead(item)
				if err != nil {
					return nil, nil, 0, err
				}
				marks = append(marks, h.Seq)
				covered = h.Seq
				continue
			}
			o, err := assemble(item, papers)
			if err != nil {
				return nil, nil, 0, err
			}
			papers = papers[:0]
			found = append(found, o)
			covered = o.Seq
		}
	}
	return found, marks, lo, nil
}

// isVoid reports whether item is a void marker (see Orders.Void).
func isVoid(item map[string]types.AttributeValue) bool {
	_, ok := item["vd"]
	return ok
}
