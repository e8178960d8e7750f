package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// Section 12 (this file): a catalogue of thousands. For the sample
// catalogue and for catalogueBig articles, each published: the cold first
// request of list-articles (the bench's sample request, sorted by
// purpose_name; and a filtered one, which reads the whole snapshot) and of
// the quote, each the median of catalogueStarts fresh starts through the
// local Lambda runtime; the non-200 answers of catalogueProbe cold starts
// of each at the big size; warm list pages' latency; the DynamoDB calls
// and read units of a cold start and of a minute of an unchanged catalogue
// (one instance of each function, asked again after CatalogueTTL).
const (
	catalogueBig    = 10000
	catalogueStarts = 7
	catalogueProbe  = 20
	catalogueWarm   = 200
	// catalogueFiltered is a list query no pre-sorted page answers.
	catalogueFiltered = "filters[state][$eq]=Karnataka&sort[0]=min:desc&sort[1]=purpose_name:asc"
)

// catalogueCold is one kind of cold request's measurements.
type catalogueCold struct {
	First, Total durations // the first request; init + first request
	Calls        string    // the calls of the last start, and their read units
}

// catalogueSize is one size's measurements.
type catalogueSize struct {
	Articles                   int
	List, Filtered, Quote      catalogueCold
	Warm, WarmSorted, WarmFilt durations // warm list pages: the sample, two sort keys, filtered
	Failed, Probed             int       // non-200 answers of the probe starts
	ListMinute, QuoteMinute    string    // the calls of a minute, unchanged
	ListRSS, QuoteRSS          int64     // peak RSS of the warm instances, bytes
}

// catalogueEvents are the requests section 12 sends.
type catalogueEvents struct {
	list, sorted, filtered, quote []byte
}

// measureCatalogue is section 12.
func (b *bench) measureCatalogue() error {
	list, quote := firsts(b.reqs)["ListArticlesFunction"], firsts(b.reqs)["StampDutyQuotesFunction"]
	var ev catalogueEvents
	var err error
	if ev.list, err = list.event(b.refs, 0); err != nil {
		return err
	}
	if ev.quote, err = quote.event(b.refs, 0); err != nil {
		return err
	}
	if ev.sorted, err = withQuery(ev.list, "sort[0]=state:asc&sort[1]=purpose_name:asc&pagination[pageSize]=25"); err != nil {
		return err
	}
	if ev.filtered, err = withQuery(ev.list, catalogueFiltered); err != nil {
		return err
	}
	for _, n := range []int{0, catalogueBig} {
		s, err := b.catalogueAt(n, ev)
		if err != nil {
			return err
		}
		b.catalogue = append(b.catalogue, s)
	}
	return nil
}

// catalogueAt measures the sample catalogue, or one grown to size
// articles, published.
func (b *bench) catalogueAt(size int, ev catalogueEvents) (catalogueSize, error) {
	names, proxy, err := b.freshProxied(fmt.Sprintf("cat%d-", size))
	if err != nil {
		return catalogueSize{}, err
	}
	defer proxy.Close()
	db := store.New(localdb.Client(b.endpoint))
	cat := db.Catalogue(names["CatalogueTable"])
	seeded, _, err := cat.Current(b.ctx, true)
	if err != nil {
		return catalogueSize{}, err
	}
	if err := b.addArticles(db, names, size-seeded.Articles); err != nil {
		return catalogueSize{}, err
	}
	snap, err := cat.Publish(b.ctx, db.Articles(names["ArticlesTable"]), time.Now())
	if err != nil {
		return catalogueSize{}, err
	}
	s := catalogueSize{Articles: snap.Articles}
	say("catalogue: %d articles published (%d pages per order)\n", snap.Articles, snap.Pages)
	const list, quote = "ListArticlesFunction", "StampDutyQuotesFunction"
	proxy.SetMode(storetest.Meter)
	for i := range catalogueStarts {
		for _, r := range []struct {
			fn   string
			ev   []byte
			into *catalogueCold
		}{{list, ev.list, &s.List}, {list, ev.filtered, &s.Filtered}, {quote, ev.quote, &s.Quote}} {
			proxy.Take()
			init, first, status, err := b.coldOn(r.fn, r.ev, proxy.URL, names)
			if err != nil {
				return s, err
			}
			if status != 200 {
				return s, fmt.Errorf("%s at %d articles: status %d", r.fn, s.Articles, status)
			}
			r.into.First, r.into.Total = append(r.into.First, first), append(r.into.Total, init+first)
			r.into.Calls = operations(proxy.Take(), names)
		}
		say("\rcatalogue %d: cold starts %d/%d", s.Articles, i+1, catalogueStarts)
	}
	say("\n")
	proxy.SetMode(storetest.Record)
	if size > 0 {
		for i := range catalogueProbe {
			for _, r := range []struct {
				fn string
				ev []byte
			}{{list, ev.list}, {quote, ev.quote}} {
				_, _, status, err := b.coldOn(r.fn, r.ev, proxy.URL, names)
				if err != nil {
					return s, err
				}
				s.Probed++
				if status != 200 {
					s.Failed++
				}
			}
			say("\rcatalogue %d: probe starts %d/%d", s.Articles, i+1, catalogueProbe)
		}
		say("\n")
	}
	return s, b.catalogueWarm(&s, proxy, names, ev)
}

