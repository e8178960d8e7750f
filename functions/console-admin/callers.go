package main

import (
	"context"
	"net/http"
	"time"

	"stampduty/shared/callers"
	"stampduty/shared/function"
	"stampduty/shared/function/staffauth"
)

// callerAdmin is the callers' workflows (callers.Admin).
type callerAdmin interface {
	List(ctx context.Context) ([]callers.Summary, error)
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

// callersResponse is the body of GET /api/console/callers.
type callersResponse struct {
	Data []caller `json:"data"`
	Meta struct{} `json:"meta"`
}

// callerRoutes are the callers' admin routes.
func (h *handler) callerRoutes() []function.Path {
	return []function.Path{
		{Method: http.MethodGet, Pattern: "/api/console/callers", Serve: staffauth.AsAdmin(h.listCallers)},
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
		c := caller{Owner: s.Owner, ActiveTokens: s.Active, RevokedTokens: s.Revoked, Orders: s.Orders}
		if s.Recorded {
			at, by := s.CreatedAt.UTC(), s.CreatedBy
			c.CreatedAt, c.CreatedBy = &at, &by
		}
		out.Data = append(out.Data, c)
	}
	return out, nil
}
