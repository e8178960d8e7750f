package store

// This file holds reading a caller's orders by documentId:
// filters[documentId][$in] by key, with the documentId index for ids that
// carry no seq.

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
)

// lookups is how many documentId lookups ByDocuments runs at once.
const lookups = 10

// ByDocuments returns owner's orders among the documentIds docs, newest
// first. An id that carries a seq (stampduty.IDSeq: every order stored
// since ids carry it) is read by key, (owner, seq), eventually consistent,
// and kept only when the item's documentId is one asked for: another
// caller's id names a slot of this caller's that holds another order or
// nothing. When the seqs are dense (denseRange: a caller's recent orders,
// a page of its list), one Query of the range reads them, a page of at
// most 1 MB; else, and for the seqs below what that page covered, one
// BatchGetItem per 100 ids (getItems). The ids found no other way (orders
// stored before, an order put at another seq than its id's, an unknown
// id) are looked up in the documentId index, one Query each, lookups at a
// time, and kept when owner's. The cost follows len(docs), never the
// number of owner's orders.
func (s *Orders) ByDocuments(ctx context.Context, owner string, docs []string) ([]stampduty.Order, error) {
	var own []orders.Stored
	found := map[string]bool{}
	asked := make(map[string]bool, len(docs))
	var keys []orderKey
	seen := map[int64]bool{}
	for _, doc := range docs {
		asked[doc] = true
		if seq, ok := stampduty.IDSeq(doc); ok && !seen[seq] {
			seen[seq] = true
			keys = append(keys, orderKey{Owner: owner, Seq: seq})
		}
	}
	keep := func(o orders.Stored) {
		if asked[o.DocumentID] && !found[o.DocumentID] {
			found[o.DocumentID] = true
			own = append(own, o)
		}
	}
	if lo, hi, ok := denseRange(keys); ok {
		got, _, covered, err := s.seqPages(ctx, owner, lo, hi, false, 1)
		if err != nil {
			return nil, err
		}
		for _, o := range got {
			keep(o)
		}
		keys = slices.DeleteFunc(keys, func(k orderKey) bool { return k.Seq >= covered })
	}
	items, err := s.getItems(ctx, keys)
	if err != nil {
		return nil, err
	}
	var byKey []orders.Stored
	for _, item := range items {
		if isVoid(item) {
			continue
		}
		o, err := decodeStored(item)
		if err != nil {
			return nil, err
		}
		if asked[o.DocumentID] {
			byKey = append(byKey, o)
		}
	}
	// An order of several papers read by key lacks its changed papers.
	if err := s.completeApart(ctx, byKey, false); err != nil {
		return nil, err
	}
	for _, o := range byKey {
		keep(o)
	}
	var rest []string
	for _, doc := range docs {
		if !found[doc] && doc != "" && !slices.Contains(rest, doc) {
			rest = append(rest, doc)
		}
	}
	byIndex, err := s.byIndex(ctx, owner, rest)
	if err != nil {
		return nil, err
	}
	own = append(own, byIndex...)
	slices.SortFunc(own, func(a, b orders.Stored) int { return cmp.Compare(b.Seq, a.Seq) })
	return ordersOf(own), nil
}

// denseRange returns the lowest and highest of two or more keys' seqs
// when the range between holds at most twice as many seqs as keys: one
// Query of it then reads at most as many items again as were asked for,
// in one call where BatchGetItem needs one per 100 keys, and DynamoDB
// bills a Query by the size read together (4 KB a unit) where a
// BatchGetItem rounds each item up to its own unit.
func denseRange(keys []orderKey) (lo, hi int64, ok bool) {
	if len(keys) < 2 {
		return 0, 0, false
	}
	lo, hi = keys[0].Seq, keys[0].Seq
	for _, k := range keys {
		lo, hi = min(lo, k.Seq), max(hi, k.Seq)
	}
	return lo, hi, hi-lo+1 <= 2*int64(len(keys))
}

// Owned returns owner's order doc, ENOTFOUND when owner has none. An id
// that carries its seq is read by key, (owner, seq), with its papers, with
// one strongly consistent Query of its range (readOrder): an order reads back the moment its create has
// answered, which an index (eventually consistent) does not promise. Any
// other id, or one whose slot holds another order (another caller's id, an
// order put at another seq than its id's), is looked up in the documentId
// index, and another owner's order found there is ENOTFOUND.
func (s *Orders) Owned(ctx context.Context, owner, doc string) (orders.Stored, error) {
	if seq, ok := stampduty.IDSeq(doc); ok {
		o, found, err := s.readOrder(ctx, owner, seq, true)
		if err != nil || found && o.DocumentID == doc {
			return o, err
		}
	}
	o, err := s.ByDocument(ctx, doc)
	if err == nil && o.Owner != owner {
		return orders.Stored{}, stampduty.Errorf(stampduty.ENOTFOUND, "no order %s", doc)
	}
	return o, err
}

// byIndex returns owner's orders among docs from the documentId index:
// one Query per id (ByDocument), lookups at a time.
func (s *Orders) byIndex(ctx context.Context, owner string, docs []string) ([]orders.Stored, error) {
	found := make([]orders.Stored, len(docs))
	errs := make([]error, len(docs))
	sem := make(chan struct{}, lookups)
	var wg sync.WaitGroup
	for i, doc := range docs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			found[i], errs[i] = s.ByDocument(ctx, doc)
		}()
	}
	wg.Wait()
	var own []orders.Stored
	for i, o := range found {
		switch err := errs[i]; {
		case stampduty.ErrorCode(err) == stampduty.ENOTFOUND:
		case err != nil:
			return nil, err
		case o.Owner == owner:
			own = append(own, o)
		}
	}
	return own, nil
}
