package function

import (
	"net/http"
	"net/http/httptest"
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
