package strapiquery

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
)

var articleSpec = ListSpec{Sortable: []string{"id", "state"}, Fields: []string{"purpose_name", "state"}}
var orderSpec = ListSpec{Sortable: []string{"createdAt"}, Fields: []string{"createdAt"}, TopLevelPage: true}

// TestParseListPaging checks the pagination rules: the block each query
// gives for 30 items, or the parameter it is refused on.
func TestParseListPaging(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		spec      ListSpec
		window    string // start,limit
		block     string // JSON, or the refused path
	}{
		{"Defaults", "", articleSpec, "0,25", `{"page":1,"pageSize":25,"pageCount":2,"total":30}`},
		{"Page", "pagination[page]=2&pagination[pageSize]=10", articleSpec, "10,10", `{"page":2,"pageSize":10,"pageCount":3,"total":30}`},
		{"PageSizeCapped", "pagination[pageSize]=101", articleSpec, "0,100", `{"page":1,"pageSize":100,"pageCount":1,"total":30}`},
		{"Offset", "pagination[start]=5&pagination[limit]=3", articleSpec, "5,3", `{"start":5,"limit":3,"total":30}`},
		{"OffsetStartOnly", "pagination[start]=5", articleSpec, "5,25", `{"start":5,"limit":25,"total":30}`},
		{"OffsetLimitCapped", "pagination[limit]=1000", articleSpec, "0,100", `{"start":0,"limit":100,"total":30}`},
		{"OffsetLimitMinusOneIsMax", "pagination[limit]=-1", articleSpec, "0,100", `{"start":0,"limit":100,"total":30}`},
		{"OffsetLimitZeroIsOne", "pagination[limit]=0", articleSpec, "0,1", `{"start":0,"limit":1,"total":30}`},
		{"WithCountFalse", "pagination[withCount]=false", articleSpec, "0,25", `{"page":1,"pageSize":25}`},
		{"WithCountF", "pagination[withCount]=f&pagination[start]=0", articleSpec, "0,25", `{"start":0,"limit":25}`},
		{"WithCount0", "pagination[withCount]=0", articleSpec, "0,25", `{"page":1,"pageSize":25}`},
		{"WithCountTrue", "pagination[withCount]=true", articleSpec, "0,25", `{"page":1,"pageSize":25,"pageCount":2,"total":30}`},
		{"WithCountT", "pagination[withCount]=t", articleSpec, "0,25", `{"page":1,"pageSize":25,"pageCount":2,"total":30}`},
		{"WithCount1", "pagination[withCount]=1", articleSpec, "0,25", `{"page":1,"pageSize":25,"pageCount":2,"total":30}`},
		{"UnknownPaginationKeyIgnored", "pagination[foo]=1", articleSpec, "0,25", `{"page":1,"pageSize":25,"pageCount":2,"total":30}`},
		{"UnknownParamsIgnored", "foo=1&bar[baz]=2&page=3&populate=*&populate[0]=x&locale=en&status=published", articleSpec, "0,25", `{"page":1,"pageSize":25,"pageCount":2,"total":30}`},
		{"OrderTopLevel", "page=2&pageSize=5", orderSpec, "5,5", `{"page":2,"pageSize":5,"pageCount":6,"total":30}`},
		{"OrderAlias", "pagination[page]=2&pagination[pageSize]=5", orderSpec, "5,5", `{"page":2,"pageSize":5,"pageCount":6,"total":30}`},
		{"OrderOffset", "pagination[start]=29&pagination[limit]=5", orderSpec, "29,5", `{"start":29,"limit":5,"total":30}`},
		{"OrderBothForms", "page=1&pagination[pageSize]=5", orderSpec, "", "pagination"},
		{"OrderTopLevelWithOffset", "page=1&pagination[limit]=5", orderSpec, "", "pagination"},
		{"Mixing", "pagination[page]=1&pagination[limit]=5", articleSpec, "", "pagination"},
		{"WithCountBad", "pagination[withCount]=yes", articleSpec, "", "pagination[withCount]"},
		{"WithCountCaseSensitive", "pagination[withCount]=TRUE", articleSpec, "", "pagination[withCount]"},
		{"StartNegative", "pagination[start]=-1", articleSpec, "", "pagination[start]"},
		{"LimitBelowMinusOne", "pagination[limit]=-2", articleSpec, "", "pagination[limit]"},
		{"LimitNotNumber", "pagination[limit]=ten", articleSpec, "", "pagination[limit]"},
		{"PageZero", "pagination[page]=0", articleSpec, "", "pagination[page]"},
		{"StartTwice", "pagination[start]=1&pagination[start]=2", articleSpec, "", "pagination[start]"},
		{"StatusOther", "status=archived", articleSpec, "", "status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseList(tc.raw, tc.spec)
			if tc.window == "" {
				e, ok := err.(*stampduty.Error)
				if !ok || e.Code != stampduty.EINVALID || len(e.Fields) == 0 {
					t.Fatalf("err = %v, want EINVALID on %s", err, tc.block)
				}
				if got, want := e.Fields[0].Path, tc.block; got != want {
					t.Errorf("path = %q, want %q (%s)", got, want, e.Message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			start, limit := l.Paging.Window()
			if got, want := fmt.Sprintf("%d,%d", start, limit), tc.window; got != want {
				t.Errorf("window = %s, want %s", got, want)
			}
			b, _ := json.Marshal(l.Paging.Block(30))
			if got, want := string(b), tc.block; got != want {
				t.Errorf("block = %s, want %s", got, want)
			}
		})
	}
}

// TestParseListFields checks fields, status and sort.
func TestParseListFields(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		fields    string
		msg       string
	}{
		{"None", "", "[]", ""},
		{"Indexed", "fields[0]=state&fields[1]=purpose_name", "[state purpose_name]", ""},
		{"CommaList", "fields=state,%20purpose_name", "[state purpose_name]", ""},
		{"Pushed", "fields[]=state", "[state]", ""},
		{"IDsAlwaysThere", "fields[0]=id&fields[1]=documentId", "[]", ""},
		{"Star", "fields=*", "[]", ""},
		{"Unknown", "fields[0]=price", "", "Invalid key price"},
		{"Object", "fields[a]=state", "", "fields must be a list of field names, such as fields[0]=name"},
		{"SortMalformed", "sort[0][state]=asc", "", "Invalid key sort[0][state]"},
		{"SortMalformedTwiceNamesTheFirstKey", "sort[1&sort[", "", "Invalid key sort["},
		{"StatusDraftTwice", "status=draft&status=draft", "", "status must be given once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseList(tc.raw, articleSpec)
			if got, want := stampduty.ErrorMessage(err), tc.msg; got != want {
				t.Fatalf("error = %q, want %q", got, want)
			}
			if err == nil && fmt.Sprint(l.Fields) != tc.fields {
				t.Errorf("fields = %v, want %s", l.Fields, tc.fields)
			}
		})
	}
	t.Run("StatusDraft", func(t *testing.T) {
		l, err := ParseList("status=draft", articleSpec)
		if err != nil || !l.Draft {
			t.Errorf("Draft = %v, %v; want true", l.Draft, err)
		}
	})
	t.Run("StarKeepsAll", func(t *testing.T) {
		l, _ := ParseList("fields=*", articleSpec)
		if l.Fields != nil {
			t.Errorf("fields = %#v, want nil (every field)", l.Fields)
		}
	})
}

