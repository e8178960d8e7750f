package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"stampduty/shared/testkit/functest"
)

func TestMain(m *testing.M) { functest.Main(m) }

// article is what the tests read of a listed article.
type article struct {
	ID          int64  `json:"id"`
	PurposeName string `json:"purpose_name"`
	State       string `json:"state"`
}

type listBody struct {
	Data []article `json:"data"`
	Meta struct {
		Pagination map[string]int `json:"pagination"`
	} `json:"meta"`
}

// sample is TestListArticles's function over the sample catalogue (11
// articles), which each subtest lists in turn.
type sample struct{ *functest.Stack }

// list lists the articles with the raw query, and decodes a 200's body.
func (c sample) list(t *testing.T, query string) (functest.Response, listBody) {
	t.Helper()
	r := c.Invoke(functest.Request("GET", "/api/stamp-duty-datas", query, nil, ""))
	var b listBody
	if r.Status == 200 {
		if err := json.Unmarshal([]byte(r.Body), &b); err != nil {
			t.Fatal(err)
		}
	}
	return r, b
}

// names are the purpose/state of each article of a list, in order.
func names(b listBody) string {
	var out []string
	for _, a := range b.Data {
		out = append(out, a.PurposeName+"/"+a.State)
	}
	return strings.Join(out, ",")
}

// TestListArticles lists the sample catalogue with each query of the
// contract in turn; the last subtest checks the function against
// template.yaml with every call they made.
func TestListArticles(t *testing.T) {
	c := sample{functest.New(t, "ListArticlesFunction", wire)}
	t.Run("PublicDefaultsByID", c.publicDefaultsByID)
	t.Run("Shape", c.shape)
	t.Run("FactorIsExactDecimal", func(t *testing.T) {
		r := c.Invoke(functest.Request("GET", "/api/stamp-duty-datas", "sort[0]=purpose_name:asc&pagination[pageSize]=100", nil, ""))
		if !strings.Contains(r.Body, `"amountPercentConsideration":0.004`) || !strings.Contains(r.Body, `"amountPercentConsideration":0.07`) {
			t.Errorf("factors not written as exact decimals: %s", r.Body)
		}
	})
	for _, tc := range queryCases() {
		t.Run(tc.name, func(t *testing.T) { c.query(t, tc) })
	}
	t.Run("Fields", c.fields)
	t.Run("WithoutCount", c.withoutCount)
	t.Run("SizeCapped", func(t *testing.T) {
		_, b := c.list(t, "pagination[pageSize]=500")
		if got, want := fmt.Sprint(b.Meta.Pagination), "map[page:1 pageCount:1 pageSize:100 total:11]"; got != want {
			t.Errorf("pagination = %s, want %s", got, want)
		}
	})
	t.Run("Events", func(t *testing.T) {
		c.CheckEvents(t, map[string]int{"list-articles": 200, "list-articles-bad-sort": 400})
	})
	t.Run("WarmListIsFree", func(t *testing.T) {
		c.list(t, "")
		c.Proxy.Take()
		c.list(t, "sort=state")
		if got := c.Proxy.Take(); len(got) != 0 {
			t.Errorf("warm list made DynamoDB calls: %s", c.Env.Operations(got))
		}
	})
	t.Run("OldDeploymentScansUntilPublished", c.oldDeployment)
	t.Run("Template", func(t *testing.T) {
		c.CheckRoutes()
		c.CheckTemplate(c.Proxy.All())
	})
}

func (c sample) publicDefaultsByID(t *testing.T) {
	r, b := c.list(t, "")
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if got, want := fmt.Sprint(b.Meta.Pagination), "map[page:1 pageCount:1 pageSize:25 total:11]"; got != want {
		t.Errorf("pagination = %s, want %s", got, want)
	}
	for i := 1; i < len(b.Data); i++ {
		if b.Data[i-1].ID >= b.Data[i].ID {
			t.Fatalf("not in id order: %d then %d", b.Data[i-1].ID, b.Data[i].ID)
		}
	}
}

func (c sample) shape(t *testing.T) {
	r := c.Invoke(functest.Request("GET", "/api/stamp-duty-datas", "sort=purpose_name,state&pagination[pageSize]=1", nil, ""))
	var raw struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	json.Unmarshal([]byte(r.Body), &raw)
	a := raw.Data[0]
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	if len(keys) != 10 {
		t.Errorf("keys = %v, want the 10 article fields", keys)
	}
	// Affidavit/Karnataka: fixed 20, no factor.
	if string(a["fixed"]) != "20" || string(a["amountPercentConsideration"]) != "null" || string(a["toFollowConsiderationPrice"]) != "false" {
		t.Errorf("article = %s", r.Body)
	}
}

