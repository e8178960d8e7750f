// Package stampjson reads the domain's inputs from JSON into the decoded
// values the domain validates (stampduty.Field): a request body's members,
// as package jsonobj reads them (Fields), and the articles catalogue file
// (DecodeArticles, and EncodeArticles, its writer). The domain itself
// reads no JSON token kinds; this package is the one place that turns them
// into its values.
package stampjson

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"stampduty/shared/jsonobj"
	"stampduty/shared/stampduty"
)

// Fields returns the members of a JSON object as the domain's decoded
// fields, in order: a string, a number (its literal as sent), null or a
// boolean as itself, an object or an array as stampduty.Other.
func Fields(members []jsonobj.Member) []stampduty.Field {
	fields := make([]stampduty.Field, len(members))
	for i, m := range members {
		fields[i] = stampduty.Field{Name: m.Key, Value: value(m.Value)}
	}
	return fields
}

// value returns the domain's decoded value of a member's value.
func value(v jsonobj.Value) stampduty.Value {
	switch v.Kind {
	case jsonobj.Absent:
		return stampduty.Value{Kind: stampduty.Absent}
	case jsonobj.String:
		return stampduty.Value{Kind: stampduty.String, Text: v.Text, LoneSurrogate: v.LoneSurrogate}
	case jsonobj.Number:
		return stampduty.Value{Kind: stampduty.Number, Text: string(v.Number)}
	case jsonobj.Null:
		return stampduty.Value{Kind: stampduty.Null}
	case jsonobj.Bool:
		return stampduty.Value{Kind: stampduty.Bool, Bool: v.Bool}
	}
	return stampduty.Value{Kind: stampduty.Other, Raw: v.Raw}
}

// invalidFile is the EINVALID error of an articles file that cannot be read at all.
func invalidFile(msg string, cause error) *stampduty.Error {
	return &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: "", Message: msg}}, Err: cause}
}

// DecodeArticles reads an articles catalogue: a JSON array of objects with
// exactly the fields purpose_name, state, min, max, fixed,
// toFollowConsiderationPrice and amountPercentConsideration (fixed and
// amountPercentConsideration may be null or absent; the others are
// required). It checks every article with stampduty.NewArticle and the
// whole file for a (purpose_name, state) pair given twice. When anything is
// wrong it returns one EINVALID *stampduty.Error whose Fields hold every
// problem of every article, with paths such as [2].min (0-based). The
// articles returned have no ID or DocumentID.
func DecodeArticles(data []byte) ([]stampduty.Article, error) {
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
		arts     = make([]stampduty.Article, 0, len(rows))
		errs     []stampduty.FieldError
		badRows  int
		firstRow = make(map[pair]int, len(rows))
	)
	for i, raw := range rows {
		a, rowErrs := decodeArticle(raw)
		keyOK := !slices.ContainsFunc(rowErrs, func(e stampduty.FieldError) bool {
			return e.Path == "" || e.Path == "purpose_name" || e.Path == "state"
		})
		if keyOK {
			p := pair{a.PurposeName, a.State}
			if j, dup := firstRow[p]; dup {
				rowErrs = append(rowErrs, stampduty.FieldError{Path: "purpose_name",
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
		return nil, &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: errs}
	}
	return arts, nil
}

// decodeArticle reads one article of a catalogue file and checks it
// (stampduty.NewArticle). The errors have paths relative to the article.
func decodeArticle(raw json.RawMessage) (stampduty.Article, []stampduty.FieldError) {
	members, err := jsonobj.Members(raw, math.MaxInt)
	if err != nil { // raw came from encoding/json: it can only be another type
		return stampduty.Article{}, []stampduty.FieldError{{Path: "", Message: "each article must be a JSON object"}}
	}
	return stampduty.NewArticle(Fields(members))
}

// articleFile is an article as the catalogue file holds it: the list's
// fields but id and documentId.
type articleFile struct {
	PurposeName string             `json:"purpose_name"`
	State       string             `json:"state"`
	Min         int64              `json:"min"`
	Max         int64              `json:"max"`
	Fixed       *int64             `json:"fixed"`
	Follows     bool               `json:"toFollowConsiderationPrice"`
	Factor      *stampduty.Decimal `json:"amountPercentConsideration"`
	Rules       json.RawMessage    `json:"duty_rules"`
}

// EncodeArticles writes articles in the catalogue format of DecodeArticles:
// a JSON array of the seven catalogue fields (no id or documentId), sorted
// by purpose_name then state, indented by two spaces, ending in a newline.
// DecodeArticles reads back the same articles, when they are valid.
func EncodeArticles(arts []stampduty.Article) ([]byte, error) {
	rows := make([]articleFile, len(arts))
	for i, a := range arts {
		rules, err := a.DutyRules()
		if err != nil {
			return nil, fmt.Errorf("encode articles: %w", err)
		}
		rb, _ := rules.MarshalJSON() // never fails
		rows[i] = articleFile{PurposeName: a.PurposeName, State: a.State, Min: a.Min, Max: a.Max, Fixed: a.Fixed,
			Follows: a.FollowsConsideration, Factor: a.Factor, Rules: rb}
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
