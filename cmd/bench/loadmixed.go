package main

// Section 12 of the load measurement (load.go starts the stack): the mixed
// load and filters[documentId][$in] by key.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"stampduty/shared/testkit/storetest"
)

// mixedLoad sends mixedRequests requests across two callers, mixedConcurrency
// at a time: half creates, a quarter list pages, the rest one order by
// documentId and $in of up to 10 ids; then compares what was acknowledged
// with what is stored and listed.
func (s *loadStack) mixedLoad() (mixedRun, error) {
	say("load: %d mixed requests, %d at a time…\n", mixedRequests, mixedConcurrency)
	callers := []string{"mixed-a", "mixed-b"}
	m := mixedRun{byKind: map[string]int{}}
	var mu sync.Mutex
	acked := map[string][]string{}
	pick := func(owner string, n int) []string {
		mu.Lock()
		defer mu.Unlock()
		docs := acked[owner]
		var out []string
		for range min(n, len(docs)) {
			out = append(out, docs[rand.N(len(docs))])
		}
		return out
	}
	t0 := time.Now()
	err := s.parallel(mixedRequests, mixedConcurrency, func(i int) error {
		owner := callers[i%2]
		var kind string
		var code int
		var body string
		var err error
		switch k := i % 20; {
		case k < 10:
			kind = "create"
			code, body, err = s.send("CreateOrderFunction", owner, "", nil)
			var ok struct{ OrderID string }
			if err == nil && code == 200 && json.Unmarshal([]byte(body), &ok) == nil {
				mu.Lock()
				acked[owner] = append(acked[owner], ok.OrderID)
				mu.Unlock()
			}
		case k < 15:
			kind = "list"
			code, _, err = s.send("ListOrdersFunction", owner, fmt.Sprintf("page=%d&pageSize=25", 1+rand.N(3)), nil)
		case k < 18:
			kind = "get"
			if docs := pick(owner, 1); len(docs) == 1 {
				code, _, err = s.send("GetOrderFunction", owner, "", map[string]string{"documentId": docs[0]})
			} else {
				code, _, err = s.send("ListOrdersFunction", owner, "", nil)
			}
		default:
			kind = "$in"
			q := ""
			for j, d := range pick(owner, 10) {
				q += fmt.Sprintf("&filters[documentId][$in][%d]=%s", j, d)
			}
			code, _, err = s.send("ListOrdersFunction", owner, "pageSize=25"+q, nil)
		}
		mu.Lock()
		defer mu.Unlock()
		m.byKind[kind]++
		switch {
		case code >= 500:
			m.fiveXX++
		case code != 200:
			m.other++
		}
		if (i+1)%200 == 0 {
			say("\rload: %d/%d mixed requests", i+1, mixedRequests)
		}
		return err
	})
	say("\n")
	m.wall = time.Since(t0)
	if err != nil {
		return m, err
	}
	m.exact = true
	for _, owner := range callers {
		want := map[string]bool{}
		for _, d := range acked[owner] {
			want[d] = true
		}
		m.acked += len(acked[owner])
		page, total, err := s.direct.Page(s.b.ctx, owner, 1, 10*mixedRequests)
		if err != nil {
			return m, err
		}
		seen := map[string]int{}
		for _, o := range page {
			seen[o.DocumentID]++
			if seen[o.DocumentID] == 2 {
				m.doubled++
			}
			if !want[o.DocumentID] {
				m.unacked++
			}
		}
		for d := range want {
			if seen[d] == 0 {
				m.lost++
			}
		}
		m.stored += len(page)
		// The caller's first order came from the warm-up.
		code, body, err := s.send("ListOrdersFunction", owner, "pageSize=1", nil)
		var listed struct{ Pagination struct{ Total int } }
		if err != nil || code != 200 || json.Unmarshal([]byte(body), &listed) != nil {
			return m, fmt.Errorf("load: the final list of %s: %d %v", owner, code, err)
		}
		m.totals += fmt.Sprintf("%s: %d listed (total %d), %d acknowledged + 1; ", owner, listed.Pagination.Total, total, len(want))
		m.exact = m.exact && listed.Pagination.Total == len(want)+1 && total == len(want)+1
	}
	m.unacked -= len(callers) // the warm-up's first orders
	return m, nil
}

