package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/callers"
	"stampduty/shared/function"
	"stampduty/shared/function/staffauth"
	"stampduty/shared/jsonobj"
	"stampduty/shared/stampduty"
)

// callerAdmin is the callers' workflows (callers.Admin).
type callerAdmin interface {
	List(ctx context.Context) ([]callers.Summary, error)
	Create(ctx context.Context, by, owner string) (auth.Caller, error)
	TokensOf(ctx context.Context, owner string) ([]auth.Token, error)
	Issue(ctx context.Context, by, owner string, test bool) (string, auth.Token, error)
	Revoke(ctx context.Context, id string) (auth.Token, error)
	Known(ctx context.Context, owner string) error
}

// caller is one caller as the console lists it: its name (owner), when and
// by whom its record was made (absent for a caller from before records),
// its tokens and its orders.
type caller struct {
	Owner         string     `json:"owner"`
	CreatedAt     *time.Time `json:"createdAt"`
	CreatedBy     *string    `json:"createdBy"`
	ActiveTokens  int        `json:"activeTokens"`
	RevokedTokens int        `json:"revokedTokens"`
	Orders        int        `json:"orders"`
}

// token is one token as the console shows it: its ID (the first 12 hex
// digits of its keyed hash, what revoking names), its owner, its mode
// (modeLive, or modeTest for a test token, which sees only its caller's
// test data), when and by whom it was issued (createdBy null for a token
// from before that was kept) and when it was revoked (null while it
// works). Never the token itself, which is not stored, nor its hash.
type token struct {
	ID        string     `json:"id"`
	Owner     string     `json:"owner"`
	Mode      string     `json:"mode"`
	CreatedAt time.Time  `json:"createdAt"`
	CreatedBy *string    `json:"createdBy"`
	RevokedAt *time.Time `json:"revokedAt"`
}

// issuedToken is a token just issued: its record and, this once, the
// token itself (only its keyed hash is stored; it is never readable again).
type issuedToken struct {
	token
	Token string `json:"token"`
}

// response is an answer of the admin routes: {"data": …, "meta": {}}.
type response[T any] struct {
	Data T        `json:"data"`
	Meta struct{} `json:"meta"`
}

// The callers' routes' answers: the callers (GET /api/console/callers), a
// created caller, a caller's tokens (GET .../{owner}/tokens), a revoked
// token, an issued token (POST .../{owner}/tokens).
type (
	callersResponse = response[[]caller]
	callerResponse  = response[caller]
	tokensResponse  = response[[]token]
	tokenResponse   = response[token]
	issuedResponse  = response[issuedToken]
)

const callerPath = "/api/console/callers/{owner}"

// A token's modes, as the console shows them: the words of the callers'
// `?mode=` (test-mode.md), so that the token list and the orders it sees
// are named alike.
const (
	modeLive = "live"
	modeTest = "test"
)

// callerRoutes are the callers' admin routes.
func (h *handler) callerRoutes() []function.Path {
	return []function.Path{
		{Method: http.MethodGet, Pattern: "/api/console/callers", Serve: staffauth.AsAdmin(h.listCallers)},
		{Method: http.MethodPost, Pattern: "/api/console/callers", Serve: staffauth.AsAdmin(h.createCaller)},
		{Method: http.MethodGet, Pattern: callerPath + "/tokens", Serve: staffauth.AsAdmin(h.listTokens)},
		{Method: http.MethodPost, Pattern: callerPath + "/tokens", Serve: staffauth.AsAdmin(h.issueToken)},
		{Method: http.MethodPost, Pattern: "/api/console/tokens/{id}/revoke", Serve: staffauth.AsAdmin(h.revokeToken)},
	}
}

// listCallers answers every caller, by owner, with its token and order
// counts (callers.Admin.List: one Scan of the tokens table, then one
// order count per caller).
func (h *handler) listCallers(r *http.Request, _ string) (any, error) {
	list, err := h.callers.List(r.Context())
	if err != nil {
		return nil, err
	}
	out := callersResponse{Data: make([]caller, 0, len(list))}
	for _, s := range list {
		out.Data = append(out.Data, callerOf(s))
	}
	return out, nil
}

// callerOf is the caller s as the console shows it.
func callerOf(s callers.Summary) caller {
	c := caller{Owner: s.Owner, ActiveTokens: s.Active, RevokedTokens: s.Revoked, Orders: s.Orders}
	if s.Recorded {
		at, by := s.CreatedAt.UTC(), s.CreatedBy
		c.CreatedAt, c.CreatedBy = &at, &by
	}
	return c
}

