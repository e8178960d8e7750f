package strapiquery

import (
	"errors"
	"fmt"
	"testing"

	"stampduty/shared/stampduty"
)

func TestPage(t *testing.T) {
	known := func(k string) bool { return k == "page" || k == "pageSize" }
	for _, tc := range []struct {
		raw        string
		page, size int
		errPath    string
	}{
		{"", 1, 25, ""},
		{"page=3&pageSize=10", 3, 10, ""},
		{"pageSize=100", 1, 100, ""},
		{"pageSize=101", 1, 100, ""},
		{"pageSize=99999999999999999999999", 1, 100, ""},
		{"page=99999999999999999999999", 2147483647, 25, ""},
		{"page=0", 0, 0, "page"},
		{"page=-3", 0, 0, "page"},
		{"page=1e2", 0, 0, "page"},
		{"page=%201", 0, 0, "page"},
		{"page=", 0, 0, "page"},
		{"pageSize=0", 0, 0, "pageSize"},
		{"page=1&page=1", 0, 0, "page"},
		{"limit=5", 0, 0, "limit"},
		{"page=%", 0, 0, "query"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			q, err := Parse(tc.raw, known)
			var page, size int
			if err == nil {
				page, size, err = q.Page("page", "pageSize")
			}
			if tc.errPath != "" {
				var e *stampduty.Error
				if !errors.As(err, &e) || e.Code != stampduty.EINVALID || len(e.Fields) != 1 || e.Fields[0].Path != tc.errPath {
					t.Fatalf("err = %#v, want EINVALID on %s", err, tc.errPath)
				}
				return
			}
			if err != nil || page != tc.page || size != tc.size {
				t.Errorf("= %d, %d, %v; want %d, %d", page, size, err, tc.page, tc.size)
			}
		})
	}
}

func TestSort(t *testing.T) {
	allowed := []string{"id", "purpose_name", "state"}
	for _, tc := range []struct {
		raw, want, errPath string
	}{
		{"", "[]", ""},
		{"sort=purpose_name", "[{purpose_name false}]", ""},
		{"sort=purpose_name:desc,id", "[{purpose_name true} {id false}]", ""},
		{"sort%5B0%5D=purpose_name%3Aasc", "[{purpose_name false}]", ""},
		{"sort[1]=id:DESC&sort[0]=state", "[{state false} {id true}]", ""},
		{"sort[10]=id&sort[2]=state", "[{state false} {id false}]", ""},
		{"sort=price", "", "sort"},
		{"sort[0]=id:sideways", "", "sort[0]"},
		{"sort=id&sort[0]=id", "", "sort"},
		{"sort[0]=id&sort[0]=state", "", "sort[0]"},
		{"sort=id&sort=min", "", "sort"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			q, err := Parse(tc.raw, IsSortKey)
			if err != nil {
				t.Fatal(err)
			}
			keys, err := q.Sort(allowed)
			if tc.errPath != "" {
				var e *stampduty.Error
				if !errors.As(err, &e) || e.Fields[0].Path != tc.errPath {
					t.Fatalf("err = %v, want one on %s", err, tc.errPath)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(keys); got != tc.want && !(tc.want == "[]" && keys == nil) {
				t.Errorf("= %s, want %s", got, tc.want)
			}
		})
	}
	for k, want := range map[string]bool{"sort": true, "sort[0]": true, "sort[12]": true, "sort[]": false, "sort[a]": false, "sort[0][x]": false, "sort[1234]": false, "sorts": false, "sort[00]": false, "sort[01]": false, "sort[10]": true} {
		if got := IsSortKey(k); got != want {
			t.Errorf("IsSortKey(%q) = %v, want %v", k, got, want)
		}
	}
}