// catalogueWarm times warm list pages on one instance, and counts the
// calls of a minute of an unchanged catalogue on one instance of each
// function (after their first requests, nothing but the version check).
func (b *bench) catalogueWarm(s *catalogueSize, proxy *storetest.Proxy, names map[string]string, ev catalogueEvents) error {
	li, err := b.startOn("ListArticlesFunction", proxy.URL, names)
	if err != nil {
		return err
	}
	defer li.Close()
	qi, err := b.startOn("StampDutyQuotesFunction", proxy.URL, names)
	if err != nil {
		return err
	}
	defer qi.Close()
	ask := func(inst *runtimeapi.Instance, ev []byte) (time.Duration, error) {
		t0 := time.Now()
		out, err := inst.Invoke(b.ctx, ev)
		took := time.Since(t0)
		if code := statusOf(out); err == nil && code != 200 {
			err = fmt.Errorf("status %d", code)
		}
		return took, err
	}
	for _, x := range []struct {
		inst *runtimeapi.Instance
		ev   []byte
	}{{li, ev.list}, {li, ev.sorted}, {li, ev.filtered}, {qi, ev.quote}} {
		if _, err := ask(x.inst, x.ev); err != nil {
			return err
		}
	}
	for range catalogueWarm {
		for _, x := range []struct {
			ev   []byte
			into *durations
		}{{ev.list, &s.Warm}, {ev.sorted, &s.WarmSorted}, {ev.filtered, &s.WarmFilt}} {
			d, err := ask(li, x.ev)
			if err != nil {
				return err
			}
			*x.into = append(*x.into, d)
		}
	}
	proxy.Take()
	say("catalogue %d: waiting %s for each instance's version check of an unchanged catalogue\n", s.Articles, store.CatalogueTTL)
	time.Sleep(store.CatalogueTTL + time.Second)
	proxy.SetMode(storetest.Meter)
	defer proxy.SetMode(storetest.Record)
	if _, err := ask(li, ev.list); err != nil {
		return err
	}
	s.ListMinute = operations(proxy.Take(), names)
	if _, err := ask(qi, ev.quote); err != nil {
		return err
	}
	s.QuoteMinute = operations(proxy.Take(), names)
	s.ListRSS, s.QuoteRSS = li.PeakRSS(), qi.PeakRSS()
	return nil
}

// coldOn starts a fresh instance of function fn on names's tables through
// endpoint, sends it ev once and closes it: its init, the first request's
// time and status.
func (b *bench) coldOn(fn string, ev []byte, endpoint string, names map[string]string) (init, first time.Duration, status int, err error) {
	inst, err := b.startOn(fn, endpoint, names)
	if err != nil {
		return 0, 0, 0, err
	}
	defer inst.Close()
	t0 := time.Now()
	out, err := inst.Invoke(b.ctx, ev)
	first = time.Since(t0)
	if err != nil {
		return 0, 0, 0, b.withLog(err, fn)
	}
	return inst.InitDuration(), first, statusOf(out), inst.Close()
}

// statusOf is an API Gateway response's status, 0 when it is none.
func statusOf(out []byte) int {
	var resp events.APIGatewayV2HTTPResponse
	if json.Unmarshal(out, &resp) != nil {
		return 0
	}
	return resp.StatusCode
}

// withQuery returns the event ev with the raw query q instead of its own.
func withQuery(ev []byte, q string) ([]byte, error) {
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(ev, &req); err != nil {
		return nil, fmt.Errorf("event: %w", err)
	}
	req.RawQueryString, req.QueryStringParameters = q, nil
	return json.Marshal(req)
}

