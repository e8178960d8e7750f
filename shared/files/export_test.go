package files_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"stampduty/shared/files"
	"stampduty/shared/testkit/locals3"
)

// rows writes n lines of about 100 bytes, in writes of one line each.
func rows(n int) func(io.Writer) error {
	return func(w io.Writer) error {
		for i := range n {
			if _, err := fmt.Fprintf(w, "%08d,%s\r\n", i, strings.Repeat("x", 90)); err != nil {
				return err
			}
		}
		return nil
	}
}

// recorder is a transport that records each request's method, path and
// query.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req.Method+" "+req.URL.Path+"?"+req.URL.RawQuery)
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// want returns what rows(n) writes.
func want(n int) string {
	var b strings.Builder
	_ = rows(n)(&b)
	return b.String()
}

func TestExport(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	s := files.New(s3.New(s3.Options{Region: region, BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(accessKey, secret, ""), HTTPClient: &http.Client{Transport: rec}}), bucket)
	for _, tc := range []struct {
		name  string
		rows  int
		parts string // the ETag's suffix: a multipart object's is -<parts>
	}{
		{"SmallerThanAPartIsOnePut", 10, ""},
		{"LargerIsStreamedInParts", 2*files.ExportPartSize/100 + 7, "-3"}, // the last part short
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := files.ExportKey(".csv")
			if !strings.HasPrefix(key, files.ExportPrefix) {
				t.Fatalf("key %s outside %s", key, files.ExportPrefix)
			}
			u, err := s.Export(ctx, key, "text/csv; charset=utf-8", "entries.csv", rows(tc.rows))
			if err != nil {
				t.Fatal(err)
			}
			status, got, h := get(t, u)
			if status != http.StatusOK || sha256.Sum256([]byte(got)) != sha256.Sum256([]byte(want(tc.rows))) {
				t.Fatalf("GET = %d, %d bytes; want 200 and the %d rows written", status, len(got), tc.rows)
			}
			if got, want := h.Get("Content-Disposition"), `attachment; filename=entries.csv`; got != want {
				t.Errorf("Content-Disposition = %q, want %q", got, want)
			}
			etag := strings.Trim(h.Get("ETag"), `"`)
			if got := etag[max(0, strings.LastIndex(etag, "-")):]; (tc.parts == "") != !strings.Contains(etag, "-") || tc.parts != "" && got != tc.parts {
				t.Errorf("ETag %s, want parts %q", etag, tc.parts)
			}
		})
	}
	t.Run("FailedWriteStoresNothing", func(t *testing.T) {
		key := files.ExportKey(".csv")
		boom := errors.New("boom")
		_, err := s.Export(ctx, key, "text/csv", "entries.csv", func(w io.Writer) error {
			if err := rows(files.ExportPartSize/100 + 1)(w); err != nil { // one part uploaded
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want the writer's", err)
		}
		c := locals3.Client(endpoint, accessKey, secret, region)
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err == nil {
			t.Error("an object is stored after the write failed")
		}
		// The gateway does not list open uploads: the abort is seen on the wire.
		if !slices.ContainsFunc(rec.requests(), func(r string) bool { return strings.HasPrefix(r, "DELETE /"+bucket+"/"+key+"?uploadId=") }) {
			t.Errorf("requests %v: the failed upload is not aborted", rec.requests())
		}
	})
}
