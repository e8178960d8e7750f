// Package dutyexamples reads duty-rules-examples.json (the spec's worked
// examples, kept in shared/duty/testdata) for the tests that run them
// through the quote and the create: each rule set as an article of a
// catalogue file, each case as the query or body that asks for it.
package dutyexamples

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"stampduty/shared/testkit/localdb"
)

// File is the examples' place, relative to the module root.
const File = "shared/duty/testdata/duty-rules-examples.json"

// Case is one worked example.
type Case struct {
	ID         string         `json:"id"`
	Rule       string         `json:"rule"`
	State      string         `json:"state"`
	Instrument string         `json:"instrument"`
	Date       string         `json:"date"`
	Inputs     map[string]any `json:"inputs"`
	Expected   struct {
		Total *int64 `json:"total"`
		Lines []struct {
			ID     string `json:"id"`
			Amount string `json:"amount"`
		} `json:"lines"`
		Error *struct {
			Status  int        `json:"status"`
			Name    string     `json:"name"`
			Paths   [][]string `json:"paths"`
			Message string     `json:"message"`
		} `json:"error"`
	} `json:"expected"`
	// Purpose and ArticleState name the article the case's rule set is
	// stored as (Catalogue).
	Purpose, ArticleState string
}

// Examples are the rule sets and the cases.
type Examples struct {
	Rules map[string]json.RawMessage
	Cases []Case
}

// Load reads the examples.
func Load() (Examples, error) {
	root, err := localdb.ModuleRoot(".")
	if err != nil {
		return Examples{}, err
	}
	b, err := os.ReadFile(filepath.Join(root, File))
	if err != nil {
		return Examples{}, err
	}
	var raw struct {
		Rules map[string]struct {
			DutyRules json.RawMessage `json:"duty_rules"`
		} `json:"rules"`
		Cases []Case `json:"cases"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Examples{}, fmt.Errorf("duty examples: %w", err)
	}
	ex := Examples{Rules: map[string]json.RawMessage{}}
	for k, v := range raw.Rules {
		ex.Rules[k] = v.DutyRules
	}
	for _, c := range raw.Cases {
		c.Purpose, c.ArticleState = article(c.Rule)
		ex.Cases = append(ex.Cases, c)
	}
	return ex, nil
}

// article is the purpose and state a rule set is stored under: its own,
// but for the central rules (stored in Maharashtra, whose papers carry
// them too) and the legacy one (a purpose of its own).
func article(rule string) (purpose, state string) {
	if rest, ok := strings.CutPrefix(rule, "legacy/"); ok {
		state, purpose, _ = strings.Cut(rest, "/")
		return purpose + " (legacy)", state
	}
	state, purpose, _ = strings.Cut(rule, "/")
	if state == "India (central)" {
		state = "Maharashtra"
	}
	return purpose, state
}

// Catalogue returns a catalogue file of every rule set: one article each,
// with its duty_rules; the legacy rule set as the legacy article it
// migrates (factor and bounds read from its one percent and its total).
func (ex Examples) Catalogue() ([]byte, error) {
	var arts []map[string]any
	names := make([]string, 0, len(ex.Rules))
	for k := range ex.Rules {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		purpose, state := article(k)
		a := map[string]any{"purpose_name": purpose, "state": state}
		if strings.HasPrefix(k, "legacy/") {
			var v []struct {
				Components []struct{ Rate string }   `json:"components"`
				Total      struct{ Min, Max string } `json:"total"`
			}
			if err := json.Unmarshal(ex.Rules[k], &v); err != nil || len(v) != 1 {
				return nil, fmt.Errorf("legacy rule %s: %v", k, err)
			}
			a["min"], a["max"] = json.RawMessage(v[0].Total.Min), json.RawMessage(v[0].Total.Max)
			a["fixed"], a["toFollowConsiderationPrice"] = nil, true
			a["amountPercentConsideration"] = json.RawMessage(v[0].Components[0].Rate)
		} else {
			a["duty_rules"] = ex.Rules[k]
		}
		arts = append(arts, a)
	}
	return json.Marshal(arts)
}

// Query is the quote's query string of c.
func (c Case) Query() string {
	q := url.Values{"purpose": {c.Purpose}, "state": {c.ArticleState}, "instrumentDate": {c.Date}}
	for k, v := range c.Inputs {
		q.Set(k, fmt.Sprint(v))
	}
	return q.Encode()
}

// Body is a create-order body of c's inputs (no instrumentDate: an order
// is made today), with the parties every order names, and for a legacy
// article the amount the contract requires.
func (c Case) Body() ([]byte, error) {
	body := map[string]any{"purpose": c.Purpose, "state": c.ArticleState, "paidBy": "First Party",
		"firstPartyMobileNumber": "9876543210", "firstPartyName": "Asha Rao", "secondPartyName": "Vikram Shah"}
	if strings.HasSuffix(c.Purpose, " (legacy)") {
		body["amount"] = 0 // a legacy article keeps the contract: amount is required (ignored when it follows the price)
	}
	for k, v := range c.Inputs {
		body[k] = v
	}
	return json.Marshal(body)
}

// WantLines are the expected lines as "id amount".
func (c Case) WantLines() []string {
	var out []string
	for _, l := range c.Expected.Lines {
		out = append(out, l.ID+" "+l.Amount)
	}
	return out
}
