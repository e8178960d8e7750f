package apipath

import (
	"maps"
	"testing"
)

// TestMatch: each case is a route path and a request path, with the
// parameters the request gives when it matches.
func TestMatch(t *testing.T) {
	type request struct {
		pattern, path string
		params        map[string]string
	}
	t.Run("Matches", func(t *testing.T) {
		for name, r := range map[string]request{
			"Literal":      {"/api/stamp-duty-datas", "/api/stamp-duty-datas", nil},
			"Root":         {"/", "/", nil},
			"Param":        {"/api/live-orders/{documentId}", "/api/live-orders/abc", map[string]string{"documentId": "abc"}},
			"TwoParams":    {"/o/{a}/f/{b}", "/o/1/f/2", map[string]string{"a": "1", "b": "2"}},
			"Greedy":       {"/files/{proxy+}", "/files/a/b", map[string]string{"proxy": "a/b"}},
			"GreedyIsLast": {"/{p+}/x", "/a/x", map[string]string{"p+": "a"}},
			"OpenBrace":    {"/a/{b", "/a/{b", nil},
		} {
			params, ok := Parse(r.pattern).Match(r.path)
			if !ok || !maps.Equal(params, r.params) {
				t.Errorf("%s: Parse(%q).Match(%q) = %v, %v; want %v, true", name, r.pattern, r.path, params, ok, r.params)
			}
		}
	})
	t.Run("DoesNotMatch", func(t *testing.T) {
		for name, r := range map[string]request{
			"CaseSensitive":     {"/api/stamp-duty-datas", "/api/Stamp-Duty-Datas", nil},
			"TrailingSlash":     {"/api/stamp-duty-datas", "/api/stamp-duty-datas/", nil},
			"EmptyParam":        {"/api/live-orders/{documentId}", "/api/live-orders/", nil},
			"EmptyParamInside":  {"/api/live-orders/{documentId}/document", "/api/live-orders//document", nil},
			"TooShort":          {"/api/live-orders/{documentId}/document", "/api/live-orders/abc", nil},
			"TooLong":           {"/api/live-orders/{documentId}", "/api/live-orders/abc/document", nil},
			"GreedyWithoutRest": {"/files/{proxy+}", "/files/", nil},
			"GreedyWithNothing": {"/files/{proxy+}", "/files", nil},
		} {
			if _, ok := Parse(r.pattern).Match(r.path); ok {
				t.Errorf("%s: Parse(%q).Match(%q) matched", name, r.pattern, r.path)
			}
		}
	})
}

func TestKinds(t *testing.T) {
	got := Parse("/a/{b}/{c+}").Kinds()
	if len(got) != 3 || got[0] != Literal || got[1] != Param || got[2] != Greedy {
		t.Errorf("Kinds = %v, want [Literal Param Greedy]", got)
	}
}
