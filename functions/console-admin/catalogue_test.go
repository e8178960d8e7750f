package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"stampduty/shared/catalogue"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

// The admin and the operator of the catalogue's tests.
const (
	catalogueAdminEmail = "admin@console.local"
	operatorEmail       = "operator@console.local"
)

// catalogueClient sends the catalogue's requests to s as a staff member.
type catalogueClient struct {
	t      *testing.T
	s      *functest.Stack
	claims map[string]string
}

func asAdmin(t *testing.T, s *functest.Stack) catalogueClient {
	return catalogueClient{t, s, functest.StaffClaims(catalogueAdminEmail, "admin")}
}

// do sends method path?query with body (JSON, when not "").
func (c catalogueClient) do(method, path, query, body string) functest.Response {
	c.t.Helper()
	var h map[string]string
	if body != "" {
		h = map[string]string{"content-type": "application/json"}
	}
	ev := functest.Request(method, path, query, h, body)
	if c.claims != nil {
		ev = functest.AsStaff(ev, c.claims)
	}
	return c.s.Invoke(ev)
}

func (c catalogueClient) list(query string) []article {
	c.t.Helper()
	return functest.OK[articlesResponse](c.t, c.do(http.MethodGet, "/api/console/catalogue/articles", query, "")).Data
}

// find returns the article of (purpose, state) as the list shows it.
func (c catalogueClient) find(purpose, state string) article {
	c.t.Helper()
	for _, a := range c.list("state=" + strings.ReplaceAll(state, " ", "+")) {
		if a.PurposeName == purpose {
			return a
		}
	}
	c.t.Fatalf("no article %q in %s in the list", purpose, state)
	return article{}
}

func (c catalogueClient) edit(doc string, version int64, amounts string) functest.Response {
	c.t.Helper()
	return c.do(http.MethodPut, "/api/console/catalogue/articles/"+doc, "", `{"version":`+jsonInt(version)+`,`+amounts+`}`)
}

func (c catalogueClient) log(doc string) logResponse {
	c.t.Helper()
	return functest.OK[logResponse](c.t, c.do(http.MethodGet, "/api/console/catalogue/articles/"+doc+"/log", "", ""))
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// status fails unless r answered want, and returns its error envelope.
func status(t *testing.T, r functest.Response, want int) functest.Envelope {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
	}
	var e functest.Envelope
	if err := json.Unmarshal([]byte(r.Body), &e); err != nil {
		t.Fatalf("%s: %v", r.Body, err)
	}
	return e
}

const karnatakaAffidavit = `"min":20,"max":20,"fixed":20,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`

// TestCatalogueList: an admin lists the whole catalogue, retired articles
// included, and filters it by state, a part of the purpose in any case,
// and status; one Scan call answers a page; a filter the API cannot take
// is 400 before anything is read.
func TestCatalogueList(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	c := asAdmin(t, s)
	t.Run("EveryArticleInOneScan", func(t *testing.T) {
		s.Proxy.Take()
		all := c.list("")
		if got, want := s.Env.Operations(s.Proxy.Take()), "Scan:ArticlesTable=1"; got != want {
			t.Errorf("DynamoDB calls of a page %q, want %q", got, want)
		}
		if len(all) < 10 {
			t.Fatalf("%d articles; want the sample catalogue", len(all))
		}
		if !slices.IsSortedFunc(all, func(x, y article) int {
			return strings.Compare(x.PurposeName+"\x00"+x.State, y.PurposeName+"\x00"+y.State)
		}) {
			t.Errorf("the list is not sorted by purpose_name and state")
		}
	})
	t.Run("FiltersByStatePurposeAndStatus", func(t *testing.T) {
		for _, a := range c.list("state=Karnataka") {
			if a.State != "Karnataka" {
				t.Errorf("state=Karnataka lists %q in %s", a.PurposeName, a.State)
			}
		}
		deeds := c.list("purpose=DEED")
		if len(deeds) == 0 {
			t.Fatal("purpose=DEED lists nothing; want the deeds, in any case")
		}
		for _, a := range deeds {
			if !strings.Contains(a.PurposeName, "Deed") {
				t.Errorf("purpose=DEED lists %q", a.PurposeName)
			}
		}
		if got := c.list("status=retired"); len(got) != 0 {
			t.Errorf("status=retired lists %d before any retirement", len(got))
		}
		rent := c.find("Rent Agreement", "Karnataka")
		functest.OK[articleResponse](t, c.do(http.MethodPost, "/api/console/catalogue/articles/"+rent.DocumentID+"/retire", "", ""))
		retired := c.list("status=retired")
		if len(retired) != 1 || retired[0].DocumentID != rent.DocumentID || !retired[0].Retired || retired[0].RetiredAt == nil {
			t.Errorf("status=retired lists %+v; want the retired Rent Agreement", retired)
		}
		for _, a := range c.list("status=active&state=Karnataka") {
			if a.Retired || a.DocumentID == rent.DocumentID {
				t.Errorf("status=active lists the retired %q", a.PurposeName)
			}
		}
	})
	for _, tc := range []struct{ name, query, path string }{
		{"AStateThatIsNotOne", "state=Atlantis", "state"},
		{"AStatusThatIsNotOne", "status=gone", "status"},
		{"APurposeTooLong", "purpose=" + strings.Repeat("a", 201), "purpose"},
	} {
		t.Run("Refuses"+tc.name, func(t *testing.T) {
			s.Proxy.Take()
			e := status(t, c.do(http.MethodGet, "/api/console/catalogue/articles", tc.query, ""), http.StatusBadRequest)
			if got := e.Paths(); !slices.Equal(got, []string{tc.path}) {
				t.Errorf("paths %v, want [%s]", got, tc.path)
			}
			if got := s.Proxy.Take(); len(got) != 0 {
				t.Errorf("%d DynamoDB calls for a refused filter", len(got))
			}
		})
	}
}

