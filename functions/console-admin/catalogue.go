package main

// The catalogue's admin routes (console.md, "Catalogue (admin)"): list the
// articles with filters, add, edit, retire, the change log of one article,
// and an import previewed before it is applied (catalogue_import.go), over
// shared/catalogue (the workflows stampctl's `articles` commands run). An
// article is named by its documentId in a path: its purpose_name may hold
// any printable character, "/" and "%" among them, which no path segment
// carries safely.

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"stampduty/shared/catalogue"
	"stampduty/shared/duty"
	"stampduty/shared/function"
	"stampduty/shared/function/staffauth"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
)

// catalogueWorkflows wires the catalogue's workflows as stampctl does: the
// articles table with its change log, the counters for a new article's id,
// and the published catalogue each change is published to.
func catalogueWorkflows(d function.Deps) *catalogue.Admin {
	arts := d.Articles(d.Require("ARTICLES_TABLE")).WithLog(d.Require("ARTICLE_LOG_TABLE")).WithSnapshots(d.Require("CATALOGUE_TABLE"))
	published := d.Catalogue(d.Require("CATALOGUE_TABLE"))
	return &catalogue.Admin{Articles: arts, IDs: d.IDs(d.Require("COUNTERS_TABLE"), articleIDBlock), Now: time.Now,
		Publish: func(ctx context.Context, now time.Time) error {
			_, err := published.Publish(ctx, arts, now)
			return err
		}}
}

// articleIDBlock is how many article ids an instance reserves at once
// (stampctl's block): articles are added one by one, rarely.
const articleIDBlock = 10

// catalogueAdmin is the catalogue's workflows (catalogue.Admin).
type catalogueAdmin interface {
	List(ctx context.Context) ([]stampduty.CatalogueEntry, error)
	Add(ctx context.Context, by string, art stampduty.Article) (stampduty.CatalogueEntry, error)
	Edit(ctx context.Context, by string, version int64, art stampduty.Article) (stampduty.CatalogueEntry, error)
	Retire(ctx context.Context, by, purpose, state string) (stampduty.CatalogueEntry, error)
	ByDoc(ctx context.Context, doc string) (stampduty.CatalogueEntry, error)
	LogByDoc(ctx context.Context, doc string) (stampduty.CatalogueEntry, []stampduty.ArticleChange, error)
	Preview(ctx context.Context, arts []stampduty.Article, retireMissing bool) (catalogue.Plan, error)
	Import(ctx context.Context, by string, p catalogue.Plan) (catalogue.ImportResult, error)
	TryRule(ctx context.Context, doc string, v *duty.Version, in duty.Request, formErrs []stampduty.FieldError) (stampduty.Quote, error)
	EditRulesByDoc(ctx context.Context, by, doc string, version int64, rules []byte) (stampduty.CatalogueEntry, error)
}

// article is an article as the console shows it: the catalogue file's
// fields with its id and documentId, its version (the edit sends it back),
// whether and when it was retired, and its newest change.
type article struct {
	stampduty.Article
	Version    int64                    `json:"version"`
	Retired    bool                     `json:"retired"`
	RetiredAt  *time.Time               `json:"retiredAt"`
	LastChange *stampduty.ArticleChange `json:"lastChange"`
}

func toArticle(e stampduty.CatalogueEntry) article {
	a := article{Article: e.Article, Version: e.Version, Retired: e.Retired(), LastChange: e.Last}
	if a.Retired {
		at := e.RetiredAt.UTC()
		a.RetiredAt = &at
	}
	return a
}

// articleResponse is the answer of a change: the article as it now is,
// and whether the public catalogue was published with it (false: the
// change is stored, and `stampctl articles publish` must be run; message
// says so).
type articleResponse struct {
	Data article `json:"data"`
	Meta struct {
		Published bool   `json:"published"`
		Message   string `json:"message,omitempty"`
	} `json:"meta"`
}

// articlesResponse is the body of GET /api/console/catalogue/articles.
type articlesResponse struct {
	Data []article `json:"data"`
	Meta struct {
		Total int `json:"total"`
	} `json:"meta"`
}

// logResponse is the body of GET .../articles/{documentId}/log: the
// article and its changes, newest first.
type logResponse struct {
	Data struct {
		Article article                   `json:"article"`
		Changes []stampduty.ArticleChange `json:"changes"`
	} `json:"data"`
}