// createCaller creates the caller the body names ({"owner": "…"}), as the
// admin acting (callers.Admin.Create: one conditional PutItem), and
// answers 201 with it, no tokens and no orders yet. Its account is opened
// with the stack's DefaultCreditLimit (accounts.Ledger.OpenCaller: nothing
// stored when it is unlimited, else one conditional PutItem). A name taken is 409; a
// name no caller can have is 400 with the workflow's message.
func (h *handler) createCaller(r *http.Request, by string) (any, error) {
	owner, err := readOwner(r)
	if err != nil {
		return nil, err
	}
	c, err := h.callers.Create(r.Context(), by, owner)
	if err != nil {
		return nil, err
	}
	if err := h.accounts.OpenCaller(r.Context(), owner); err != nil {
		return nil, fmt.Errorf("caller %s created; open its account with the stack's DefaultCreditLimit (set its limit on its Account): %w", owner, err)
	}
	return function.Status{Code: http.StatusCreated, Body: callerResponse{Data: callerOf(callers.Summary{Caller: c, Recorded: true})}}, nil
}

// readOwner reads a create's body: {"owner": "<name>"} and nothing else.
// A missing owner is "", which the workflow refuses with its own message.
func readOwner(r *http.Request) (string, error) {
	members, err := function.ReadObject(r)
	if err != nil {
		return "", err
	}
	owner, _, bad := function.OneField(members, "owner", func(v jsonobj.Value) bool { return v.Kind == jsonobj.String },
		"owner must be a string", "a caller")
	if bad != nil {
		return "", stampduty.Invalid(bad)
	}
	return owner.Text, nil
}

// listTokens answers the tokens of the caller the path names, oldest
// first, revoked ones included (callers.Admin.TokensOf: one Scan of the
// tokens table); 404 for a name no caller has.
func (h *handler) listTokens(r *http.Request, _ string) (any, error) {
	ts, err := h.callers.TokensOf(r.Context(), r.PathValue("owner"))
	if err != nil {
		return nil, err
	}
	out := tokensResponse{Data: make([]token, 0, len(ts))}
	for _, t := range ts {
		out.Data = append(out.Data, tokenOf(t))
	}
	return out, nil
}

// tokenOf is the token t as the console shows it.
func tokenOf(t auth.Token) token {
	out := token{ID: t.ID(), Owner: t.Owner, Mode: modeLive, CreatedAt: t.CreatedAt.UTC()}
	if t.Test {
		out.Mode = modeTest
	}
	if t.CreatedBy != "" {
		by := t.CreatedBy
		out.CreatedBy = &by
	}
	if t.Revoked() {
		at := t.RevokedAt.UTC()
		out.RevokedAt = &at
	}
	return out
}

// issueToken issues a token for the caller the path names, as the admin
// acting (callers.Admin.Issue: one GetItem of its record, one conditional
// PutItem of the token's keyed hash), and answers 201 with the token
// itself and its mode: this answer is the only place it is ever shown, and
// no log line holds it (the request's log line names the route, never a
// body). The body chooses the mode (readIssue): none, or {}, is a live
// token, {"test": true} a test token. A caller without a record is 404.
func (h *handler) issueToken(r *http.Request, by string) (any, error) {
	test, err := readIssue(r)
	if err != nil {
		return nil, err
	}
	secret, t, err := h.callers.Issue(r.Context(), by, r.PathValue("owner"), test)
	if err != nil {
		return nil, err
	}
	return function.Status{Code: http.StatusCreated, Body: issuedResponse{Data: issuedToken{token: tokenOf(t), Token: secret}}}, nil
}

// readIssue reads an issue's body: empty, or {"test": <boolean>} and
// nothing else. No body and no "test" are a live token, as before the
// mode existed, so an issue sent as it always was stays live; a test
// token is asked for by name. "test" of any other type (a string "true",
// null, a number) is 400 on "test" rather than a guess.
func readIssue(r *http.Request) (bool, error) {
	body, err := function.ReadJSONBody(r)
	if err != nil || len(body) == 0 {
		return false, err
	}
	members, err := function.DecodeObject(body)
	if err != nil {
		return false, err
	}
	test, _, bad := function.OneField(members, "test", func(v jsonobj.Value) bool { return v.Kind == jsonobj.Bool },
		"test must be true (a test token) or false (a live token)", "a token to issue")
	if bad != nil {
		return false, stampduty.Invalid(bad)
	}
	return test.Bool, nil
}

// revokeToken revokes the token the path names by its ID
// (callers.Admin.Revoke: one Scan to find it, one conditional UpdateItem)
// and answers it, revoked: it stops working everywhere within
// auth.CacheTTL (5 s). Revoking a revoked token answers it as it is.
func (h *handler) revokeToken(r *http.Request, _ string) (any, error) {
	t, err := h.callers.Revoke(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return tokenResponse{Data: tokenOf(t)}, nil
}