// TestCatalogueChanges: an admin adds, edits and retires an article; each
// change is logged with the admin's email, published, and checked by the
// catalogue file's rules (400 with the failing fields); an edit from a
// stale version is 409 with the article as it now is.
func TestCatalogueChanges(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	c := asAdmin(t, s)
	const newArticle = `{"purpose_name":"Console Bond","state":"Goa","min":10,"max":500,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null}`
	var added article
	t.Run("AddIsLoggedAndPublished", func(t *testing.T) {
		got := functest.OK[articleResponse](t, c.do(http.MethodPost, "/api/console/catalogue/articles", "", newArticle))
		added = got.Data
		if !got.Meta.Published {
			t.Errorf("published false: %s", got.Meta.Message)
		}
		if added.Version != 1 || added.DocumentID == "" || added.ID == 0 || added.Retired {
			t.Errorf("added %+v; want version 1 with an id and a documentId", added)
		}
		if l := added.LastChange; l == nil || l.By != catalogueAdminEmail || l.Kind != stampduty.ArticleAdded {
			t.Errorf("last change %+v; want added by %s", l, catalogueAdminEmail)
		}
		// The public catalogue has it: new quotes and lists see it.
		snap, _, err := s.Env.DB().Catalogue(s.Env.Table("CatalogueTable")).Current(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		arts, err := s.Env.DB().Articles(s.Env.Table("ArticlesTable")).All(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if snap.Articles != len(arts) {
			t.Errorf("the published snapshot has %d articles; the table %d", snap.Articles, len(arts))
		}
	})
	t.Run("AddOfAnArticleThatExistsIsConflict", func(t *testing.T) {
		status(t, c.do(http.MethodPost, "/api/console/catalogue/articles", "", newArticle), http.StatusConflict)
	})
	t.Run("AddRefusesWhatTheFileWould", func(t *testing.T) {
		s.Proxy.Take()
		e := status(t, c.do(http.MethodPost, "/api/console/catalogue/articles", "",
			`{"purpose_name":" Bad","state":"Atlantis","min":50,"max":10,"fixed":null,"toFollowConsiderationPrice":true,"amountPercentConsideration":null}`), http.StatusBadRequest)
		if got, want := e.Paths(), []string{"purpose_name", "state", "max", "amountPercentConsideration"}; !slices.Equal(got, want) {
			t.Errorf("paths %v, want %v", got, want)
		}
		if got := s.Proxy.Take(); len(got) != 0 {
			t.Errorf("%d DynamoDB calls for an invalid article", len(got))
		}
	})
	t.Run("EditFromTheVersionReadIsLogged", func(t *testing.T) {
		s.Proxy.Take()
		got := functest.OK[articleResponse](t, c.edit(added.DocumentID, added.Version,
			`"min":10,"max":800,"fixed":250,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`))
		t.Logf("an edit's DynamoDB calls, its publish included: %s", s.Env.Operations(s.Proxy.Take()))
		if got.Data.Version != 2 || got.Data.Max != 800 || got.Data.Fixed == nil || *got.Data.Fixed != 250 {
			t.Errorf("edited %+v; want version 2, max 800, fixed 250", got.Data)
		}
		log := c.log(added.DocumentID)
		if len(log.Data.Changes) != 2 {
			t.Fatalf("log %+v; want the edit and the add", log.Data.Changes)
		}
		edit := log.Data.Changes[0]
		want := []stampduty.FieldChange{{Field: "max", Before: "500", After: "800"}, {Field: "fixed", Before: "null", After: "250"}}
		if edit.By != catalogueAdminEmail || edit.Kind != stampduty.ArticleEdited || edit.Version != 2 || !reflect.DeepEqual(edit.Changes, want) {
			t.Errorf("newest change %+v; want edited by %s: %v", edit, catalogueAdminEmail, want)
		}
		if log.Data.Changes[1].Kind != stampduty.ArticleAdded {
			t.Errorf("oldest change %+v; want the add", log.Data.Changes[1])
		}
	})
	t.Run("EditFromAStaleVersionIsConflictWithTheArticleAsItIs", func(t *testing.T) {
		r := c.edit(added.DocumentID, added.Version, `"min":10,"max":900,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`)
		status(t, r, http.StatusConflict)
		var body struct{ Data article }
		if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
			t.Fatal(err)
		}
		if body.Data.Version != 2 || body.Data.Max != 800 {
			t.Errorf("409's data %+v; want the article as it is (version 2, max 800)", body.Data)
		}
		if got := c.find("Console Bond", "Goa"); got.Max != 800 {
			t.Errorf("max %d after a stale edit; want 800 kept", got.Max)
		}
	})
	for _, tc := range []struct{ name, body, path string }{
		{"AFixedOutsideTheBounds", `"version":2,"min":10,"max":800,"fixed":900,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`, "fixed"},
		{"NoVersion", `"min":10,"max":800,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`, "version"},
		{"AVersionThatIsNotOne", `"version":"2","min":10,"max":800,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`, "version"},
		{"TheKey", `"version":2,"purpose_name":"Other","min":10,"max":800,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`, "purpose_name"},
		{"AMissingAmount", `"version":2,"min":10,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`, "max"},
	} {
		t.Run("EditRefuses"+tc.name, func(t *testing.T) {
			e := status(t, c.do(http.MethodPut, "/api/console/catalogue/articles/"+added.DocumentID, "", "{"+tc.body+"}"), http.StatusBadRequest)
			if !slices.Contains(e.Paths(), tc.path) {
				t.Errorf("paths %v, want %s among them", e.Paths(), tc.path)
			}
		})
	}
	t.Run("AnUnknownArticleIsNotFound", func(t *testing.T) {
		status(t, c.edit("zzzzzzzzzzzzzzzzzzzzzzzz", 1, karnatakaAffidavit), http.StatusNotFound)
		status(t, c.do(http.MethodPost, "/api/console/catalogue/articles/zzzzzzzzzzzzzzzzzzzzzzzz/retire", "", ""), http.StatusNotFound)
		status(t, c.do(http.MethodGet, "/api/console/catalogue/articles/zzzzzzzzzzzzzzzzzzzzzzzz/log", "", ""), http.StatusNotFound)
	})
	t.Run("RetireIsLoggedAndStopsNewOrders", func(t *testing.T) {
		got := functest.OK[articleResponse](t, c.do(http.MethodPost, "/api/console/catalogue/articles/"+added.DocumentID+"/retire", "", ""))
		if !got.Data.Retired || got.Data.Version != 3 {
			t.Errorf("retired %+v; want retired at version 3", got.Data)
		}
		if _, err := s.Env.DB().Articles(s.Env.Table("ArticlesTable")).Get(context.Background(), "Console Bond", "Goa"); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
			t.Errorf("a new order's read of the retired article: %v; want not found", err)
		}
		if l := c.log(added.DocumentID).Data.Changes[0]; l.Kind != stampduty.ArticleRetired || l.By != catalogueAdminEmail {
			t.Errorf("newest change %+v; want retired by %s", l, catalogueAdminEmail)
		}
		// An edit of a retired article is refused: add it again.
		status(t, c.edit(added.DocumentID, 3, `"min":10,"max":800,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`), http.StatusConflict)
	})
}

