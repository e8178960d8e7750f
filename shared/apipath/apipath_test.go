package apipath

import (
	"maps"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		name, pattern, path string
		want                bool
		params              map[string]string
	}{
		{"Literal", "/api/stamp-duty-datas", "/api/stamp-duty-datas", true, nil},
		{"LiteralIsCaseSensitive", "/api/stamp-duty-datas", "/api/Stamp-Duty-Datas", false, nil},
		{"TrailingSlashIsAnotherPath", "/api/stamp-duty-datas", "/api/stamp-duty-datas/", false, nil},
		{"Param", "/api/live-orders/{documentId}", "/api/live-orders/abc", true, map[string]string{"documentId": "abc"}},
		{"ParamNeedsASegment", "/api/live-orders/{documentId}", "/api/live-orders/", false, nil},
		{"EmptyParamInside", "/api/live-orders/{documentId}/document", "/api/live-orders//document", false, nil},
		{"TooShort", "/api/live-orders/{documentId}/document", "/api/live-orders/abc", false, nil},
		{"TooLong", "/api/live-orders/{documentId}", "/api/live-orders/abc/document", false, nil},
		{"TwoParams", "/o/{a}/f/{b}", "/o/1/f/2", true, map[string]string{"a": "1", "b": "2"}},
		{"Greedy", "/files/{proxy+}", "/files/a/b", true, map[string]string{"proxy": "a/b"}},
		{"GreedyNeedsARest", "/files/{proxy+}", "/files/", false, nil},
		{"GreedyNeedsARestAtAll", "/files/{proxy+}", "/files", false, nil},
		{"GreedyOnlyLast", "/{p+}/x", "/a/x", true, map[string]string{"p+": "a"}},
		{"Root", "/", "/", true, nil},
		{"UnclosedBraceIsLiteral", "/a/{b", "/a/{b", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params, ok := Parse(tc.pattern).Match(tc.path)
			if got, want := ok, tc.want; got != want {
				t.Fatalf("Parse(%q).Match(%q) = %v, want %v", tc.pattern, tc.path, got, want)
			}
			if ok && !maps.Equal(params, tc.params) {
				t.Errorf("params = %v, want %v", params, tc.params)
			}
		})
	}
}

func TestKinds(t *testing.T) {
	got := Parse("/a/{b}/{c+}").Kinds()
	if len(got) != 3 || got[0] != Literal || got[1] != Param || got[2] != Greedy {
		t.Errorf("Kinds = %v, want [Literal Param Greedy]", got)
	}
}
