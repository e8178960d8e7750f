package catalogue_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"stampduty/shared/catalogue"
	"stampduty/shared/duty"
	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
	"stampduty/shared/testkit/fake"
)

// reads is a Snapshot that counts how the list reads it: pages read on
// their own (Window) and whole reads (All). Its All returns the same slice
// every time, as store.SnapshotCache does while the catalogue is unchanged.
type reads struct {
	fake.Articles
	windows, alls int
}

func (r *reads) Window(ctx context.Context, order string, start, limit int) ([]stampduty.Article, int, error) {
	r.windows++
	return r.Articles.Window(ctx, order, start, limit)
}

func (r *reads) All(ctx context.Context) ([]stampduty.Article, error) {
	r.alls++
	return r.Articles.All(ctx)
}

// listArticles returns six articles, stored out of id order, with ties on
// state and a missing fixed amount on half of them.
func listArticles() fake.Articles {
	fixed := func(n int64) *int64 { return &n }
	return fake.Articles{
		{ID: 4, DocumentID: "d4", PurposeName: "Gift Deed", State: "Goa", Min: 10, Max: 100},
		{ID: 1, DocumentID: "d1", PurposeName: "Affidavit", State: "Karnataka", Min: 20, Max: 20, Fixed: fixed(20)},
		{ID: 6, DocumentID: "d6", PurposeName: "Sale Deed", State: "Delhi", Min: 30, Max: 900},
		{ID: 2, DocumentID: "d2", PurposeName: "Affidavit", State: "Goa", Min: 50, Max: 50, Fixed: fixed(50)},
		{ID: 5, DocumentID: "d5", PurposeName: "Rent Agreement", State: "Karnataka", Min: 5, Max: 500},
		{ID: 3, DocumentID: "d3", PurposeName: "Bond", State: "Delhi", Min: 10, Max: 10, Fixed: fixed(10)},
	}
}

// ids are the ids of arts, in order.
func ids(arts []stampduty.Article) string {
	out := make([]int64, len(arts))
	for i, a := range arts {
		out[i] = a.ID
	}
	return fmt.Sprint(out)
}

// TestListerList lists six articles with each kind of query: a page with
// no filter in the order of id, purpose_name or state is read on its own
// (an amount field's order is the day's projection, duty-rules.md §9,
// which the snapshot's order may not follow); every other query
// reads the whole catalogue, filtered, sorted (ties by id) and paged, its
// total counting what the filters select; a draft list is empty and reads
// nothing.
func TestListerList(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		want        string // the page's ids
		total       int
		windows     int // 1: read on its own; 0: the whole catalogue
		alls        int
	}{
		{"DefaultPageByIDReadOnItsOwn", "", "[1 2 3 4 5 6]", 6, 1, 0},
		{"OneKeyReadOnItsOwn", "sort=state:desc&pagination[pageSize]=2", "[1 5]", 6, 1, 0},
		{"AmountSortFollowsTheDay", "sort=min:desc&pagination[pageSize]=2", "[2 6]", 6, 0, 1},
		{"IDFirstReadOnItsOwn", "sort[0]=id:desc&sort[1]=state&pagination[start]=1&pagination[limit]=2", "[5 4]", 6, 1, 0},
		{"TwoKeysSortTheWhole", "sort[0]=state&sort[1]=purpose_name:desc", "[6 3 4 2 5 1]", 6, 0, 1},
		{"TiesByID", "sort[0]=state&sort[1]=state", "[3 6 2 4 1 5]", 6, 0, 1},
		{"FilterCountsWhatItSelects", "filters[state][$eq]=Goa&sort=id:desc", "[4 2]", 2, 0, 1},
		{"FilterNullPaged", "filters[fixed][$null]=true&pagination[page]=2&pagination[pageSize]=2", "[6]", 3, 0, 1},
		{"PastTheEndIsEmpty", "sort[0]=state&sort[1]=id&pagination[page]=9", "[]", 6, 0, 1},
		{"DraftIsEmpty", "status=draft&sort=state", "[]", 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := strapiquery.ParseList(tc.query, catalogue.ListSpec)
			if err != nil {
				t.Fatal(err)
			}
			src := &reads{Articles: listArticles()}
			page, total, err := (&catalogue.Lister{Articles: src}).List(context.Background(), l)
			if err != nil {
				t.Fatal(err)
			}
			if page == nil {
				t.Error("page is nil, want a list (data: [])")
			}
			if got := ids(page); got != tc.want {
				t.Errorf("page %s, want %s", got, tc.want)
			}
			if total != tc.total {
				t.Errorf("total %d, want %d", total, tc.total)
			}
			if src.windows != tc.windows || src.alls != tc.alls {
				t.Errorf("read %d windows and %d whole catalogues, want %d and %d", src.windows, src.alls, tc.windows, tc.alls)
			}
		})
	}
}