// TestEditKeepsOrders: an order created before an edit of its article
// keeps the values it was priced with.
func TestEditKeepsOrders(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	c := asAdmin(t, s)
	ctx := context.Background()
	orders := s.Env.DB().Orders(s.Env.Table("OrdersTable"))
	created := functest.AddOrders(t, s.Env, localdb.DevOwner, 1)[0] // Affidavit in Karnataka, fixed 20
	before, err := orders.ByDocument(ctx, created.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	art := c.find("Affidavit", "Karnataka")
	functest.OK[articleResponse](t, c.edit(art.DocumentID, art.Version,
		`"min":35,"max":35,"fixed":35,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`))
	if got := c.find("Affidavit", "Karnataka"); got.Fixed == nil || *got.Fixed != 35 {
		t.Fatalf("the article after the edit: %+v; want fixed 35", got)
	}
	after, err := orders.ByDocument(ctx, created.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after.OpsOrder, before.OpsOrder) {
		t.Errorf("the order changed with its article's edit:\nbefore %+v\nafter  %+v", before.OpsOrder, after.OpsOrder)
	}
	if got, want := after.StampDuty.Amount, int64(20); got != want {
		t.Errorf("the order's amount %d after the edit; want %d, what it was priced with", got, want)
	}
}

// importFile is a catalogue file: Affidavit in Karnataka changed, a new
// article, and the rest of the sample catalogue left out.
const importFile = `[
  {"purpose_name": "Affidavit", "state": "Karnataka", "min": 25, "max": 25, "fixed": 25, "toFollowConsiderationPrice": false, "amountPercentConsideration": null},
  {"purpose_name": "Imported Bond", "state": "Kerala", "min": 0, "max": 100, "fixed": null, "toFollowConsiderationPrice": false, "amountPercentConsideration": null}
]`

func (c catalogueClient) preview(query, file string) preview {
	c.t.Helper()
	return functest.OK[struct{ Data preview }](c.t, c.do(http.MethodPost, "/api/console/catalogue/import/preview", query, file)).Data
}

// TestCatalogueImport: an admin previews a catalogue file (what would be
// added, changed and retired; nothing written) and applies that preview;
// a preview the catalogue has moved past since is refused with the new
// preview, and a file the import would refuse is refused with every
// failing field.
func TestCatalogueImport(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	c := asAdmin(t, s)
	t.Run("PreviewWritesNothing", func(t *testing.T) {
		s.Proxy.Take()
		p := c.preview("", importFile)
		if got, want := s.Env.Operations(s.Proxy.Take()), "Scan:ArticlesTable=1"; got != want {
			t.Errorf("DynamoDB calls of a preview %q, want %q", got, want)
		}
		if p.Add != 1 || p.Change != 1 || p.Retire != 0 || p.Leave < 10 || len(p.Steps) != 2 {
			t.Fatalf("preview %+v; want 1 add, 1 change, the rest left", p)
		}
		change := p.Steps[0]
		want := []stampduty.FieldChange{{Field: "min", Before: "20", After: "25"}, {Field: "max", Before: "20", After: "25"}, {Field: "fixed", Before: "20", After: "25"}}
		if change.Action != "change" || change.PurposeName != "Affidavit" || change.DocumentID == nil || !reflect.DeepEqual(change.Changes, want) {
			t.Errorf("first step %+v; want Affidavit changed %v", change, want)
		}
		if p.Steps[1].Action != "add" || p.Steps[1].DocumentID != nil {
			t.Errorf("second step %+v; want the add", p.Steps[1])
		}
		if got := c.find("Affidavit", "Karnataka"); *got.Fixed != 20 {
			t.Errorf("fixed %d after a preview; want 20", *got.Fixed)
		}
		retiring := c.preview("retireMissing=true", importFile)
		if retiring.Retire != p.Leave || retiring.Preview == p.Preview {
			t.Errorf("retireMissing: %d retired (want %d) and preview %s (want another than %s)", retiring.Retire, p.Leave, retiring.Preview, p.Preview)
		}
		if got, want := [2]bool{p.RetireMissing, retiring.RetireMissing}, [2]bool{false, true}; got != want {
			t.Errorf("the previews' retireMissing %v, want %v (as asked)", got, want)
		}
	})
	t.Run("ApplyOfAPreviewTheCatalogueMovedPastIsConflict", func(t *testing.T) {
		p := c.preview("", importFile)
		other := c.find("Affidavit", "Karnataka")
		functest.OK[articleResponse](t, c.edit(other.DocumentID, other.Version, `"min":21,"max":21,"fixed":21,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`))
		r := c.do(http.MethodPost, "/api/console/catalogue/import", "preview="+p.Preview, importFile)
		status(t, r, http.StatusConflict)
		var body struct{ Data preview }
		if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
			t.Fatal(err)
		}
		if body.Data.Preview == p.Preview || body.Data.Steps[0].Changes[0].Before != "21" {
			t.Errorf("409's data %+v; want the new preview, from min 21", body.Data)
		}
		if got := c.list("purpose=Imported"); len(got) != 0 {
			t.Errorf("a refused import wrote %+v", got)
		}
	})
	t.Run("ApplyOfThePreviewIsLogged", func(t *testing.T) {
		p := c.preview("", importFile)
		got := functest.OK[importResult](t, c.do(http.MethodPost, "/api/console/catalogue/import", "preview="+p.Preview, importFile))
		if d := got.Data; d.Added != 1 || d.Changed != 1 || d.Retired != 0 || d.Left != p.Leave || !got.Meta.Published {
			t.Errorf("import %+v; want 1 added, 1 changed, %d left, published", got, p.Leave)
		}
		aff := c.find("Affidavit", "Karnataka")
		if l := c.log(aff.DocumentID).Data.Changes[0]; *aff.Fixed != 25 || l.Kind != stampduty.ArticleImported || l.By != catalogueAdminEmail {
			t.Errorf("Affidavit fixed %d, newest change %+v; want 25, imported by %s", *aff.Fixed, l, catalogueAdminEmail)
		}
		c.find("Imported Bond", "Kerala")
		// The same preview applied again: the catalogue has moved past it.
		status(t, c.do(http.MethodPost, "/api/console/catalogue/import", "preview="+p.Preview, importFile), http.StatusConflict)
	})
	for _, tc := range []struct {
		name, query, body string
		status            int
		paths             []string
	}{
		{"AnInvalidArticle", "", `[{"purpose_name":"X","state":"Goa","min":5,"max":1,"fixed":null,"toFollowConsiderationPrice":false}]`, http.StatusBadRequest, []string{"[0].max"}},
		{"NotAnArray", "", `{"purpose_name":"X"}`, http.StatusBadRequest, []string{""}},
		{"ARetireMissingThatIsNotABoolean", "retireMissing=yes", importFile, http.StatusBadRequest, []string{"retireMissing"}},
		{"AFileOver4MiB", "", "[" + strings.Repeat(" ", maxImportFile) + "]", http.StatusRequestEntityTooLarge, nil},
	} {
		t.Run("PreviewRefuses"+tc.name, func(t *testing.T) {
			s.Proxy.Take()
			e := status(t, c.do(http.MethodPost, "/api/console/catalogue/import/preview", tc.query, tc.body), tc.status)
			if tc.paths != nil && !slices.Equal(e.Paths(), tc.paths) {
				t.Errorf("paths %q, want %q", e.Paths(), tc.paths)
			}
			if got := s.Proxy.Take(); len(got) != 0 {
				t.Errorf("%d DynamoDB calls for a refused file", len(got))
			}
		})
	}
	t.Run("PreviewRefusesAFileThatIsNotJSON", func(t *testing.T) {
		ev := functest.AsStaff(functest.Request(http.MethodPost, "/api/console/catalogue/import/preview", "", map[string]string{"content-type": "text/csv"}, "a,b"), c.claims)
		status(t, s.Invoke(ev), http.StatusUnsupportedMediaType)
	})
	t.Run("ApplyOfMoreChangesThanFitARequestIsRefused", func(t *testing.T) {
		rows := make([]string, maxImportChanges+1)
		for i := range rows {
			rows[i] = fmt.Sprintf(`{"purpose_name":"Bulk %d","state":"Goa","min":1,"max":2,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null}`, i)
		}
		file := "[" + strings.Join(rows, ",") + "]"
		p := c.preview("", file)
		if p.Add != maxImportChanges+1 {
			t.Fatalf("preview adds %d, want %d", p.Add, maxImportChanges+1)
		}
		s.Proxy.Take()
		e := status(t, c.do(http.MethodPost, "/api/console/catalogue/import", "preview="+p.Preview, file), http.StatusBadRequest)
		if !strings.Contains(e.Error.Message, "stampctl articles import") {
			t.Errorf("message %q; want it to name stampctl articles import", e.Error.Message)
		}
		if got, want := s.Env.Operations(s.Proxy.Take()), "Scan:ArticlesTable=1"; got != want {
			t.Errorf("calls %q, want only the preview's %q: nothing written", got, want)
		}
	})
	t.Run("ApplyWithoutAPreviewIsRefused", func(t *testing.T) {
		e := status(t, c.do(http.MethodPost, "/api/console/catalogue/import", "", importFile), http.StatusBadRequest)
		if !slices.Equal(e.Paths(), []string{"preview"}) {
			t.Errorf("paths %q, want [preview]", e.Paths())
		}
	})
}