// inByKey times filters[documentId][$in] of 1 and of inIDs of owner's ids
// through the list-orders function, and accounts one of each: inIDs in a
// row (the newest, a page of its list), then inIDs spread out (one in
// inSpread of its newest inIDs × inSpread).
func (s *loadStack) inByKey(owner string) ([]inRow, error) {
	say("load: filters[documentId][$in]…\n")
	page, _, err := s.direct.Page(s.b.ctx, owner, 1, inIDs*inSpread)
	if err != nil {
		return nil, err
	}
	if len(page) < inIDs*inSpread {
		return nil, fmt.Errorf("load: %s has %d orders, want %d", owner, len(page), inIDs*inSpread)
	}
	var rows []inRow
	for _, c := range []struct{ n, stride int }{{1, 1}, {inIDs, 1}, {inIDs, inSpread}} {
		n := c.n
		q := "pageSize=100"
		for j := range n {
			q += fmt.Sprintf("&filters[documentId][$in][%d]=%s", j, page[j*c.stride].DocumentID)
		}
		r := inRow{ids: n, stride: c.stride}
		var took time.Duration
		check := func() error {
			t0 := time.Now()
			code, body, err := s.send("ListOrdersFunction", owner, q, nil)
			took = time.Since(t0)
			var got struct{ Data []json.RawMessage }
			if err == nil && (code != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got.Data) != n) {
				err = fmt.Errorf("load: $in of %d ids: status %d, %d orders", n, code, len(got.Data))
			}
			return err
		}
		for range inSamples + 1 { // the first one warms the instance
			if err := check(); err != nil {
				return nil, err
			}
			r.wall = append(r.wall, took)
		}
		r.wall = r.wall[1:]
		calls, err := within(s.proxy, storetest.Account, check)
		if err != nil {
			return nil, err
		}
		for _, c := range storetest.Requests(calls) { // not the SDK's retries
			if c.Table == s.orders { // not the token's GetItem (cached per instance for 5 s)
				r.calls++
				r.units = r.units.Add(c.Billed)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// mixedTable is section 14: the mixed load and $in.
func (b *bench) mixedTable() (*table, error) {
	m := b.load.mixed
	if len(b.load.in) != 3 {
		return nil, errors.New("sections 13 and 14 have no $in rows")
	}
	t := &table{
		Title:  "14. Mixed load, filters[documentId][$in] by key, and batches of 100 (local stack)",
		Header: []string{"what", "requests", "5xx", "median ms", "DynamoDB calls", "RCU", "result"},
	}
	verdict := "exact"
	if !m.exact || m.lost+m.doubled+m.unacked > 0 {
		verdict = "NOT exact"
	}
	t.add(fmt.Sprintf("%d mixed requests, %d at a time, 2 callers", mixedRequests, mixedConcurrency), fmt.Sprint(mixedRequests), fmt.Sprint(m.fiveXX), "—", "—", "—",
		fmt.Sprintf("%d acknowledged, %d stored, %d lost, %d doubled, %d stored unacknowledged; totals %s", m.acked, m.stored, m.lost, m.doubled, m.unacked, verdict))
	for _, r := range b.load.in {
		what := fmt.Sprintf("list-orders, filters[documentId][$in] of %d ids", r.ids)
		switch {
		case r.ids > 1 && r.stride == 1:
			what += " in a row (the newest: a page of the list)"
		case r.ids > 1:
			what += fmt.Sprintf(" spread out (one in %d of the newest %d)", r.stride, r.ids*r.stride)
		}
		t.add(what, fmt.Sprint(len(r.wall)), "0", ms(r.wall.median()), fmt.Sprint(r.calls), num(r.units.Read, 1), "")
	}
	t.note("mixed: %s creates, %s list pages (1–3 of 25), %s one order by documentId, %s $in of up to 10 acknowledged ids, in %s; %d other non-200; %s",
		fmt.Sprint(m.byKind["create"]), fmt.Sprint(m.byKind["list"]), fmt.Sprint(m.byKind["get"]), fmt.Sprint(m.byKind["$in"]), m.wall.Round(100*time.Millisecond), m.other, m.totals)
	b.addBatchRows(t)
	one := float64(b.load.in[0].wall.median())
	t.note("$in: %d ids ÷ 1 id median latency %s in a row, %s spread out (bar: at most 5); calls and units of one accounted request, without the token's cached GetItem; ids in a row (their seqs' range at most twice their number) are read with one Query of the range, ids spread out with one BatchGetItem (shared/store, ByDocuments)",
		inIDs, ratio(float64(b.load.in[1].wall.median()), one), ratio(float64(b.load.in[2].wall.median()), one))
	return t, nil
}