// queryCase is a query and its answer: 200 with the named page (the
// purpose/state of each article, of all 11), or 400 naming the one
// parameter refused.
type queryCase struct {
	name, query string
	status      int
	want        string
}

// queryCases are the queries of the article list and their answers.
func queryCases() []queryCase {
	return []queryCase{
		{"SortPurposeAscEncoded", "sort%5B0%5D=purpose_name%3Aasc&pagination%5BpageSize%5D=4", 200, "Affidavit/Karnataka,Affidavit/Maharashtra,Gift Deed/Tamil Nadu,Indemnity Bond/West Bengal"},
		{"SortTwoKeys", "sort[0]=state:desc&sort[1]=purpose_name:asc&pagination[pageSize]=3", 200, "Indemnity Bond/West Bengal,Lease Deed/Telangana,Gift Deed/Tamil Nadu"},
		{"SortPlainCommaList", "sort=purpose_name:desc,state:desc&pagination[pageSize]=2", 200, "Sale Deed/Maharashtra,Sale Deed/Delhi"},
		{"SortDefaultAsc", "sort[0]=max&sort[1]=purpose_name&pagination[pageSize]=2", 200, "Affidavit/Karnataka,Power of Attorney/Delhi"},
		{"SortDirectionAnyCase", "sort[0]=min:DESC&sort[1]=state&pagination[pageSize]=1", 200, "Partnership Deed/Karnataka"},
		{"SortFixedNullsLast", "sort[0]=fixed:asc&sort[1]=id&pagination[pageSize]=5", 200, "Affidavit/Karnataka,Power of Attorney/Delhi,Affidavit/Maharashtra,Partnership Deed/Karnataka,Rent Agreement/Karnataka"},
		{"SortFixedDescNullsFirst", "sort[0]=fixed:desc&sort[1]=purpose_name&pagination[pageSize]=1", 200, "Gift Deed/Tamil Nadu"},
		{"SecondPage", "sort[0]=purpose_name&sort[1]=state&pagination[page]=2&pagination[pageSize]=4", 200, "Lease Deed/Telangana,Loan Agreement/Gujarat,Partnership Deed/Karnataka,Power of Attorney/Delhi"},
		{"LastPartialPage", "sort[0]=purpose_name&sort[1]=state&pagination[page]=3&pagination[pageSize]=4", 200, "Rent Agreement/Karnataka,Sale Deed/Delhi,Sale Deed/Maharashtra"},
		{"PastTheEnd", "pagination[page]=4&pagination[pageSize]=4", 200, ""},
		{"UnknownSortField", "sort[0]=price:asc", 400, "sort[0]"},
		{"BadDirection", "sort[0]=purpose_name:up", 400, "sort[0]"},
		{"EmptySortField", "sort=", 400, "sort"},
		{"BothSortForms", "sort=id&sort[0]=state", 400, "sort"},
		{"SortIndexTwice", "sort[0]=id&sort[0]=state", 400, "sort[0]"},
		{"NestedSort", "sort[0][purpose_name]=asc", 400, "sort"},
		{"PageZero", "pagination[page]=0", 400, "pagination[page]"},
		{"PageSizeNotNumber", "pagination[pageSize]=ten", 400, "pagination[pageSize]"},
		{"PlainPageIgnored", "page=2&pagination[pageSize]=2", 200, "Affidavit/Karnataka,Affidavit/Maharashtra"},
		{"UnknownParamsIgnored", "foo=bar&owner=x&populate=*&populate[stamp_duty][fields][0]=x&locale=en&status=published&pagination[pageSize]=1", 200, "Affidavit/Karnataka"},
		{"OffsetPagination", "pagination[start]=2&pagination[limit]=2", 200, "Power of Attorney/Delhi,Rent Agreement/Karnataka"},
		// Filters, on one page of 100 sorted by id: total counts what they select.
		{"FilterEq", "filters[state][$eq]=Karnataka", 200, "Affidavit/Karnataka,Rent Agreement/Karnataka,Partnership Deed/Karnataka"},
		{"FilterImplicitEq", "filters[state]=Karnataka", 200, "Affidavit/Karnataka,Rent Agreement/Karnataka,Partnership Deed/Karnataka"},
		{"FilterNullFixed", "filters[fixed][$null]=true&filters[toFollowConsiderationPrice][$eq]=false", 200, "Rent Agreement/Karnataka,Indemnity Bond/West Bengal,Loan Agreement/Gujarat"},
		{"FilterNeSkipsNull", "filters[fixed][$ne]=20", 200, "Affidavit/Maharashtra,Power of Attorney/Delhi,Partnership Deed/Karnataka"},
		{"FilterNotSkipsNull", "filters[$not][fixed][$lt]=100", 200, "Affidavit/Maharashtra,Partnership Deed/Karnataka"},
		{"FilterOr", "filters[$or][0][state][$eq]=Goa&filters[$or][1][purpose_name][$endsWithi]=DEED&filters[max][$lt]=1000000", 200, "Gift Deed/Tamil Nadu,Lease Deed/Telangana,Partnership Deed/Karnataka"},
		{"FilterIn", "filters[state][$in][0]=Delhi&filters[state][$in][1]=Gujarat", 200, "Power of Attorney/Delhi,Loan Agreement/Gujarat,Sale Deed/Delhi"},
		{"FilterNotIn", "filters[amountPercentConsideration][$notIn][0]=0.06", 200, "Sale Deed/Maharashtra,Gift Deed/Tamil Nadu,Lease Deed/Telangana,Partnership Deed/Karnataka"},
		{"FilterBetweenDecimal", "filters[amountPercentConsideration][$between][0]=0.01&filters[amountPercentConsideration][$between][1]=0.06", 200, "Sale Deed/Delhi,Sale Deed/Maharashtra,Partnership Deed/Karnataka"},
		{"FilterContainsCaseSensitive", "filters[purpose_name][$contains]=deed", 200, ""},
		{"FilterStatusDraftIsEmpty", "status=draft", 200, ""},
		{"FilterUnknownField", "filters[price][$eq]=1", 400, "filters"},
		{"FilterUnknownOperator", "filters[state][$like]=Goa", 400, "filters"},
		{"FilterTypeMismatch", "filters[min][$gt]=ten", 400, "filters[min][$gt]"},
		{"FieldsUnknown", "fields[0]=price", 400, "fields"},
		{"BadWithCount", "pagination[withCount]=maybe", 400, "pagination[withCount]"},
		{"PageAndOffset", "pagination[page]=1&pagination[limit]=2", 400, "pagination"},
	}
}