// catalogueRoutes are the catalogue's admin routes.
func (h *handler) catalogueRoutes() []function.Path {
	const base = "/api/console/catalogue"
	return []function.Path{
		{Method: http.MethodGet, Pattern: base + "/articles", Serve: staffauth.AsAdmin(h.listArticles)},
		{Method: http.MethodPost, Pattern: base + "/articles", Serve: staffauth.AsAdmin(h.addArticle)},
		{Method: http.MethodPut, Pattern: base + "/articles/{documentId}", Serve: staffauth.AsAdmin(h.editArticle)},
		{Method: http.MethodPost, Pattern: base + "/articles/{documentId}/retire", Serve: staffauth.AsAdmin(h.retireArticle)},
		{Method: http.MethodGet, Pattern: base + "/articles/{documentId}/log", Serve: staffauth.AsAdmin(h.articleLog)},
		{Method: http.MethodPost, Pattern: base + "/import/preview", Serve: staffauth.AsAdmin(h.previewImport)},
		{Method: http.MethodPost, Pattern: base + "/import", Serve: staffauth.AsAdmin(h.applyImport)},
	}
}

// The list's filters: the article's status.
const (
	statusAll     = "all"
	statusActive  = "active"
	statusRetired = "retired"
)

// listArticles answers the articles, retired ones included, sorted by
// purpose_name and state, filtered by state (exact), purpose (a part of
// purpose_name, any case) and status (active, retired; default all). The
// whole catalogue is one page: one strongly consistent Scan call of the
// articles table per MB it holds (one call for a catalogue of a few
// thousand articles), filtered here.
func (h *handler) listArticles(r *http.Request, _ string) (any, error) {
	q := r.URL.Query()
	state, purpose, status := q.Get("state"), strings.TrimSpace(q.Get("purpose")), q.Get("status")
	var bad []stampduty.FieldError
	if state != "" && !stampduty.ValidState(state) {
		bad = append(bad, stampduty.FieldError{Path: "state", Message: "state must be one of the states or union territories of India"})
	}
	if len([]rune(purpose)) > stampduty.MaxPurposeNameLength {
		bad = append(bad, stampduty.FieldError{Path: "purpose", Message: "purpose must be at most 200 characters"})
	}
	switch status {
	case "":
		status = statusAll
	case statusAll, statusActive, statusRetired:
	default:
		bad = append(bad, stampduty.FieldError{Path: "status", Message: "status must be one of: all, active, retired"})
	}
	if bad != nil {
		return nil, stampduty.Invalid(bad)
	}
	es, err := h.catalogue.List(r.Context())
	if err != nil {
		return nil, err
	}
	out := articlesResponse{Data: []article{}}
	needle := strings.ToLower(purpose)
	for _, e := range es {
		switch {
		case state != "" && e.State != state,
			needle != "" && !strings.Contains(strings.ToLower(e.PurposeName), needle),
			status == statusActive && e.Retired(),
			status == statusRetired && !e.Retired():
			continue
		}
		out.Data = append(out.Data, toArticle(e))
	}
	out.Meta.Total = len(out.Data)
	return out, nil
}

// changed answers a change's outcome: the article, with published false
// when the change was stored but the publish failed.
func changed(e stampduty.CatalogueEntry, err error) (any, error) {
	var np *catalogue.NotPublishedError
	if err != nil && !errors.As(err, &np) {
		return nil, err
	}
	out := articleResponse{Data: toArticle(e)}
	out.Meta.Published = np == nil
	if np != nil {
		out.Meta.Message = "The change is stored, but the public catalogue was not published: run `stampctl articles publish`."
	}
	return out, nil
}

// addArticle adds the article of the body, an object with the catalogue
// file's seven fields (as one article of `stampctl articles import`'s
// file, checked by the same rules), as the admin. An article of the same
// purpose_name and state is 409; a retired one is brought back.
func (h *handler) addArticle(r *http.Request, by string) (any, error) {
	members, err := function.ReadObject(r)
	if err != nil {
		return nil, err
	}
	art, errs := stampduty.NewArticle(stampjson.Fields(members))
	if len(errs) > 0 {
		return nil, stampduty.Invalid(errs)
	}
	return changed(h.catalogue.Add(r.Context(), by, art))
}

