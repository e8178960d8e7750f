package function

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// WriteJSON writes v as a JSON response with the given status. Text is
// written as it is, not HTML-escaped: an API answer is not HTML, and
// encoding/json's default writes each of < > & as six bytes, which would
// make a page of orders up to six times longer than its text.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"data":null,"error":{"status":500,"name":"InternalServerError","message":"Internal Server Error","details":{}}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}
