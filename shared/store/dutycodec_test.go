package store

import (
	"encoding/json"
	"os"
	"testing"

	"stampduty/shared/duty"
)

// TestDutyCodec round-trips the duties of the spec's worked examples and
// measures what each costs an order's item: the JSON, and as stored.
func TestDutyCodec(t *testing.T) {
	b, err := os.ReadFile("../duty/testdata/duty-rules-examples.json")
	if err != nil {
		t.Fatal(err)
	}
	var ex struct {
		Rules map[string]struct {
			DutyRules json.RawMessage `json:"duty_rules"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(b, &ex); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	json.Unmarshal(b, &raw)
	cases := raw["cases"].([]any)
	for _, c := range cases {
		c := c.(map[string]any)
		rules, problems := duty.ParseRules(ex.Rules[c["rule"].(string)].DutyRules)
		if problems != nil {
			t.Fatal(problems)
		}
		req := duty.Request{Purpose: "P", State: "S", Date: c["date"].(string), Numbers: map[string]int64{}, Enums: map[string]string{}}
		for k, v := range c["inputs"].(map[string]any) {
			switch v := v.(type) {
			case float64:
				req.Numbers[k] = int64(v)
			case string:
				req.Enums[k] = v
			}
		}
		d, err := rules.Evaluate(req)
		if err != nil {
			continue // the error cases
		}
		d.Rule.Article, d.Rule.ArticleVersion = "d4k0aaaaaaaaaaaaaaaaaaaa", 3
		j, _ := json.Marshal(d)
		enc, err := encodeDuty(d)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeDuty(enc)
		if err != nil {
			t.Fatal(err)
		}
		if j2, _ := json.Marshal(back); string(j2) != string(j) {
			t.Errorf("%s: round trip\n%s\nwant\n%s", c["id"], j2, j)
		}
		if len(enc) > len(j)*3/5 {
			t.Errorf("%s: %d bytes stored for %d of JSON: the dictionary saves less than 40%%", c["id"], len(enc), len(j))
		}
		t.Logf("%s: %d lines, JSON %d bytes, stored %d", c["id"], len(d.Lines), len(j), len(enc))
	}
}