// TestListerRefusesBadFilters: a filter on an unknown field, or whose
// value is not its field's kind, is EINVALID, and nothing is read.
func TestListerRefusesBadFilters(t *testing.T) {
	for _, query := range []string{"filters[price][$eq]=1", "filters[min][$gt]=ten"} {
		t.Run(query, func(t *testing.T) {
			l, err := strapiquery.ParseList(query, catalogue.ListSpec)
			if err != nil {
				t.Fatal(err)
			}
			src := &reads{Articles: listArticles()}
			_, _, err = (&catalogue.Lister{Articles: src}).List(context.Background(), l)
			if got, want := stampduty.ErrorCode(err), stampduty.EINVALID; got != want {
				t.Errorf("error %v (%s), want %s", err, got, want)
			}
			if src.windows+src.alls != 0 {
				t.Errorf("read the catalogue %d times, want none", src.windows+src.alls)
			}
		})
	}
}

// TestListerSortsOncePerCatalogue: a sort the lister has made is served
// again without sorting (the same slice), until the catalogue changes;
// the catalogue's own slice is never reordered; and once it holds 8 sorts
// the next request starts again.
func TestListerSortsOncePerCatalogue(t *testing.T) {
	ctx := context.Background()
	list := func(t *testing.T, c *catalogue.Lister, query string) []stampduty.Article {
		t.Helper()
		l, err := strapiquery.ParseList(query, catalogue.ListSpec)
		if err != nil {
			t.Fatal(err)
		}
		page, _, err := c.List(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		return page
	}
	const byState = "sort[0]=state&sort[1]=purpose_name"
	t.Run("WarmSortIsTheSameSlice", func(t *testing.T) {
		arts := listArticles()
		before := slices.Clone(arts)
		c := &catalogue.Lister{Articles: arts}
		first, again := list(t, c, byState), list(t, c, byState)
		if &first[0] != &again[0] {
			t.Error("the same sort of the same catalogue was sorted again")
		}
		if ids(arts) != ids(before) {
			t.Errorf("the catalogue's slice was reordered: %s, was %s", ids(arts), ids(before))
		}
	})
	t.Run("NewCatalogueIsSortedAgain", func(t *testing.T) {
		src := &reads{Articles: listArticles()}
		c := &catalogue.Lister{Articles: src}
		first := list(t, c, byState)
		src.Articles = slices.Clone(src.Articles)[1:] // a new version: article 4 retired
		again := list(t, c, byState)
		if got, want := ids(again), "[3 6 2 1 5]"; got != want {
			t.Errorf("after a change, page %s, want %s (was %s)", got, want, ids(first))
		}
	})
	t.Run("FullCacheStartsAgain", func(t *testing.T) {
		c := &catalogue.Lister{Articles: listArticles()}
		first := list(t, c, byState)
		for _, q := range []string{"sort[0]=state&sort[1]=min", "sort[0]=state&sort[1]=max", "sort[0]=state&sort[1]=fixed",
			"sort[0]=min&sort[1]=state", "sort[0]=max&sort[1]=state", "sort[0]=fixed&sort[1]=state"} {
			list(t, c, q)
		}
		if again := list(t, c, byState); &first[0] != &again[0] {
			t.Error("7 sorts held: the first was sorted again, want it kept")
		}
		list(t, c, "sort[0]=purpose_name&sort[1]=state") // the 8th
		if again := list(t, c, byState); &first[0] == &again[0] {
			t.Error("8 sorts held: the next request kept them, want it to start again")
		}
	})
}

// TestListProjectsTheDay: an article whose rules are not legacy shows
// the legacy fields of the version in force on the day of the request
// (duty-rules.md §9), without an edit, and sorts by them; duty_rules
// cannot be filtered.
func TestListProjectsTheDay(t *testing.T) {
	rules, problems := duty.ValidateRules([]byte(`[
	 {"effectiveFrom": null, "effectiveTo": "2025-04-01", "citation": {"text": "old", "url": "https://example.org/a"},
	  "inputs": {"considerationPrice": {"required": true}},
	  "components": [{"id": "duty", "label": "1%", "kind": "percent", "base": "considerationPrice", "rate": "0.01"}],
	  "total": {"min": "20", "max": "40"}},
	 {"effectiveFrom": "2025-04-01", "effectiveTo": null, "citation": {"text": "new", "url": "https://example.org/b"},
	  "components": [{"id": "duty", "label": "Fixed", "kind": "fixed", "amount": "70"}]}]`))
	if problems != nil {
		t.Fatal(problems)
	}
	arts := listArticles()
	arts = append(arts, stampduty.Article{ID: 7, DocumentID: "d7", PurposeName: "Lease", State: "Goa", Rules: rules})
	for _, tc := range []struct {
		day      string
		min, max int64
		fixed    string
		first    int64 // the first id sorted by min:desc
		follows  bool
	}{
		{"2025-03-31", 20, 40, "<nil>", 2, true},
		{"2025-04-01", 0, stampduty.MaxAmount, "70", 2, true},
	} {
		t.Run(tc.day, func(t *testing.T) {
			now := func() time.Time { return must(time.Parse("2006-01-02 15:04", tc.day+" 12:00")) }
			c := &catalogue.Lister{Articles: fake.Articles(arts), Now: now}
			l, err := strapiquery.ParseList("filters[id][$eq]=7", catalogue.ListSpec)
			if err != nil {
				t.Fatal(err)
			}
			page, _, err := c.List(context.Background(), l)
			if err != nil || len(page) != 1 {
				t.Fatalf("List = %v, %v", page, err)
			}
			a := page[0]
			fixed := "<nil>"
			if a.Fixed != nil {
				fixed = fmt.Sprint(*a.Fixed)
			}
			if got, want := fmt.Sprint(a.Min, a.Max, fixed, a.FollowsConsideration, a.Factor == nil), fmt.Sprint(tc.min, tc.max, tc.fixed, tc.follows, true); got != want {
				t.Errorf("min max fixed follows noFactor = %s, want %s", got, want)
			}
			l, _ = strapiquery.ParseList("sort=max:desc&pagination[pageSize]=1", catalogue.ListSpec)
			page, _, _ = c.List(context.Background(), l)
			if tc.max == stampduty.MaxAmount && (len(page) != 1 || page[0].ID != 7) {
				t.Errorf("sorted by max:desc, first %v, want 7", ids(page))
			}
		})
	}
	t.Run("NoFilterOnRules", func(t *testing.T) {
		l, err := strapiquery.ParseList("filters[duty_rules][$null]=true", catalogue.ListSpec)
		if err == nil {
			_, _, err = (&catalogue.Lister{Articles: fake.Articles(arts)}).List(context.Background(), l)
		}
		if got, want := stampduty.ErrorMessage(err), "Invalid key duty_rules"; got != want {
			t.Errorf("filter on duty_rules: %q, want %q", got, want)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
