package stampduty

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"stampduty/shared/jsonobj"
)

// MaxPurposeNameLength is the longest purpose_name, in characters: the
// longest purpose an order can name.
const MaxPurposeNameLength = MaxFreeTextLength

// The fields of an article in the catalogue file, in the order their errors
// are reported.
const (
	aPurposeName = iota
	aState
	aMin
	aMax
	aFixed
	aFollows
	aFactor
	numArticleFields
)

// articleFieldNames are the JSON names of the catalogue fields, by index.
var articleFieldNames = [numArticleFields]string{
	"purpose_name",
	"state",
	"min",
	"max",
	"fixed",
	"toFollowConsiderationPrice",
	"amountPercentConsideration",
}

// articleFieldIndex returns the index of a catalogue field, -1 for any other key.
func articleFieldIndex(key string) int {
	for i, name := range articleFieldNames {
		if key == name {
			return i
		}
	}
	return -1
}

// Validate checks the rules of an article: purpose_name not empty, without
// surrounding white space or control characters, at most 200 characters;
// state one of States; 0 ≤ min ≤ max ≤ MaxAmount; fixed, when set, within
// [min, max]; amountPercentConsideration, when set, in (0, 1], and set when
// toFollowConsiderationPrice is true. It returns one error per failing field,
// with the field's JSON name as Path; nil when the article is valid. The id
// and documentId are not checked.
func (a Article) Validate() []FieldError {
	var msgs [numArticleFields]string
	a.check(&msgs)
	return articleErrors(&msgs)
}

// check writes into msgs the rule each field breaks, skipping the fields
// that already have a message (they could not be read) and every check that
// involves one of them.
func (a Article) check(msgs *[numArticleFields]string) {
	var bad [numArticleFields]bool
	for i, m := range msgs {
		bad[i] = m != ""
	}
	if !bad[aPurposeName] {
		switch p := a.PurposeName; {
		case p == "":
			msgs[aPurposeName] = msgNotEmpty
		case strings.TrimSpace(p) != p:
			msgs[aPurposeName] = " must not start or end with white space"
		case utf8.RuneCountInString(p) > MaxPurposeNameLength:
			msgs[aPurposeName] = msgFreeTextLen
		case !printable(p):
			msgs[aPurposeName] = msgUnprintable
		}
	}
	if !bad[aState] && !ValidState(a.State) {
		msgs[aState] = msgState
	}
	for _, f := range [...]struct {
		idx int
		v   int64
	}{{aMin, a.Min}, {aMax, a.Max}} {
		if !bad[f.idx] {
			msgs[f.idx] = checkAmount(f.v, msgAboveMaxAmount)
		}
	}
	boundsOK := !bad[aMin] && !bad[aMax] && msgs[aMin] == "" && msgs[aMax] == ""
	if boundsOK && a.Min > a.Max {
		msgs[aMax] = " must be greater than or equal to min"
		boundsOK = false
	}
	if !bad[aFixed] && a.Fixed != nil {
		msgs[aFixed] = checkAmount(*a.Fixed, msgAboveMaxAmount)
		if msgs[aFixed] == "" && boundsOK && (*a.Fixed < a.Min || *a.Fixed > a.Max) {
			msgs[aFixed] = " must be between min and max"
		}
	}
	if !bad[aFactor] {
		switch {
		case a.Factor == nil && a.FollowsConsideration && !bad[aFollows]:
			msgs[aFactor] = " is required when toFollowConsiderationPrice is true"
		case a.Factor != nil && (a.Factor.Sign() == 0 || a.Factor.Cmp(NewDecimal(1, 0)) > 0):
			msgs[aFactor] = msgFactorRange
		}
	}
}

// articleErrors returns the errors of the fields with a message, in the
// order of the fields.
func articleErrors(msgs *[numArticleFields]string) []FieldError {
	var errs []FieldError
	for i, m := range msgs {
		if m != "" {
			errs = append(errs, FieldError{Path: articleFieldNames[i], Message: articleFieldNames[i] + m})
		}
	}
	return errs
}

// The messages of the catalogue, after the field name.
const (
	msgFactorRange    = " must be greater than 0 and at most 1"
	msgDuplicateField = " is given more than once"
	msgNotAllowed     = " is not an allowed field"
)

// invalidFile is the EINVALID error of an articles file that cannot be read at all.
func invalidFile(msg string, cause error) *Error {
	return &Error{Code: EINVALID, Message: msg, Fields: []FieldError{{Path: "", Message: msg}}, Err: cause}
}

