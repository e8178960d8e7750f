package function

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMethod(t *testing.T) {
	h := Method("GET", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("DELETE", "/", nil))
	if w.Code != 405 || w.Header().Get("Allow") != "GET" {
		t.Errorf("DELETE: %d %v", w.Code, w.Header())
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 204 {
		t.Errorf("GET: %d", w.Code)
	}
}

// TestRouteAnswers: Route answers serve's value as JSON with 200, a
// Status with its code, a Found with 302 to its Location and no body, and
// a NoContent with 204 and no body.
func TestRouteAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer any
		status int
		body   string
	}{
		{"Value", map[string]int{"n": 1}, http.StatusOK, `{"n":1}`},
		{"Status", Status{Code: http.StatusAccepted, Body: map[string]int{"n": 2}}, http.StatusAccepted, `{"n":2}`},
		{"Found", Found{Location: "https://example.com/x"}, http.StatusFound, ""},
		{"NoContent", NoContent{}, http.StatusNoContent, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Route("GET", func(*http.Request) (any, error) { return tc.answer, nil })
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			if got, body := w.Code, strings.TrimSpace(w.Body.String()); got != tc.status || body != tc.body {
				t.Errorf("%d %q, want %d %q", got, body, tc.status, tc.body)
			}
		})
	}
}
