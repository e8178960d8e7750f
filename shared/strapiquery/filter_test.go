package strapiquery_test

import (
	"fmt"
	"math/rand"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
)

func i64(n int64) *int64 { return &n }

func dec(t testing.TB, s string) *stampduty.Decimal {
	d, err := stampduty.ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

// cond is one attribute condition.
func cond(field, op string, vals ...string) strapiquery.Expr {
	return strapiquery.Expr{Op: op, Field: field, Values: vals}
}

// tableCatalogue has a NULL fixed (2, 3) and a NULL factor (1, 2).
func tableCatalogue(t testing.TB) []stampduty.Article {
	return []stampduty.Article{
		{ID: 1, DocumentID: "doc1", PurposeName: "Affidavit", State: "Karnataka", Min: 20, Max: 20, Fixed: i64(20)},
		{ID: 2, DocumentID: "doc2", PurposeName: "Rent Agreement", State: "Goa", Min: 100, Max: 500},
		{ID: 3, DocumentID: "doc3", PurposeName: "Sale Deed", State: "Delhi", Min: 100, Max: 2500000, FollowsConsideration: true, Factor: dec(t, "0.06")},
		{ID: 4, DocumentID: "doc4", PurposeName: "50% Deed_x", State: "Goa", Min: 0, Max: 1000, Fixed: i64(1000), Factor: dec(t, "0.5")},
	}
}

// TestOperators checks each operator on a catalogue with NULLs: which ids
// it selects, or the message Compile refuses it with.
func TestOperators(t *testing.T) {
	arts := tableCatalogue(t)
	for _, tc := range []struct {
		name string
		e    strapiquery.Expr
		want string
	}{
		{"EqText", cond("state", "$eq", "Goa"), "[2 4]"},
		{"EqIsCaseSensitive", cond("state", "$eq", "goa"), "[]"},
		{"EqInt", cond("min", "$eq", "100"), "[2 3]"},
		{"EqIntExponentIsWhole", cond("min", "$eq", "1e2"), "[2 3]"},
		{"EqIntNeverMatchesNull", cond("fixed", "$eq", "0"), "[]"},
		{"EqBoolStrapiCast", cond("toFollowConsiderationPrice", "$eq", "t"), "[3]"},
		{"EqDecimalExact", cond("amountPercentConsideration", "$eq", "0.060"), "[3]"},
		{"EqiFolds", cond("state", "$eqi", "GOA"), "[2 4]"},
		{"EqiIsLikeSoPercentIsWild", cond("purpose_name", "$eqi", "%deed%"), "[3 4]"},
		{"NeSkipsNull", cond("fixed", "$ne", "20"), "[4]"},
		{"NeiSkipsNothingWithoutNull", cond("state", "$nei", "goa"), "[1 3]"},
		{"Lt", cond("max", "$lt", "500"), "[1]"},
		{"Lte", cond("max", "$lte", "500"), "[1 2]"},
		{"Gt", cond("fixed", "$gt", "20"), "[4]"},
		{"GteDecimal", cond("amountPercentConsideration", "$gte", "0.06"), "[3 4]"},
		{"LtTextIsBytewise", cond("state", "$lt", "a"), "[1 2 3 4]"},
		{"In", cond("id", "$in", "1", "3", "99"), "[1 3]"},
		{"InSkipsNull", cond("fixed", "$in", "20", "1000"), "[1 4]"},
		{"NotInSkipsNull", cond("fixed", "$notIn", "20"), "[4]"},
		{"NotInDecimalSkipsNull", cond("amountPercentConsideration", "$notIn", "0.5"), "[3]"},
		{"Contains", cond("purpose_name", "$contains", "Deed"), "[3 4]"},
		{"ContainsIsCaseSensitive", cond("purpose_name", "$contains", "deed"), "[]"},
		{"ContainsUnderscoreIsOneChar", cond("purpose_name", "$contains", "l_ D"), "[3]"},
		{"ContainsEscapedPercent", cond("purpose_name", "$contains", `0\%`), "[4]"},
		{"NotContains", cond("purpose_name", "$notContains", "Deed"), "[1 2]"},
		{"Containsi", cond("purpose_name", "$containsi", "DEED"), "[3 4]"},
		{"NotContainsi", cond("purpose_name", "$notContainsi", "deed"), "[1 2]"},
		{"NotContainsiSkipsNull", cond("fixed", "$notContainsi", "2"), "[4]"},
		{"ContainsOnNumberText", cond("max", "$contains", "500"), "[2 3]"},
		{"StartsWith", cond("state", "$startsWith", "G"), "[2 4]"},
		{"StartsWithi", cond("state", "$startsWithi", "g"), "[2 4]"},
		{"EndsWith", cond("purpose_name", "$endsWith", "Deed"), "[3]"},
		{"EndsWithi", cond("purpose_name", "$endsWithi", "DEED_X"), "[4]"},
		{"NullTrue", cond("fixed", "$null", "true"), "[2 3]"},
		{"NullFalse", cond("fixed", "$null", "false"), "[1 4]"},
		{"NotNull", cond("amountPercentConsideration", "$notNull", "true"), "[3 4]"},
		{"NotNullFalse", cond("amountPercentConsideration", "$notNull", "0"), "[1 2]"},
		{"BetweenInclusive", cond("min", "$between", "20", "100"), "[1 2 3]"},
		{"BetweenReversedIsEmpty", cond("min", "$between", "100", "20"), "[]"},
		{"BetweenSkipsNull", cond("fixed", "$between", "0", "5000"), "[1 4]"},
		{"EqSeveralValuesIsAny", cond("state", "$eq", "Goa", "Delhi"), "[2 3 4]"},
		{"AndEmptyIsTrue", strapiquery.And(), "[1 2 3 4]"},
		{"Or", strapiquery.Expr{Op: "$or", Args: []strapiquery.Expr{cond("id", "$eq", "1"), cond("state", "$eq", "Delhi")}}, "[1 3]"},
		{"OrWithNullIsNotTrue", strapiquery.Expr{Op: "$or", Args: []strapiquery.Expr{cond("fixed", "$gt", "0"), cond("id", "$eq", "3")}}, "[1 3 4]"},
		{"NotSkipsNull", strapiquery.Expr{Op: "$not", Args: []strapiquery.Expr{cond("fixed", "$eq", "20")}}, "[4]"},
		{"NotOfNullCheck", strapiquery.Expr{Op: "$not", Args: []strapiquery.Expr{cond("fixed", "$null", "true")}}, "[1 4]"},
		{"NotOfAnd", strapiquery.Expr{Op: "$not", Args: []strapiquery.Expr{cond("state", "$eq", "Goa"), cond("min", "$eq", "0")}}, "[1 2 3]"},
		// Refused by Compile: the EINVALID message.
		{"UnknownField", cond("price", "$eq", "1"), "Invalid key price"},
		{"UnknownOperator", cond("state", "$like", "x"), "Invalid key $like"},
		{"UnknownOperatorNested", strapiquery.Expr{Op: "$or", Args: []strapiquery.Expr{cond("state", "$regex", "x")}}, "Invalid key $regex"},
		{"IntNotNumber", cond("min", "$gt", "ten"), "filters[min][$gt] must be a number"},
		{"IntFraction", cond("fixed", "$eq", "1.5"), "filters[fixed][$eq] must be a whole number"},
		{"DecimalNotNumber", cond("amountPercentConsideration", "$lt", "half"), "filters[amountPercentConsideration][$lt] must be a number"},
		{"BetweenOneValue", cond("min", "$between", "1"), "filters[min][$between] takes two values, [0] and [1]"},
		{"NullTwoValues", cond("fixed", "$null", "true", "false"), "filters[fixed][$null] takes one value"},
		{"IntHugeExponent", strapiquery.Expr{Op: "$or", Args: []strapiquery.Expr{cond("min", "$gt", "1e100000000")}}, "filters[min][$gt] must be a number"},
		{"IntHex", cond("min", "$gt", "0x10"), "filters[min][$gt] must be a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := strapiquery.Compile(tc.e, strapiquery.ArticleFields)
			if err != nil {
				if got := stampduty.ErrorMessage(err); stampduty.ErrorCode(err) != stampduty.EINVALID || got != tc.want {
					t.Errorf("error = %v (%s), want %s", got, stampduty.ErrorCode(err), tc.want)
				}
				return
			}
			var ids []int64
			for _, a := range f.Articles(arts) {
				ids = append(ids, a.ID)
			}
			if got := fmt.Sprint(ids); got != tc.want {
				t.Errorf("ids = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestDocumentIDs checks the order filter: documentId with $eq or $in only.
func TestDocumentIDs(t *testing.T) {
	many := make([]string, 101)
	for i := range many {
		many[i] = strconv.Itoa(i)
	}
	for _, tc := range []struct {
		name string
		e    strapiquery.Expr
		ids  string
		ok   bool
		msg  string
	}{
		{"None", strapiquery.And(), "[]", false, ""},
		{"Eq", strapiquery.And(cond("documentId", "$eq", "a")), "[a]", true, ""},
		{"InDeduplicated", strapiquery.And(cond("documentId", "$in", "b", "a", "b")), "[b a]", true, ""},
		{"BothMustHold", strapiquery.And(cond("documentId", "$in", "a", "b"), cond("documentId", "$eq", "b")), "[b]", true, ""},
		{"Exactly100", strapiquery.And(cond("documentId", "$in", many[:100]...)), "", true, ""},
		{"Over100", strapiquery.And(cond("documentId", "$in", many...)), "", false, "filters[documentId][$in] takes at most 100 ids"},
		{"OtherField", strapiquery.And(cond("state", "$eq", "Goa")), "", false, "Invalid key state"},
		{"OtherOperator", strapiquery.And(cond("documentId", "$ne", "a")), "", false, "Invalid key $ne"},
		{"Or", strapiquery.And(strapiquery.Expr{Op: "$or", Args: []strapiquery.Expr{cond("documentId", "$eq", "a")}}), "", false, "Invalid key $or"},
		{"Not", strapiquery.And(strapiquery.Expr{Op: "$not", Args: []strapiquery.Expr{cond("documentId", "$eq", "a")}}), "", false, "Invalid key $not"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, ok, err := strapiquery.DocumentIDs(tc.e)
			if got, want := stampduty.ErrorMessage(err), tc.msg; got != want {
				t.Fatalf("error = %q, want %q", got, want)
			}
			if got, want := ok, tc.ok; got != want {
				t.Errorf("ok = %v, want %v", got, want)
			}
			if tc.ids != "" && fmt.Sprint(ids) != tc.ids {
				t.Errorf("ids = %v, want %s", ids, tc.ids)
			}
			if tc.name == "Exactly100" && len(ids) != 100 {
				t.Errorf("%d ids, want 100", len(ids))
			}
		})
	}
}

func TestLike(t *testing.T) {
	for _, tc := range []struct {
		s, p string
		want bool
	}{
		{"abc", "abc", true}, {"abc", "a%", true}, {"abc", "%c", true}, {"abc", "%b%", true},
		{"abc", "a_c", true}, {"abc", "a_", false}, {"", "%", true}, {"", "_", false},
		{"a%c", `a\%c`, true}, {"abc", `a\%c`, false}, {"a_c", `a\_c`, true}, {"abc", `a\_c`, false},
		{"é", "_", true}, {"aXbXc", "a%b%c", true}, {"ab", "a%b%c", false}, {`a\`, `a\`, true},
	} {
		if got := strapiquery.Like(tc.s, tc.p); got != tc.want {
			t.Errorf("Like(%q, %q) = %v, want %v", tc.s, tc.p, got, tc.want)
		}
	}
}

// The model: an SQL interpreter written apart from the evaluator, over a
// row as a map (nil is NULL; int64, float64, string, bool otherwise), with
// LIKE done by regular expressions and NULL as a nil *bool.

// modelRow is an article as the model sees it.
func modelRow(a stampduty.Article) map[string]any {
	row := map[string]any{"id": a.ID, "documentId": a.DocumentID, "purpose_name": a.PurposeName, "state": a.State,
		"min": a.Min, "max": a.Max, "fixed": nil, "toFollowConsiderationPrice": a.FollowsConsideration,
		"amountPercentConsideration": nil}
	if a.Fixed != nil {
		row["fixed"] = *a.Fixed
	}
	if a.Factor != nil {
		f, _ := strconv.ParseFloat(a.Factor.String(), 64)
		row["amountPercentConsideration"] = f
	}
	return row
}

func sqlBool(b bool) *bool { return &b }

// modelOperand casts an operand to the column's Go type.
func modelOperand(col any, s string) any {
	switch col.(type) {
	case int64:
		n, _ := strconv.ParseInt(s, 10, 64)
		return n
	case float64:
		f, _ := strconv.ParseFloat(s, 64)
		return f
	case bool:
		switch strings.ToLower(s) {
		case "false", "f", "0", "":
			return false
		}
		return true
	}
	return s
}

// modelCmp compares two values of one Go type.
func modelCmp(a, b any) int {
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		return map[bool]int{true: -1, false: 0}[x < y] + map[bool]int{true: 1, false: 0}[x > y]
	case float64:
		y := b.(float64)
		return map[bool]int{true: -1, false: 0}[x < y] + map[bool]int{true: 1, false: 0}[x > y]
	case bool:
		y := b.(bool)
		if x == y {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	}
	return strings.Compare(a.(string), b.(string))
}

// modelText is a value cast to text as PostgreSQL does.
func modelText(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// modelLike matches with a regular expression built from the pattern.
func modelLike(s, p string) bool {
	var re strings.Builder
	re.WriteString(`(?s)^`)
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '%':
			re.WriteString(`.*`)
		case '_':
			re.WriteString(`.`)
		case '\\':
			if i+1 < len(rs) {
				i++
			}
			re.WriteString(regexp.QuoteMeta(string(rs[i])))
		default:
			re.WriteString(regexp.QuoteMeta(string(rs[i])))
		}
	}
	re.WriteString(`$`)
	return regexp.MustCompile(re.String()).MatchString(s)
}

// modelEval is the SQL truth of e for row: nil is NULL.
func modelEval(e strapiquery.Expr, row map[string]any) *bool {
	switch e.Op {
	case "$and", "$not":
		var out *bool = sqlBool(true)
		for _, a := range e.Args {
			v := modelEval(a, row)
			if v != nil && !*v {
				out = sqlBool(false)
				break
			}
			if v == nil {
				out = nil
			}
		}
		if e.Op == "$not" && out != nil {
			return sqlBool(!*out)
		}
		return out
	case "$or":
		var out *bool = sqlBool(false)
		for _, a := range e.Args {
			v := modelEval(a, row)
			if v != nil && *v {
				return sqlBool(true)
			}
			if v == nil {
				out = nil
			}
		}
		return out
	}
	col := row[e.Field]
	if e.Op == "$null" || e.Op == "$notNull" {
		want := modelOperand(true, e.Values[0]).(bool)
		if e.Op == "$notNull" {
			want = !want
		}
		return sqlBool((col == nil) == want)
	}
	if col == nil {
		return nil
	}
	// Comparisons: the results of modelCmp each operator accepts.
	if accept, ok := map[string][]int{"$eq": {0}, "$ne": {-1, 1}, "$lt": {-1}, "$lte": {-1, 0},
		"$gt": {1}, "$gte": {0, 1}, "$in": {0}, "$notIn": {0}}[e.Op]; ok {
		hit := false
		for _, v := range e.Values {
			hit = hit || slices.Contains(accept, modelCmp(col, modelOperand(col, v)))
		}
		return sqlBool(hit != (e.Op == "$notIn"))
	}
	if e.Op == "$between" {
		lo, hi := modelOperand(col, e.Values[0]), modelOperand(col, e.Values[1])
		return sqlBool(modelCmp(col, lo) >= 0 && modelCmp(col, hi) <= 0)
	}
	// LIKE operators, read from their names: a trailing i folds case, a
	// leading not (or ne) negates, the stem places the wildcards.
	name := strings.TrimPrefix(e.Op, "$")
	fold := strings.HasSuffix(name, "i")
	stem := strings.TrimSuffix(name, "i")
	not := stem == "ne" || strings.HasPrefix(stem, "not")
	stem = strings.ToLower(strings.TrimPrefix(stem, "not"))
	wild, ok := map[string][2]string{"eq": {}, "ne": {}, "contains": {"%", "%"}, "startswith": {"", "%"}, "endswith": {"%", ""}}[stem]
	if !ok {
		panic("model: unknown operator " + e.Op)
	}
	pre, post := wild[0], wild[1]
	s := modelText(col)
	hit := false
	for _, v := range e.Values {
		p := pre + v + post
		if fold {
			s, p = strings.ToLower(s), strings.ToLower(p)
		}
		hit = hit || modelLike(s, p)
	}
	return sqlBool(hit != not)
}

// Random catalogues and filters, from small pools so that values collide.
var (
	randNames  = []string{"Sale Deed", "sale deed", "Gift Deed", "Affidavit", "50% Bond", "A_B", "Éclat", ""}
	randStates = []string{"Goa", "goa", "Delhi", "Karnataka", "Tamil Nadu"}
	randInts   = []string{"-1", "0", "1", "20", "100", "500", "1000"}
	randTexts  = []string{"Goa", "goa", "Deed", "deed", "%", "_", "%ee%", "a_", `50\%`, "Sale", "é", "", "Delhi", "Sale Deed"}
	randBools  = []string{"true", "false", "t", "f", "1", "0", "yes", ""}
	randNums   = []string{"0", "0.01", "0.05", "0.06", "0.5", "1", "-1", "0.060"}
	randFacts  = []string{"0.01", "0.05", "0.06", "0.5", "1"}
)

// likeOps are the operators that match text patterns.
var likeOps = []string{"$eqi", "$nei", "$contains", "$notContains", "$containsi", "$notContainsi", "$startsWith", "$startsWithi", "$endsWith", "$endsWithi"}

func pick[T any](r *rand.Rand, s []T) T { return s[r.Intn(len(s))] }

func randomCatalogue(t testing.TB, r *rand.Rand) []stampduty.Article {
	ints := []int64{0, 1, 20, 100, 500, 1000}
	arts := make([]stampduty.Article, r.Intn(12))
	for i := range arts {
		a := stampduty.Article{ID: int64(i + 1), DocumentID: fmt.Sprintf("doc%d", r.Intn(5)), PurposeName: pick(r, randNames),
			State: pick(r, randStates), Min: pick(r, ints), Max: pick(r, ints), FollowsConsideration: r.Intn(2) == 0}
		if r.Intn(2) == 0 {
			a.Fixed = i64(pick(r, ints))
		}
		if r.Intn(2) == 0 {
			a.Factor = dec(t, pick(r, randFacts))
		}
		arts[i] = a
	}
	return arts
}

func randomExpr(r *rand.Rand, depth int) strapiquery.Expr {
	if depth > 0 && r.Intn(3) == 0 {
		e := strapiquery.Expr{Op: pick(r, []string{"$and", "$or", "$not"})}
		for range r.Intn(4) {
			e.Args = append(e.Args, randomExpr(r, depth-1))
		}
		return e
	}
	fields := []string{"id", "documentId", "purpose_name", "state", "min", "max", "fixed", "toFollowConsiderationPrice", "amountPercentConsideration"}
	field := pick(r, fields)
	op := pick(r, strapiquery.Operators())
	pool := randTexts
	if op == "$null" || op == "$notNull" {
		return cond(field, op, pick(r, randBools))
	}
	if !slices.Contains(likeOps, op) {
		switch strapiquery.ArticleFields[field] {
		case strapiquery.Int:
			pool = randInts
		case strapiquery.Bool:
			pool = randBools
		case strapiquery.Number:
			pool = randNums
		default:
			if field == "purpose_name" {
				pool = randNames
			}
		}
	} else if field == "state" {
		pool = randStates
	}
	n := 1 + r.Intn(3)
	if op == "$between" {
		n = 2
	}
	vals := make([]string, n)
	for i := range vals {
		vals[i] = pick(r, pool)
	}
	return cond(field, op, vals...)
}

// TestAgainstModel compares the evaluator with the model on random
// catalogues and random filter trees.
func TestAgainstModel(t *testing.T) {
	r := rand.New(rand.NewSource(20261123))
	const cases = 5000
	for c := range cases {
		arts := randomCatalogue(t, r)
		e := randomExpr(r, 3)
		f, err := strapiquery.Compile(e, strapiquery.ArticleFields)
		if err != nil {
			t.Fatalf("case %d: Compile(%+v): %v", c, e, err)
		}
		var got, want []int64
		for _, a := range f.Articles(arts) {
			got = append(got, a.ID)
		}
		for _, a := range arts {
			if v := modelEval(e, modelRow(a)); v != nil && *v {
				want = append(want, a.ID)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: filter %+v\ncatalogue %+v\nids %v, model says %v", c, e, arts, got, want)
		}
	}
}
