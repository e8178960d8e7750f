package locals3

import (
	"errors"
	"net/http"
	"syscall"
	"testing"
)

// Send sends r, a request to a pre-signed address, as a client would and
// returns the status S3 answered. S3 refuses a large body it will not take
// before reading it and closes the connection while the client is still
// sending; that reset (or broken pipe) is the refusal it is, answered here
// as 403. Any other failure of the request fails t.
func Send(t testing.TB, r *http.Request) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(r)
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return http.StatusForbidden
	}
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