// entry returns the article whose documentId the path names (a Scan of
// the articles table: catalogue.Admin.ByDoc).
func (h *handler) entry(r *http.Request) (stampduty.CatalogueEntry, error) {
	return h.catalogue.ByDoc(r.Context(), r.PathValue("documentId"))
}

// editArticle changes the amounts of the article the path names to the
// body's: version (the version the admin read) and the five fields a
// change can change (min, max, fixed, toFollowConsiderationPrice,
// amountPercentConsideration, all required as in the catalogue file; fixed
// and amountPercentConsideration may be null). purpose_name and state are
// the article's key and cannot be edited (add the new one, retire the
// old). When the article changed since version, the answer is 409 with
// the article as it now is in data.
func (h *handler) editArticle(r *http.Request, by string) (any, error) {
	members, err := function.ReadObject(r)
	if err != nil {
		return nil, err
	}
	version, fields, bad := int64(-1), []stampduty.Field{}, []stampduty.FieldError(nil)
	for _, f := range stampjson.Fields(members) {
		switch f.Name {
		case "version":
			n, ok := articleVersion(f.Value)
			if !ok {
				bad = append(bad, stampduty.FieldError{Path: "version", Message: msgVersion})
				continue
			}
			version = n
		case "purpose_name", "state":
			bad = append(bad, stampduty.FieldError{Path: f.Name, Message: f.Name + " is the article's key and cannot be edited: add the new article and retire this one"})
		default:
			fields = append(fields, f)
		}
	}
	if version < 0 && !slices.ContainsFunc(bad, func(e stampduty.FieldError) bool { return e.Path == "version" }) {
		bad = append(bad, stampduty.FieldError{Path: "version", Message: "version is a required field"})
	}
	if bad != nil {
		return nil, stampduty.Invalid(bad)
	}
	e, err := h.entry(r)
	if err != nil {
		return nil, err
	}
	fields = append(fields, stampduty.Field{Name: "purpose_name", Value: stampduty.Value{Kind: stampduty.String, Text: e.PurposeName}},
		stampduty.Field{Name: "state", Value: stampduty.Value{Kind: stampduty.String, Text: e.State}})
	art, errs := stampduty.NewArticle(fields)
	if len(errs) > 0 {
		return nil, stampduty.Invalid(errs)
	}
	now, err := h.catalogue.Edit(r.Context(), by, version, art)
	if stampduty.ErrorCode(err) == stampduty.ECONFLICT {
		return conflict(err, toArticle(now)), nil
	}
	return changed(now, err)
}

// msgVersion is the error of a version that is not an article's.
const msgVersion = "version must be the article's version, a whole number"

// articleVersion reads the version of the article an edit was made from:
// a whole number, ok false for any other value.
func articleVersion(v stampduty.Value) (int64, bool) {
	n, err := strconv.ParseInt(v.Text, 10, 64)
	return n, v.Kind == stampduty.Number && err == nil && n >= 0
}

// conflict is a 409 in the error envelope with data: what the admin needs
// to try again (the article as it now is, a new preview), where every
// other error's data is null.
func conflict(err error, data any) function.Status {
	body := function.NewErrorBody(err)
	return function.Status{Code: body.Error.Status, Body: struct {
		Data  any                `json:"data"`
		Error function.ErrorInfo `json:"error"`
	}{data, body.Error}}
}

// retireArticle retires the article the path names, as the admin: no new
// order or quote can use it; orders created before keep it. Retiring a
// retired article changes nothing.
func (h *handler) retireArticle(r *http.Request, by string) (any, error) {
	e, err := h.entry(r)
	if err != nil {
		return nil, err
	}
	return changed(h.catalogue.Retire(r.Context(), by, e.PurposeName, e.State))
}

// articleLog answers the article the path names and its change log,
// newest first: who (the email of the admin, or stampctl's --by), when,
// what kind of change, and each field before and after. A Scan of the
// articles table for the documentId, then a Query of the log table.
func (h *handler) articleLog(r *http.Request, _ string) (any, error) {
	e, log, err := h.catalogue.LogByDoc(r.Context(), r.PathValue("documentId"))
	if err != nil {
		return nil, err
	}
	var out logResponse
	out.Data.Article, out.Data.Changes = toArticle(e), log
	if out.Data.Changes == nil {
		out.Data.Changes = []stampduty.ArticleChange{}
	}
	return out, nil
}