// operations names calls by logical table, with the read units the engine
// reported (Meter mode): "GetItem:CatalogueTable=2 (1 RCU)".
func operations(calls []storetest.ProxyCall, names map[string]string) string {
	logical := map[string]string{}
	for id, name := range names {
		logical[name] = id
	}
	count := map[string]int{}
	var rcu float64
	for _, c := range calls {
		count[c.Operation+":"+cmp.Or(logical[c.Table], c.Table)]++
		rcu += c.Consumed.Read
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, count[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return fmt.Sprintf("%s (%g RCU)", strings.Join(parts, " "), rcu)
}

// addArticles stores n generated articles besides the sample's, eight
// writers at once.
func (b *bench) addArticles(db *store.DB, names map[string]string, n int) error {
	if n <= 0 {
		return nil
	}
	factor, err := stampduty.ParseDecimal("0.06")
	if err != nil {
		return err
	}
	arts := make([]stampduty.Article, n)
	for i := range arts {
		a := stampduty.Article{PurposeName: fmt.Sprintf("Deed %05d", (i*7919)%n), State: "Karnataka", Min: 100, Max: 500000}
		switch i % 3 {
		case 0:
			fixed := int64(20 + i%500)
			a.Min, a.Max, a.Fixed = fixed, fixed, &fixed
		case 1:
			a.FollowsConsideration, a.Factor = true, &factor
		}
		arts[i] = a
	}
	articles, ids := db.Articles(names["ArticlesTable"]), db.IDs(names["CountersTable"], store.IDBlock)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		done atomic.Int64
	)
	for part := range slices.Chunk(arts, (n+7)/8) {
		wg.Go(func() {
			for one := range slices.Chunk(part, 50) {
				if _, _, err := articles.Upsert(b.ctx, ids, one); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				say("\rcatalogue: %d/%d articles stored", done.Add(int64(len(one))), n)
			}
		})
	}
	wg.Wait()
	say("\n")
	return errors.Join(errs...)
}

// catalogueTable is section 12's table.
func (b *bench) catalogueTable() (*table, error) {
	if len(b.catalogue) != 2 {
		return nil, fmt.Errorf("catalogue: not measured")
	}
	small, big := b.catalogue[0], b.catalogue[1]
	t := &table{
		Title:    fmt.Sprintf("12. A catalogue of thousands: %d and %d articles, published (dynalite behind the proxy, functions through the local Lambda runtime)", small.Articles, big.Articles),
		Header:   []string{"measure", fmt.Sprintf("%d articles", small.Articles), fmt.Sprintf("%d articles", big.Articles), "ratio", "bar"},
		TextCols: 1,
	}
	ratio := func(a, b durations) string { return fmt.Sprintf("%.2f×", float64(b.median())/float64(a.median())) }
	row := func(what string, a, b durations, bar string) {
		t.add(what, ms(a.median()), ms(b.median()), ratio(a, b), bar)
	}
	cold := fmt.Sprintf(", ms (median of %d fresh starts)", catalogueStarts)
	row("list-articles cold, first request (the sample: page 1 sorted by purpose_name)"+cold, small.List.First, big.List.First, "≤ 3×")
	row("list-articles cold, init + first request"+cold, small.List.Total, big.List.Total, "—")
	row("stamp-duty-quotes cold, first request"+cold, small.Quote.First, big.Quote.First, "≤ 3×")
	row("stamp-duty-quotes cold, init + first request"+cold, small.Quote.Total, big.Quote.Total, "—")
	row("list-articles cold, first request filtered and sorted by two keys (reads the whole snapshot)"+cold, small.Filtered.First, big.Filtered.First, "—")
	warm := fmt.Sprintf(", ms (median of %d on one instance)", catalogueWarm)
	row("warm list page: the sample"+warm, small.Warm, big.Warm, "≤ 5×")
	row("warm list page sorted by state, purpose_name"+warm, small.WarmSorted, big.WarmSorted, "—")
	row("warm list page filtered (state = Karnataka: every generated article) and sorted by two keys"+warm, small.WarmFilt, big.WarmFilt, "—")
	t.add(fmt.Sprintf("non-200 answers of %d cold starts each of list-articles and the quote", catalogueProbe), "—", fmt.Sprintf("%d of %d", big.Failed, big.Probed), "", "0")
	t.add("DynamoDB calls of a cold start: list-articles, the sample", small.List.Calls, big.List.Calls, "", "no Scan")
	t.add("DynamoDB calls of a cold start: list-articles, filtered", small.Filtered.Calls, big.Filtered.Calls, "", "no Scan")
	t.add("DynamoDB calls of a cold start: the quote", small.Quote.Calls, big.Quote.Calls, "", "no Scan")
	mb := func(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }
	t.add("peak RSS of the warm list-articles instance (all three requests, the whole catalogue held), MB", mb(small.ListRSS), mb(big.ListRSS), "", "—")
	t.add("peak RSS of the warm quote instance, MB", mb(small.QuoteRSS), mb(big.QuoteRSS), "", "—")
	t.add("calls of one list-articles instance in a minute, catalogue unchanged", small.ListMinute, big.ListMinute, "", "≤ 1 small read")
	t.add("calls of one quote instance in a minute, catalogue unchanged", small.QuoteMinute, big.QuoteMinute, "", "≤ 1 small read")
	t.Notes = append(t.Notes, "Each cold start is a fresh binary through the local Lambda runtime (as section 1 starts them) on tables seeded with the sample catalogue plus generated articles and published with `stampctl articles publish`'s code; the sample list request (page 1 of 25, sorted by purpose_name) is served from that sort's pre-sorted snapshot page; the filtered one reads every id-order page once (BatchGetItem), then filters, sorts once per instance and sort, and pages. A version read is a GetItem of a ~100-byte item (0.5 RCU); a page of 100 articles is about 2–3 KB gzipped (0.5 RCU). Peak RSS is the function process's VmHWM (Linux /proc).")
	return t, nil
}