// catalogueRequests are a request of each catalogue route.
var catalogueRequests = []struct{ method, path, query, body string }{
	{http.MethodGet, "/api/console/catalogue/articles", "", ""},
	{http.MethodPost, "/api/console/catalogue/articles", "", `{"purpose_name":"A","state":"Goa","min":1,"max":1,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null}`},
	{http.MethodPut, "/api/console/catalogue/articles/zzzzzzzzzzzzzzzzzzzzzzzz", "", `{"version":1,` + karnatakaAffidavit + `}`},
	{http.MethodPost, "/api/console/catalogue/articles/zzzzzzzzzzzzzzzzzzzzzzzz/retire", "", ""},
	{http.MethodGet, "/api/console/catalogue/articles/zzzzzzzzzzzzzzzzzzzzzzzz/log", "", ""},
	{http.MethodPost, "/api/console/catalogue/import/preview", "", importFile},
	{http.MethodPost, "/api/console/catalogue/import", "preview=0123", importFile},
}

// TestCatalogueRoles: every catalogue route refuses an operator and a
// person in neither group (403) and a request without a staff member's
// claims (401), before any DynamoDB call.
func TestCatalogueRoles(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	for _, who := range []struct {
		name   string
		claims map[string]string
		status int
	}{
		{"Operator", functest.StaffClaims(operatorEmail, "operator"), http.StatusForbidden},
		{"NeitherGroup", functest.StaffClaims("new@console.local"), http.StatusForbidden},
		{"NoStaffClaims", nil, http.StatusUnauthorized},
	} {
		c := catalogueClient{t, s, who.claims}
		for _, r := range catalogueRequests {
			t.Run(who.name+"Refused"+r.method+strings.ReplaceAll(r.path, "/", "_"), func(t *testing.T) {
				s.Proxy.Take()
				c.t = t
				status(t, c.do(r.method, r.path, r.query, r.body), who.status)
				if got := s.Proxy.Take(); len(got) != 0 {
					t.Errorf("%d DynamoDB calls before the role was checked; want none", len(got))
				}
			})
		}
	}
}

