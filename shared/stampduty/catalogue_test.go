package stampduty

import (
	"reflect"
	"strings"
	"testing"
)

func TestDiffArticles(t *testing.T) {
	f := NewDecimal(6, 2)
	fixed := int64(300)
	before := Article{PurposeName: "Deed", State: "Goa", Min: 10, Max: 500}
	t.Run("a new article lists every field without a before", func(t *testing.T) {
		got := DiffArticles(nil, before)
		want := []FieldChange{{Field: "min", After: "10"}, {Field: "max", After: "500"}, {Field: "fixed", After: "null"},
			{Field: "toFollowConsiderationPrice", After: "false"}, {Field: "amountPercentConsideration", After: "null"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
	t.Run("a change lists only the fields that differ, in the file's order", func(t *testing.T) {
		after := before
		after.Max, after.Fixed, after.FollowsConsideration, after.Factor = 900, &fixed, true, &f
		got := DiffArticles(&before, after)
		want := []FieldChange{{Field: "max", Before: "500", After: "900"}, {Field: "fixed", Before: "null", After: "300"},
			{Field: "toFollowConsiderationPrice", Before: "false", After: "true"}, {Field: "amountPercentConsideration", Before: "null", After: "0.06"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
	t.Run("the same values are no change", func(t *testing.T) {
		if got := DiffArticles(&before, before); len(got) != 0 {
			t.Errorf("got %+v", got)
		}
	})
}

func TestValidActor(t *testing.T) {
	for _, s := range []string{"asha@example.com", "arn:aws:iam::123456789012:user/ravi", "ravi", strings.Repeat("a", MaxActorLength)} {
		if !ValidActor(s) {
			t.Errorf("ValidActor(%q) = false", s)
		}
	}
	for _, s := range []string{"", "two words", "tab\there", "caf\u00e9", strings.Repeat("a", MaxActorLength+1), "nul\x00"} {
		if ValidActor(s) {
			t.Errorf("ValidActor(%q) = true", s)
		}
	}
}