// query sends tc's query and checks its answer.
func (c sample) query(t *testing.T, tc queryCase) {
	query, total := tc.query, 11
	if strings.HasPrefix(tc.name, "Filter") {
		query += "&pagination[pageSize]=100"
		total = len(strings.FieldsFunc(tc.want, func(r rune) bool { return r == ',' }))
	}
	r, b := c.list(t, query)
	if r.Status != tc.status {
		t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
	}
	if r.Status != 200 {
		if e := r.Error(t); e.Error.Name != "ValidationError" || strings.Join(e.Paths(), " ") != tc.want {
			t.Errorf("error = %+v, want a ValidationError on %s", e.Error, tc.want)
		}
		// Strapi's message for a field or operator it does not know.
		if msg := r.Error(t).Error.Message; (tc.want == "filters" || tc.want == "fields") && !strings.HasPrefix(msg, "Invalid key ") {
			t.Errorf("message = %q, want Invalid key <key>", msg)
		}
		return
	}
	if got := names(b); got != tc.want {
		t.Errorf("got  %s\nwant %s", got, tc.want)
	}
	if got := b.Meta.Pagination["total"]; got != total {
		t.Errorf("total = %d, want %d", got, total)
	}
}

func (c sample) fields(t *testing.T) {
	r := c.Invoke(functest.Request("GET", "/api/stamp-duty-datas", "fields[0]=state&fields[1]=fixed&pagination[pageSize]=1", nil, ""))
	var raw struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	json.Unmarshal([]byte(r.Body), &raw)
	if len(raw.Data) != 1 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if got, want := functest.JSONKeys(raw.Data[0]), "documentId,fixed,id,state"; got != want {
		t.Errorf("keys = %s, want %s", got, want)
	}
}

func (c sample) withoutCount(t *testing.T) {
	for query, want := range map[string]string{
		"pagination[withCount]=false":                     "map[page:1 pageSize:25]",
		"pagination[withCount]=f&pagination[start]=3":     "map[limit:25 start:3]",
		"pagination[start]=3&pagination[limit]=-1":        "map[limit:100 start:3 total:11]",
		"pagination[withCount]=1&pagination[pageSize]=10": "map[page:1 pageCount:2 pageSize:10 total:11]",
	} {
		_, b := c.list(t, query)
		if got := fmt.Sprint(b.Meta.Pagination); got != want {
			t.Errorf("%s: pagination = %s, want %s", query, got, want)
		}
	}
}
