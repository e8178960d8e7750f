package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"stampduty/shared/catalogue"
	"stampduty/shared/duty"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/fake"
)

// largestRules returns duty_rules near §1's limits: versions each near
// 8 KiB of canonical JSON (32 components, labels and citation at their
// longest), together as near 24 KiB as they fit.
func largestRules(t *testing.T) duty.Rules {
	t.Helper()
	version := func(from, to string) string {
		var comps []string
		for i := range duty.MaxComponents {
			comps = append(comps, fmt.Sprintf(`{"id": "c%031d", "label": "%s", "kind": "fixed", "amount": "1%02d.50"}`, i, strings.Repeat("L", 80), i))
		}
		return fmt.Sprintf(`{"effectiveFrom": %s, "effectiveTo": %s, "citation": {"text": "%s", "url": "https://example.org/%s"},
		  "components": [%s]}`, from, to, strings.Repeat("C", 300), strings.Repeat("u", 400), strings.Join(comps, ","))
	}
	var versions []string
	dates := []string{"null", `"2021-01-01"`, `"2022-01-01"`, `"2023-01-01"`, `"2024-01-01"`, `"2025-01-01"`}
	for i := 0; i+1 < len(dates); i++ {
		try := append(append([]string(nil), versions...), version(dates[i], dates[i+1]))
		if _, problems := duty.ValidateRules([]byte("[" + strings.Join(try, ",") + "]")); problems != nil {
			break
		}
		versions = try
	}
	rules, problems := duty.ValidateRules([]byte("[" + strings.Join(versions, ",") + "]"))
	if problems != nil {
		t.Fatal(problems)
	}
	return rules
}

// TestLargestPage: the largest list page (100 articles, each with rules
// at §1's limits) stays under half of Lambda's 6 MB answer.
func TestLargestPage(t *testing.T) {
	rules := largestRules(t)
	rb, _ := rules.MarshalJSON()
	arts := make([]stampduty.Article, 100)
	for i := range arts {
		arts[i] = stampduty.Article{ID: int64(i + 1), DocumentID: fmt.Sprintf("d%023d", i), PurposeName: fmt.Sprintf("%0200d", i),
			State: "Dadra and Nagar Haveli and Daman and Diu", Max: stampduty.MaxAmount, Rules: rules}
	}
	h := &handler{articles: &catalogue.Lister{Articles: fake.Articles(arts)}}
	w := httptest.NewRecorder()
	h.routes().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/stamp-duty-datas?pagination%5BpageSize%5D=100", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	const half = 3 << 20
	t.Logf("rules of one article: %d bytes in %d versions; the page: %d bytes", len(rb), len(rules), w.Body.Len())
	if len(rb) < duty.MaxRulesBytes*3/4 {
		t.Errorf("the rules are %d bytes: not near the %d limit, so the page proves little", len(rb), duty.MaxRulesBytes)
	}
	if n := w.Body.Len(); n > half {
		t.Errorf("the page is %d bytes, over half of Lambda's 6 MB", n)
	}
}
