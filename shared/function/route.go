package function

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
)

// Status is an answer with a status other than 200 (202 Accepted, say):
// Route answers Code with Body as JSON.
type Status struct {
	Code int
	Body any
}

// Found is an answer that sends the client on: 302 Found to Location, with
// no body, and neither cached nor passed on as a referrer (Location is a
// pre-signed address).
type Found struct{ Location string }

// NoContent is an answer with no body: 204 No Content, as Strapi v5
// answers a delete.
type NoContent struct{}

// Route serves one method with serve: within Budget's time, it answers 200
// with serve's answer as JSON (a Status: its Code and Body; a Found: 302;
// a NoContent: 204 with no body), or serve's error in the Strapi envelope;
// any other method is answered 405.
func Route[T any](method string, serve func(r *http.Request) (T, error)) http.Handler {
	return Method(method, Budget(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := serve(r)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		if f, ok := any(resp).(Found); ok {
			h := w.Header()
			h.Set("Location", f.Location)
			h.Set("Cache-Control", "no-store")
			h.Set("Referrer-Policy", "no-referrer")
			w.WriteHeader(http.StatusFound)
			return
		}
		if _, ok := any(resp).(NoContent); ok {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if s, ok := any(resp).(Status); ok {
			WriteJSON(w, s.Code, s.Body)
			return
		}
		WriteJSON(w, http.StatusOK, resp)
	})))
}

// AsCaller serves a route of the caller's own (as in Route): serve is
// given the owner of the bearer token r carries, whom r's request log line
// then names. Without a token the answer is 403; with an unknown, revoked
// or malformed one, 401.
func AsCaller[T any](a *auth.Authenticator, serve func(r *http.Request, owner string) (T, error)) func(r *http.Request) (T, error) {
	return func(r *http.Request) (T, error) {
		owner, err := a.Owner(r.Context(), r.Header.Get("Authorization"))
		if err != nil {
			var none T
			return none, err
		}
		SetCaller(r.Context(), owner)
		return serve(r, owner)
	}
}

// Path is one route of a function with several: a method, a path pattern
// of net/http.ServeMux (its {name} segments are r.PathValue(name)), and
// what serves it (as in Route).
type Path struct {
	Method, Pattern string
	Serve           func(r *http.Request) (any, error)
}

// Routes serves each path as Route serves its one; a request no pattern
// matches is answered 404 NotFoundError in the Strapi envelope. A pattern
// may have several methods (one Path each); a method it does not have is
// answered 405 with an Allow header naming those it has.
func Routes(paths ...Path) http.Handler {
	mux := http.NewServeMux()
	methods := map[string]map[string]http.Handler{}
	for _, p := range paths {
		if methods[p.Pattern] == nil {
			methods[p.Pattern] = map[string]http.Handler{}
		}
		methods[p.Pattern][p.Method] = Route(p.Method, p.Serve)
	}
	for pattern, hs := range methods {
		allow := strings.Join(slices.Sorted(maps.Keys(hs)), ", ")
		mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h, ok := hs[r.Method]; ok {
				h.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Allow", allow)
			WriteError(w, r, stampduty.Errorf(stampduty.ENOTALLOWED, "Method %s is not allowed here", r.Method))
		}))
	}
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, stampduty.Errorf(stampduty.ENOTFOUND, "Not Found"))
	}))
	return mux
}

// RequestBudget is how long a request may work before it gives up with 503:
// well inside the functions' 10 s timeout, so that a DynamoDB in trouble
// gets the caller an answer, not a Lambda timeout.
const RequestBudget = 6 * time.Second

// Budget runs h with a context that ends after RequestBudget, or half a
// second before the Lambda invocation's own deadline if that is sooner.
func Budget(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline := time.Now().Add(RequestBudget)
		if d, ok := r.Context().Deadline(); ok && d.Add(-500*time.Millisecond).Before(deadline) {
			deadline = d.Add(-500 * time.Millisecond)
		}
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Method returns a handler that serves only the given method and answers
// any other with 405 in the envelope.
func Method(method string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			WriteError(w, r, stampduty.Errorf(stampduty.ENOTALLOWED, "Method %s is not allowed here", r.Method))
			return
		}
		h.ServeHTTP(w, r)
	})
}