func init() {
	exercises["catalogue"] = func(t *testing.T, s *functest.Stack) {
		c := asAdmin(t, s)
		c.list("")
		art := functest.OK[articleResponse](t, c.do(http.MethodPost, "/api/console/catalogue/articles", "",
			`{"purpose_name":"Grant Bond","state":"Goa","min":1,"max":9,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null}`)).Data
		functest.OK[articleResponse](t, c.edit(art.DocumentID, art.Version, `"min":1,"max":8,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null`))
		c.log(art.DocumentID)
		functest.OK[articleResponse](t, c.do(http.MethodPost, "/api/console/catalogue/articles/"+art.DocumentID+"/retire", "", ""))
		p := c.preview("", importFile)
		functest.OK[importResult](t, c.do(http.MethodPost, "/api/console/catalogue/import", "preview="+p.Preview, importFile))
	}
}

// TestChangeStoredButNotPublished: a change stored whose publish failed
// answers 200 with the article and published false, saying to run
// `stampctl articles publish` (a retry would be a conflict: the change is
// stored).
func TestChangeStoredButNotPublished(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", func(d function.Deps) http.Handler {
		arts := d.Articles(d.Require("ARTICLES_TABLE")).WithLog(d.Require("ARTICLE_LOG_TABLE"))
		return (&handler{catalogue: &catalogue.Admin{Articles: arts, IDs: d.IDs(d.Require("COUNTERS_TABLE"), articleIDBlock), Now: time.Now,
			Publish: func(context.Context, time.Time) error { return errors.New("the catalogue table is not there") }}}).routes()
	})
	c := asAdmin(t, s)
	got := functest.OK[articleResponse](t, c.do(http.MethodPost, "/api/console/catalogue/articles", "",
		`{"purpose_name":"Unpublished Bond","state":"Goa","min":1,"max":2,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null}`))
	if got.Meta.Published || !strings.Contains(got.Meta.Message, "stampctl articles publish") || got.Data.Version != 1 {
		t.Errorf("answer %+v; want the article, published false, and what to run", got)
	}
	if got := c.list("purpose=Unpublished"); len(got) != 1 {
		t.Errorf("list %+v; want the stored article", got)
	}
}
