package function

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWriteJSON(t *testing.T) {
	t.Run("TextIsNotHTMLEscaped", func(t *testing.T) {
		w := httptest.NewRecorder()
		WriteJSON(w, 200, map[string]string{"purchasedBy": `<Asha & "Rao">`})
		if got, want := w.Body.String(), `{"purchasedBy":"<Asha & \"Rao\">"}`; got != want {
			t.Errorf("body = %s, want %s", got, want)
		}
	})
	t.Run("NoTrailingNewline", func(t *testing.T) {
		w := httptest.NewRecorder()
		WriteJSON(w, 201, []int{1})
		if got, want := w.Body.String(), `[1]`; got != want {
			t.Errorf("body = %q, want %q", got, want)
		}
		if got, want := w.Code, 201; got != want {
			t.Errorf("status = %d, want %d", got, want)
		}
		if got, want := w.Header().Get("Content-Type"), "application/json; charset=utf-8"; got != want {
			t.Errorf("Content-Type = %q, want %q", got, want)
		}
	})
	t.Run("ErrUnencodableIs500", func(t *testing.T) {
		w := httptest.NewRecorder()
		WriteJSON(w, 200, map[string]any{"x": func() {}})
		if got, want := w.Code, 500; got != want {
			t.Errorf("status = %d, want %d", got, want)
		}
		if !strings.Contains(w.Body.String(), `"name":"InternalServerError"`) {
			t.Errorf("body = %s", w.Body.String())
		}
	})
}
