package main

// The catalogue's import (console.md, "Catalogue (admin)"): a catalogue file
// previewed (what it would add, change and retire, writing nothing), then
// applied with the preview's id, which tells whether the catalogue or the
// file changed in between.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"

	"stampduty/shared/catalogue"
	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
)

// The limits of the catalogue's import.
const (
	// maxImportFile is the largest catalogue file the console takes (the
	// console's limit for any file, console.md's "Bad input"); stampctl
	// takes any size.
	maxImportFile = 4 << 20
	// maxImportChanges is the most adds, changes and retirements one
	// applied import may make: each is three PutItems, and all of them
	// must fit in the request's budget (function.RequestBudget, 6 s). A
	// larger import is previewed in the console and applied with
	// `stampctl articles import`.
	maxImportChanges = 100
)

// step is one article an import adds, changes or retires.
type step struct {
	Action      string                  `json:"action"`
	PurposeName string                  `json:"purpose_name"`
	State       string                  `json:"state"`
	DocumentID  *string                 `json:"documentId"`
	Version     *int64                  `json:"version"`
	Changes     []stampduty.FieldChange `json:"changes"`
}

// preview is what an import would do: its id (apply sends it back), the
// counts of each action and the steps that write (the articles it leaves
// are only counted).
type preview struct {
	Preview       string `json:"preview"`
	RetireMissing bool   `json:"retireMissing"`
	Add           int    `json:"add"`
	Change        int    `json:"change"`
	Retire        int    `json:"retire"`
	Leave         int    `json:"leave"`
	Steps         []step `json:"steps"`
}

// planID identifies a plan: a digest of every step (the article, its
// version and retirement as read, what the import makes of it), so that
// two plans have the same id only when the file and every article of the
// catalogue are as they were.
func planID(p catalogue.Plan, retireMissing bool) string {
	d := sha256.New()
	fmt.Fprintf(d, "retireMissing=%t\n", retireMissing)
	for _, s := range p.Steps {
		fmt.Fprintf(d, "%s\x00%s\x00%s", s.Action, s.After.PurposeName, s.After.State)
		if s.Before != nil {
			fmt.Fprintf(d, "\x00%s\x00%d\x00%t", s.Before.DocumentID, s.Before.Version, s.Before.Retired())
		}
		for _, v := range stampduty.ArticleValues(s.After) {
			fmt.Fprintf(d, "\x00%s=%s", v[0], v[1])
		}
		d.Write([]byte{'\n'})
	}
	return hex.EncodeToString(d.Sum(nil)[:16])
}

func toPreview(p catalogue.Plan, retireMissing bool) preview {
	out := preview{Preview: planID(p, retireMissing), RetireMissing: retireMissing,
		Add: p.Add, Change: p.Change, Retire: p.Retire, Leave: p.Leave, Steps: []step{}}
	for _, s := range p.Steps {
		if s.Action == catalogue.ActionLeave {
			continue
		}
		st := step{Action: s.Action, PurposeName: s.After.PurposeName, State: s.After.State, Changes: s.Changes}
		if s.Before != nil {
			doc, v := s.Before.DocumentID, s.Before.Version
			st.DocumentID, st.Version = &doc, &v
		}
		out.Steps = append(out.Steps, st)
	}
	return out
}

// readImport reads an import's request: the catalogue file as the body (a
// JSON array of articles, as `stampctl articles import` takes, at most
// maxImportFile bytes), checked whole, and the retireMissing query
// parameter (true or false; default false: a file of part of the
// catalogue leaves the rest as it is).
func readImport(r *http.Request) ([]stampduty.Article, bool, error) {
	retire := false
	switch v := r.URL.Query().Get("retireMissing"); v {
	case "", "false":
	case "true":
		retire = true
	default:
		return nil, false, stampduty.Invalid([]stampduty.FieldError{{Path: "retireMissing", Message: "retireMissing must be true or false"}})
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !function.IsJSON(r) {
		return nil, false, stampduty.Errorf(stampduty.EUNSUPPORTED, "The catalogue file must be JSON (Content-Type application/json)")
	}
	tooLarge := stampduty.Errorf(stampduty.ETOOLARGE, "The catalogue file is larger than 4 MiB")
	if r.ContentLength > maxImportFile {
		return nil, false, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxImportFile+1))
	switch {
	case err != nil:
		return nil, false, stampduty.Errorf(stampduty.EINVALID, "Invalid data. The body could not be read")
	case len(data) > maxImportFile:
		return nil, false, tooLarge
	}
	arts, err := stampjson.DecodeArticles(data)
	return arts, retire, err
}

