package catalogue_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/catalogue"
	"stampduty/shared/duty"
	"stampduty/shared/stampduty"
)

// putLegacy writes a legacy article as stored before duty rules and
// versions: no dr, no v (around the store, which always writes both). By
// default it follows the consideration (0.05, [100, 2500000]); more sets
// other attributes, a nil one removes it.
func (w *world) putLegacy(t *testing.T, purpose, state, id, doc string, more map[string]types.AttributeValue) {
	t.Helper()
	item := map[string]types.AttributeValue{
		"purpose_name": &types.AttributeValueMemberS{Value: purpose}, "state": &types.AttributeValueMemberS{Value: state},
		"id": &types.AttributeValueMemberN{Value: id}, "doc": &types.AttributeValueMemberS{Value: doc},
		"min": &types.AttributeValueMemberN{Value: "100"}, "max": &types.AttributeValueMemberN{Value: "2500000"},
		"follow": &types.AttributeValueMemberBOOL{Value: true}, "factor": &types.AttributeValueMemberN{Value: "0.05"},
	}
	for k, v := range more {
		if v == nil {
			delete(item, k)
		} else {
			item[k] = v
		}
	}
	if _, err := w.env.Client.PutItem(w.ctx, &dynamodb.PutItemInput{TableName: aws.String(w.env.Table("ArticlesTable")), Item: item}); err != nil {
		t.Fatal(err)
	}
}