// show writes an Expr compactly: op(field:values) or op[args].
func show(e Expr) string {
	if e.Field != "" {
		return fmt.Sprintf("%s(%s:%s)", e.Op, e.Field, strings.Join(e.Values, ","))
	}
	var args []string
	for _, a := range e.Args {
		args = append(args, show(a))
	}
	return e.Op + "[" + strings.Join(args, " ") + "]"
}

// TestFilters checks how qs's forms of filters are read.
func TestFilters(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      string
	}{
		{"None", "", "$and[]"},
		{"Eq", "filters[state][$eq]=Goa", "$and[$eq(state:Goa)]"},
		{"Encoded", "filters%5Bstate%5D%5B%24eq%5D=Goa", "$and[$eq(state:Goa)]"},
		{"ImplicitEq", "filters[state]=Goa", "$and[$eq(state:Goa)]"},
		{"ImplicitIn", "filters[state][0]=Goa&filters[state][1]=Delhi", "$and[$in(state:Goa,Delhi)]"},
		{"InIndexed", "filters[state][$in][1]=Delhi&filters[state][$in][0]=Goa", "$and[$in(state:Goa,Delhi)]"},
		{"InIndexOrderNumeric", "filters[id][$in][10]=b&filters[id][$in][2]=a", "$and[$in(id:a,b)]"},
		{"InPushed", "filters[state][$in][]=Goa&filters[state][$in][]=Delhi", "$and[$in(state:Goa,Delhi)]"},
		{"InRepeated", "filters[state][$in]=Goa&filters[state][$in]=Delhi", "$and[$in(state:Goa,Delhi)]"},
		{"TwoFieldsAnd", "filters[state][$eq]=Goa&filters[min][$gt]=1", "$and[$gt(min:1) $eq(state:Goa)]"},
		{"Or", "filters[$or][0][state][$eq]=Goa&filters[$or][1][min][$lt]=5", "$and[$or[$and[$eq(state:Goa)] $and[$lt(min:5)]]]"},
		{"AndNested", "filters[$and][0][$or][0][id][$eq]=1", "$and[$and[$and[$or[$and[$eq(id:1)]]]]]"},
		{"Not", "filters[$not][state][$eq]=Goa", "$and[$not[$eq(state:Goa)]]"},
		{"AttributeNot", "filters[fixed][$not][$null]=true", "$and[$not[$null(fixed:true)]]"},
		{"AttributeNotValue", "filters[state][$not]=Goa", "$and[$not[$eq(state:Goa)]]"},
		{"Between", "filters[min][$between][0]=1&filters[min][$between][1]=5", "$and[$between(min:1,5)]"},
		{"UnknownLogical", "filters[$xor][0][id][$eq]=1", "Invalid key $xor"},
		{"NestedNonOperator", "filters[state][name][$eq]=x", "Invalid key name"},
		{"BareFilters", "filters=x", "filters must be an object, such as filters[field][$eq]=value"},
		{"OrNotList", "filters[$or][a][id][$eq]=1", "filters[$or] must be a list of conditions, such as filters[$or][0][field][$eq]=value"},
		{"OrOfValues", "filters[$or][0]=1", "filters[$or] must be a list of conditions, such as filters[$or][0][field][$eq]=value"},
		{"NotValue", "filters[$not]=1", "filters[$not] must be an object of conditions"},
		{"ValueAndKeys", "filters[state]=Goa&filters[state][$eq]=Goa", "filters[state] is given both a value and keys"},
		{"OperatorObject", "filters[state][$eq][a]=Goa", "filters[state][$eq] must be a value or a list of values"},
		{"UnclosedBracket", "filters[state=Goa", "Invalid key filters[state"},
		{"TooDeep", "filters" + strings.Repeat("[$not]", 17) + "[id]=1", "Invalid key filters" + strings.Repeat("[$not]", 17) + "[id]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseList(tc.raw, articleSpec)
			got := stampduty.ErrorMessage(err)
			if err == nil {
				got = show(l.Filters)
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	type item struct {
		ID         int64  `json:"id"`
		DocumentID string `json:"documentId"`
		A, B, C    string
	}
	got, err := Select([]item{{ID: 1, DocumentID: "d", A: "a", B: "b", C: "c"}}, []string{"A"}, "C")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if got, want := string(b), `[{"A":"a","C":"c","documentId":"d","id":1}]`; got != want {
		t.Errorf("Select = %s, want %s", got, want)
	}
	all, _ := Select([]item{{ID: 1}}, nil)
	if _, ok := all.([]item); !ok {
		t.Errorf("Select with nil fields = %T, want the items as they are", all)
	}
}

// TestBlockPageCount: pageCount is ceil(total / pageSize).
func TestBlockPageCount(t *testing.T) {
	for _, tc := range []struct{ page, size, total, count int }{{1, 25, 0, 0}, {1, 25, 25, 1}, {1, 25, 26, 2}, {3, 10, 101, 11}} {
		b := Paging{Page: tc.page, PageSize: tc.size}.Block(tc.total)
		if *b.PageCount != tc.count || *b.Total != tc.total || *b.Page != tc.page || *b.PageSize != tc.size {
			t.Errorf("%+v: pageCount %d, want %d", tc, *b.PageCount, tc.count)
		}
	}
}

// TestPageOf: the window's items, none past the end.
func TestPageOf(t *testing.T) {
	items := []int{0, 1, 2, 3, 4}
	for _, tc := range []struct {
		name string
		p    Paging
		want []int
	}{
		{"FirstPage", Paging{Page: 1, PageSize: 2}, []int{0, 1}},
		{"LastPartialPage", Paging{Page: 3, PageSize: 2}, []int{4}},
		{"PastTheEnd", Paging{Page: 4, PageSize: 2}, []int{}},
		{"Offset", Paging{Offset: true, Start: 3, Limit: 10}, []int{3, 4}},
		{"OffsetAtTheEnd", Paging{Offset: true, Start: 5, Limit: 1}, []int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PageOf(tc.p, items); !slices.Equal(got, tc.want) || got == nil {
				t.Errorf("PageOf = %v, want %v (not nil)", got, tc.want)
			}
		})
	}
}