// previewImport answers what importing the file would add, change and
// retire, writing nothing: one strongly consistent Scan of the articles
// table.
func (h *handler) previewImport(r *http.Request, _ string) (any, error) {
	_, shown, err := h.planImport(r)
	if err != nil {
		return nil, err
	}
	return struct {
		Data preview `json:"data"`
	}{shown}, nil
}

// planImport reads r's file and retireMissing (readImport) and plans the
// import against the catalogue as it is now: the plan, and the preview
// that shows it.
func (h *handler) planImport(r *http.Request) (catalogue.Plan, preview, error) {
	arts, retire, err := readImport(r)
	if err != nil {
		return catalogue.Plan{}, preview{}, err
	}
	p, err := h.catalogue.Preview(r.Context(), arts, retire)
	if err != nil {
		return catalogue.Plan{}, preview{}, err
	}
	return p, toPreview(p, retire), nil
}

// importResult is the body of an applied import.
type importResult struct {
	Data struct {
		Added   int `json:"added"`
		Changed int `json:"changed"`
		Retired int `json:"retired"`
		Left    int `json:"left"`
	} `json:"data"`
	Meta struct {
		Published bool   `json:"published"`
		Message   string `json:"message,omitempty"`
	} `json:"meta"`
}

// applyImport applies the import the preview query parameter names (the
// id previewImport answered) with the same file and retireMissing, as the
// admin. The file is previewed again: when the plan differs (an article
// changed, was added or retired since the preview), nothing is written
// and the answer is 409 with the new preview in data. Each write is
// conditioned on the version the preview read, so a change between this
// preview and the write stops the import with 409 too (what was applied
// before it is kept, published and counted in the message).
func (h *handler) applyImport(r *http.Request, by string) (any, error) {
	id := r.URL.Query().Get("preview")
	if id == "" {
		return nil, stampduty.Invalid([]stampduty.FieldError{{Path: "preview", Message: "preview is required: the id of the preview being applied"}})
	}
	p, now, err := h.planImport(r)
	if err != nil {
		return nil, err
	}
	if now.Preview != id {
		return conflict(stampduty.Errorf(stampduty.ECONFLICT,
			"The catalogue or the file changed since the preview: nothing was written. Review the new preview and apply it."), now), nil
	}
	if n := p.Add + p.Change + p.Retire; n > maxImportChanges {
		return nil, stampduty.Errorf(stampduty.EINVALID,
			"The import makes %d changes; the console applies at most %d at once. Apply it with `stampctl articles import`, or split the file.", n, maxImportChanges)
	}
	res, err := h.catalogue.Import(r.Context(), by, p)
	var np *catalogue.NotPublishedError
	if err != nil && !errors.As(err, &np) {
		if stampduty.ErrorCode(err) == stampduty.ECONFLICT {
			return nil, stampduty.Errorf(stampduty.ECONFLICT, "%s; %d added, %d changed and %d retired before it stopped (preview the import again)",
				stampduty.ErrorMessage(err), res.Added, res.Changed, res.Retired)
		}
		return nil, err
	}
	var out importResult
	out.Data.Added, out.Data.Changed, out.Data.Retired, out.Data.Left = res.Added, res.Changed, res.Retired, res.Left
	out.Meta.Published = np == nil
	if np != nil {
		out.Meta.Message = "The import is stored, but the public catalogue was not published: run `stampctl articles publish`."
	}
	return out, nil
}