// examples returns the rule sets of duty-rules-examples.json, by name.
func examples(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("../duty/testdata/duty-rules-examples.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Rules map[string]struct {
			DutyRules json.RawMessage `json:"duty_rules"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for k, v := range f.Rules {
		out[k] = v.DutyRules
	}
	return out
}

// TestMigrateRules: the migration previews the articles stored without
// duty_rules, stores each one's migrated version as one logged change
// that alters no amount, publishes once, and then finds nothing to do.
func TestMigrateRules(t *testing.T) {
	w := newWorld(t)
	w.putLegacy(t, "Sale Deed", "Maharashtra", "9001", "legacysaledeedmh00000001", nil)
	w.putLegacy(t, "Gift Deed", "Goa", "9002", "legacygiftdeedgoa0000001", map[string]types.AttributeValue{
		"follow": &types.AttributeValueMemberBOOL{Value: false}, "min": &types.AttributeValueMemberN{Value: "10"},
		"max": &types.AttributeValueMemberN{Value: "500"}, "fixed": &types.AttributeValueMemberN{Value: "300"},
		"ret": &types.AttributeValueMemberS{Value: "2026-11-01T00:00:00Z"}, "factor": nil})
	all, err := w.articles.Entries(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]stampduty.CatalogueEntry{}
	for _, e := range all {
		before[e.PurposeName+"/"+e.State] = e
	}
	sale := before["Sale Deed/Maharashtra"]
	if !sale.RulesDerived || before["Rent Agreement/Karnataka"].RulesDerived {
		t.Fatalf("the legacy item's rules are not derived, or a seeded article's are")
	}

	m := mustPreview(t, w)
	t.Run("the preview lists the articles without stored rules and writes nothing", func(t *testing.T) {
		var got []string
		for _, s := range m.Steps {
			got = append(got, s.PurposeName+"/"+s.State)
		}
		if want := []string{"Gift Deed/Goa", "Sale Deed/Maharashtra"}; !reflect.DeepEqual(got, want) || m.Left != len(all)-2 {
			t.Errorf("steps %v, left %d; want %v, %d", got, m.Left, want, len(all)-2)
		}
		if e, _ := w.articles.Entry(w.ctx, "Sale Deed", "Maharashtra"); !e.RulesDerived || e.Version != 0 {
			t.Errorf("after the preview: derived %v, version %d", e.RulesDerived, e.Version)
		}
	})
	t.Run("the migration stores each article's version, logged, its amounts and retirement kept", func(t *testing.T) {
		n, err := w.admin.MigrateRules(w.ctx, "asha@example.com", m)
		if err != nil || n != 2 {
			t.Fatalf("MigrateRules = %d, %v; want 2", n, err)
		}
		e, err := w.articles.Entry(w.ctx, "Sale Deed", "Maharashtra")
		if err != nil {
			t.Fatal(err)
		}
		if e.RulesDerived || e.Version != 1 || e.Min != 100 || e.Max != 2500000 || e.Factor.String() != "0.05" || !e.FollowsConsideration {
			t.Errorf("migrated %+v: want stored rules, version 1, the amounts as they were", e)
		}
		want := examples(t)["legacy/Maharashtra/Sale Deed"]
		got, _ := e.Rules.MarshalJSON()
		if compact(t, want) != string(got) {
			t.Errorf("stored rules %s\nwant the example's %s", got, compact(t, want))
		}
		log := w.log(t, "Sale Deed", "Maharashtra")
		wantLog := []stampduty.ArticleChange{{Version: 1, Kind: stampduty.ArticleMigrated, By: "asha@example.com", At: w.now,
			Changes: []stampduty.FieldChange{{Field: "duty_rules", Before: "null", After: string(got)}}}}
		if !reflect.DeepEqual(log, wantLog) {
			t.Errorf("log %+v\nwant %+v", log, wantLog)
		}
		gift, _ := w.articles.Entry(w.ctx, "Gift Deed", "Goa")
		if gift.RulesDerived || !gift.Retired() || *gift.Fixed != 300 {
			t.Errorf("gift deed %+v: want stored rules, still retired, fixed 300", gift)
		}
		if a, ok := w.published(t, "Sale Deed", "Maharashtra"); !ok || a.RulesDerived || a.CatalogueVersion != 1 {
			t.Errorf("published %+v (%v): want the stored rules at version 1", a, ok)
		}
		if r, _ := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka"); r.Version != before["Rent Agreement/Karnataka"].Version {
			t.Errorf("an article with stored rules was rewritten: version %d", r.Version)
		}
	})
	t.Run("a second run finds nothing and writes nothing", func(t *testing.T) {
		snap, _, _ := w.cat.Current(w.ctx, true)
		again := mustPreview(t, w)
		if len(again.Steps) != 0 || again.Left != len(all) {
			t.Errorf("second preview: %d steps, %d left", len(again.Steps), again.Left)
		}
		db, proxy := w.env.ProxiedDB()
		admin := *w.admin
		arts := db.Articles(w.env.Table("ArticlesTable")).WithLog(w.env.Table("ArticleLogTable"))
		admin.Articles = arts
		admin.Publish = func(ctx context.Context, now time.Time) error {
			_, err := db.Catalogue(w.env.Table("CatalogueTable")).Publish(ctx, arts, now)
			return err
		}
		if n, err := admin.MigrateRules(w.ctx, "asha@example.com", again); n != 0 || err != nil {
			t.Errorf("MigrateRules = %d, %v; want 0, nil", n, err)
		}
		if calls := w.env.Operations(proxy.Take()); calls != "" {
			t.Errorf("the second run called %s", calls)
		}
		if now, _, _ := w.cat.Current(w.ctx, true); now.Version != snap.Version {
			t.Errorf("the second run published: %s, was %s", now.Version, snap.Version)
		}
	})
	t.Run("an article changed since the preview stops the migration", func(t *testing.T) {
		w.putLegacy(t, "Bond", "Goa", "9003", "legacybondgoa00000000001", nil)
		p := mustPreview(t, w)
		w.putLegacy(t, "Bond", "Goa", "9004", "legacybondgoa00000000002", nil) // replaced by another writer
		_, err := w.admin.MigrateRules(w.ctx, "asha@example.com", p)
		wantCode(t, err, stampduty.ECONFLICT)
		if e, _ := w.articles.Entry(w.ctx, "Bond", "Goa"); !e.RulesDerived || e.ID != 9004 {
			t.Errorf("the other writer's article was overwritten: %+v", e)
		}
	})
}

func mustPreview(t *testing.T, w *world) catalogue.Migration {
	t.Helper()
	m, err := w.admin.PreviewMigration(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b strings.Builder
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

// TestEditRules: rules are checked whole before anything is written,
// every problem at its path under duty_rules; an overlap is refused; a
// good change is an edit from the version read, logged and published.
func TestEditRules(t *testing.T) {
	w := newWorld(t)
	ka := examples(t)["Karnataka/Sale Deed"]
	rules, problems := duty.ValidateRules(ka)
	if problems != nil {
		t.Fatal(problems)
	}
	e, err := w.admin.Add(w.ctx, "asha@example.com", stampduty.Article{PurposeName: "Sale Deed", State: "Karnataka", Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	var versions []map[string]any
	if err := json.Unmarshal(ka, &versions); err != nil {
		t.Fatal(err)
	}
	encode := func(vs []map[string]any) []byte {
		b, err := json.Marshal(vs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	unchanged := func(t *testing.T) {
		t.Helper()
		if got, _ := w.articles.Entry(w.ctx, "Sale Deed", "Karnataka"); got.Version != e.Version {
			t.Errorf("version %d after a refused edit, want %d", got.Version, e.Version)
		}
	}

	t.Run("every problem is refused at its path and nothing is written", func(t *testing.T) {
		bad := encode(versions)
		bad = []byte(strings.Replace(string(bad), `"rate":"0.10"`, `"rate":"10%"`, 1))
		bad = []byte(strings.Replace(string(bad), `"label":"Stamp duty 5% of value"`, `"label":""`, 1))
		_, err := w.admin.EditRules(w.ctx, "ravi@example.com", e.Version, "Sale Deed", "Karnataka", bad)
		wantCode(t, err, stampduty.EINVALID)
		var se *stampduty.Error
		errors.As(err, &se)
		var paths []string
		for _, f := range se.Fields {
			paths = append(paths, f.Path)
		}
		if want := []string{"duty_rules[0].components[0].label", "duty_rules[0].components[3].rate"}; !reflect.DeepEqual(paths, want) {
			t.Errorf("paths %v, want %v (%v)", paths, want, err)
		}
		unchanged(t)
	})
	t.Run("an overlapping version is refused", func(t *testing.T) {
		second := map[string]any{}
		for k, v := range versions[0] {
			second[k] = v
		}
		second["effectiveFrom"] = "2026-04-01"
		_, err := w.admin.EditRules(w.ctx, "ravi@example.com", e.Version, "Sale Deed", "Karnataka", encode(append(versions[:1:1], second)))
		wantCode(t, err, stampduty.EINVALID)
		var se *stampduty.Error
		if !errors.As(err, &se) || len(se.Fields) != 1 || se.Fields[0].Path != "duty_rules[1].effectiveFrom" || !strings.Contains(se.Fields[0].Message, "overlaps") {
			t.Errorf("error %v: want the overlap at duty_rules[1].effectiveFrom", err)
		}
		unchanged(t)
	})
	t.Run("legacy versions that are not the article's migration are refused", func(t *testing.T) {
		_, err := w.admin.EditRules(w.ctx, "ravi@example.com", e.Version, "Sale Deed", "Karnataka", examples(t)["legacy/Maharashtra/Sale Deed"])
		wantCode(t, err, stampduty.EINVALID)
		unchanged(t)
	})
	t.Run("a legacy article's rules are its amount fields' migration, and no other", func(t *testing.T) {
		rent, err := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.admin.EditRules(w.ctx, "ravi@example.com", rent.Version, "Rent Agreement", "Karnataka", examples(t)["legacy/Maharashtra/Sale Deed"])
		wantCode(t, err, stampduty.EINVALID)
		own, _ := rent.Rules.MarshalJSON()
		got, err := w.admin.EditRules(w.ctx, "ravi@example.com", rent.Version, "Rent Agreement", "Karnataka", own)
		if err != nil || got.Version != rent.Version {
			t.Errorf("its own rules: version %d, %v; want %d unchanged", got.Version, err, rent.Version)
		}
		if after, _ := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka"); after.Version != rent.Version || after.Max != 500 {
			t.Errorf("after: version %d, max %d; want %d, 500", after.Version, after.Max, rent.Version)
		}
	})
	t.Run("an edit from an older version is a conflict", func(t *testing.T) {
		v := encode(versions)
		v = []byte(strings.Replace(string(v), `"rate":"0.10"`, `"rate":"0.11"`, 1))
		_, err := w.admin.EditRules(w.ctx, "ravi@example.com", e.Version-1, "Sale Deed", "Karnataka", v)
		wantCode(t, err, stampduty.ECONFLICT)
		unchanged(t)
	})
	t.Run("a valid change is an edit, logged before and after, and published", func(t *testing.T) {
		v := []byte(strings.Replace(string(encode(versions)), `"rate":"0.10"`, `"rate":"0.11"`, 1))
		got, err := w.admin.EditRules(w.ctx, "ravi@example.com", e.Version, "Sale Deed", "Karnataka", v)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != e.Version+1 {
			t.Errorf("version %d, want %d", got.Version, e.Version+1)
		}
		log := w.log(t, "Sale Deed", "Karnataka")
		if len(log) != 2 || log[0].Kind != stampduty.ArticleEdited || log[0].By != "ravi@example.com" || len(log[0].Changes) != 1 ||
			log[0].Changes[0].Field != "duty_rules" || !strings.Contains(log[0].Changes[0].Before, `"rate":"0.10"`) ||
			!strings.Contains(log[0].Changes[0].After, `"rate":"0.11"`) {
			t.Errorf("log %+v", log)
		}
		if a, _ := w.published(t, "Sale Deed", "Karnataka"); a.CatalogueVersion != got.Version {
			t.Errorf("published version %d, want %d", a.CatalogueVersion, got.Version)
		}
	})
}