// DecodeArticles reads an articles catalogue: a JSON array of objects with
// exactly the fields purpose_name, state, min, max, fixed,
// toFollowConsiderationPrice and amountPercentConsideration (fixed and
// amountPercentConsideration may be null or absent; the others are
// required). It checks every article with Validate and the whole file for a
// (purpose_name, state) pair given twice. When anything is wrong it returns
// one EINVALID *Error whose Fields hold every problem of every article, with
// paths such as [2].min (0-based). The articles returned have no ID or
// DocumentID.
func DecodeArticles(data []byte) ([]Article, error) {
	if !utf8.Valid(data) {
		return nil, invalidFile("The articles file is not valid UTF-8", nil)
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(data, &rows); err != nil {
		if t := bytes.TrimLeft(data, " \t\r\n"); json.Valid(data) && (len(t) == 0 || t[0] != '[') {
			return nil, invalidFile("The articles file must be a JSON array", err)
		}
		return nil, invalidFile("The articles file is not valid JSON", fmt.Errorf("decode articles: %w", err))
	}
	if rows == nil { // the file is null
		return nil, invalidFile("The articles file must be a JSON array", nil)
	}

	type pair struct{ purpose, state string }
	var (
		arts     = make([]Article, 0, len(rows))
		errs     []FieldError
		badRows  int
		firstRow = make(map[pair]int, len(rows))
	)
	for i, raw := range rows {
		a, rowErrs := decodeArticle(raw)
		keyOK := !slices.ContainsFunc(rowErrs, func(e FieldError) bool {
			return e.Path == "" || e.Path == "purpose_name" || e.Path == "state"
		})
		if keyOK {
			p := pair{a.PurposeName, a.State}
			if j, dup := firstRow[p]; dup {
				rowErrs = append(rowErrs, FieldError{Path: "purpose_name",
					Message: fmt.Sprintf("purpose_name and state are the same as in article [%d]", j)})
			} else {
				firstRow[p] = i
			}
		}
		if len(rowErrs) > 0 {
			badRows++
			prefix := "[" + strconv.Itoa(i) + "]"
			for _, e := range rowErrs {
				if e.Path != "" {
					e.Path = prefix + "." + e.Path
				} else {
					e.Path = prefix
				}
				errs = append(errs, e)
			}
		}
		arts = append(arts, a)
	}
	if badRows > 0 {
		msg := fmt.Sprintf("%d articles are invalid", badRows)
		if badRows == 1 {
			msg = "1 article is invalid"
		}
		return nil, &Error{Code: EINVALID, Message: msg, Fields: errs}
	}
	return arts, nil
}

// decodeArticle reads one article of a catalogue file and checks it. The
// errors have paths relative to the article.
func decodeArticle(raw json.RawMessage) (Article, []FieldError) {
	members, err := jsonobj.Members(raw, math.MaxInt)
	if err != nil { // raw came from encoding/json: it can only be another type
		return Article{}, []FieldError{{Path: "", Message: "each article must be a JSON object"}}
	}
	var (
		a     Article
		vals  [numArticleFields]jsonobj.Value
		extra []FieldError // unknown and repeated keys, in file order
	)
	for _, m := range members {
		idx := articleFieldIndex(m.Key)
		switch {
		case m.Occurrence == 2:
			extra = append(extra, FieldError{Path: m.Key, Message: m.Key + msgDuplicateField})
		case m.Occurrence > 2:
		case idx < 0:
			extra = append(extra, FieldError{Path: m.Key, Message: m.Key + msgNotAllowed})
		default:
			vals[idx] = m.Value
		}
	}

	var msgs [numArticleFields]string
	str := func(idx int) string {
		switch v := vals[idx]; v.Kind {
		case jsonobj.String:
			if v.LoneSurrogate {
				msgs[idx] = msgUnprintable
			}
			return v.Text
		case jsonobj.Absent, jsonobj.Null:
			msgs[idx] = msgRequired
		default:
			msgs[idx] = msgMustBeString
		}
		return ""
	}
	a.PurposeName = str(aPurposeName)
	a.State = str(aState)
	a.Min, msgs[aMin] = integerValue(vals[aMin])
	a.Max, msgs[aMax] = integerValue(vals[aMax])
	if k := vals[aFixed].Kind; k != jsonobj.Absent && k != jsonobj.Null {
		var v int64
		if v, msgs[aFixed] = integerValue(vals[aFixed]); msgs[aFixed] == "" {
			a.Fixed = &v
		}
	}
	switch v := vals[aFollows]; v.Kind {
	case jsonobj.Bool:
		a.FollowsConsideration = v.Bool
	case jsonobj.Absent, jsonobj.Null:
		msgs[aFollows] = msgRequired
	default:
		msgs[aFollows] = " must be a boolean"
	}
	switch v := vals[aFactor]; v.Kind {
	case jsonobj.Absent, jsonobj.Null:
	case jsonobj.Number:
		d, err := ParseDecimal(string(v.Number))
		switch {
		case errors.Is(err, ErrDecimalPrecision):
			msgs[aFactor] = " must have at most 18 decimal places"
		case err != nil:
			msgs[aFactor] = msgFactorRange
		default:
			a.Factor = &d
		}
	default:
		msgs[aFactor] = " must be a number"
	}

	a.check(&msgs)
	return a, append(articleErrors(&msgs), extra...)
}

// articleFile is an article as the catalogue file holds it: no id or
// documentId (Article's are hidden by these, which are always nil).
type articleFile struct {
	Article
	ID         *int64  `json:"id,omitempty"`
	DocumentID *string `json:"documentId,omitempty"`
}

// EncodeArticles writes articles in the catalogue format of DecodeArticles:
// a JSON array of the seven catalogue fields (no id or documentId), sorted
// by purpose_name then state, indented by two spaces, ending in a newline.
// DecodeArticles reads back the same articles, when they are valid.
func EncodeArticles(arts []Article) ([]byte, error) {
	rows := make([]articleFile, len(arts))
	for i, a := range arts {
		rows[i] = articleFile{Article: a}
	}
	slices.SortStableFunc(rows, func(x, y articleFile) int {
		return cmp.Or(strings.Compare(x.PurposeName, y.PurposeName), strings.Compare(x.State, y.State))
	})
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rows); err != nil {
		return nil, fmt.Errorf("encode articles: %w", err)
	}
	return b.Bytes(), nil
}
