package files_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"stampduty/shared/config"
	"stampduty/shared/files"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/locals3"
	"stampduty/shared/testkit/localserver"
	"stampduty/shared/testkit/storetest"
)

const (
	accessKey = "local"
	secret    = "local-secret"
	region    = "us-east-1"
	bucket    = "files"
)

var endpoint string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		root, err := localdb.ModuleRoot(".")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		srv, err := locals3.Start(context.Background(), root, "", accessKey, secret, region, nil)
		if line, skip := localserver.SkipLine(err); skip {
			fmt.Println(line)
			return storetest.RunNone(m)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "files tests:", localserver.FailLine(err))
			return 1
		}
		defer srv.Stop()
		endpoint = srv.Endpoint
		if err := locals3.CreateBucket(context.Background(), locals3.Client(endpoint, accessKey, secret, region), bucket); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}())
}

// open returns the store as a function opens it, from its environment.
func open(t *testing.T, key, sec string) *files.Store {
	t.Helper()
	env := config.New(func(k string) string {
		return map[string]string{"AWS_REGION": region, "AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": sec,
			"S3_ENDPOINT": endpoint, "FILES_BUCKET": bucket, config.LocalSignal: "true"}[k]
	})
	s := files.Open(env)
	if err := env.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

func get(t *testing.T, u string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	s := open(t, accessKey, secret)
	body := []byte("%PDF-1.7\nhello\n%%EOF\n")
	sum := sha256.Sum256(body)
	key := orders.DocumentPrefix + "o1/f1"
	if err := s.Put(ctx, key, stampduty.MimePDF, body, sum); err != nil {
		t.Fatal(err)
	}

	t.Run("URLDownloadsTheFileAsNamed", func(t *testing.T) {
		u, err := s.URL(ctx, key, "lease (1).pdf", stampduty.MimePDF)
		if err != nil {
			t.Fatal(err)
		}
		status, got, h := get(t, u)
		if status != http.StatusOK || got != string(body) {
			t.Fatalf("GET = %d %q", status, got)
		}
		if got, want := h.Get("Content-Disposition"), `attachment; filename="lease (1).pdf"`; got != want {
			t.Errorf("Content-Disposition = %q, want %q", got, want)
		}
		if got, want := h.Get("Content-Type"), stampduty.MimePDF; got != want {
			t.Errorf("Content-Type = %q, want %q", got, want)
		}
		q, _ := url.ParseQuery(strings.SplitN(u, "?", 2)[1])
		if got, want := q.Get("X-Amz-Expires"), "900"; got != want {
			t.Errorf("X-Amz-Expires = %s, want %s (15 minutes)", got, want)
		}
	})
	t.Run("ErrTamperedURL", func(t *testing.T) {
		u, _ := s.URL(ctx, key, "a.pdf", stampduty.MimePDF)
		for name, bad := range map[string]string{
			"OtherKey":       strings.Replace(u, "/o1/f1", "/o1/f2", 1),
			"LongerLife":     strings.Replace(u, "X-Amz-Expires=900", "X-Amz-Expires=9000", 1),
			"OtherSignature": u[:len(u)-1] + map[bool]string{true: "0", false: "1"}[!strings.HasSuffix(u, "0")],
		} {
			if status, _, _ := get(t, bad); status != http.StatusForbidden {
				t.Errorf("%s: GET = %d, want 403", name, status)
			}
		}
	})
	t.Run("ErrExpiredURL", func(t *testing.T) {
		// A URL pre-signed 16 minutes ago for 15 minutes.
		client := locals3.Client(endpoint, accessKey, secret, region)
		p := s3.NewPresignClient(client, func(o *s3.PresignOptions) { o.Presigner = earlier{16 * time.Minute} })
		req, err := p.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)},
			s3.WithPresignExpires(files.URLLifetime))
		if err != nil {
			t.Fatal(err)
		}
		if status, _, _ := get(t, req.URL); status != http.StatusForbidden {
			t.Errorf("expired URL: GET = %d, want 403", status)
		}
	})
	t.Run("URLMakesNoNetworkCall", func(t *testing.T) {
		// A store whose endpoint does not exist still pre-signs.
		env := config.New(func(k string) string {
			return map[string]string{"AWS_REGION": region, "AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secret,
				"S3_ENDPOINT": "http://127.0.0.1:1", "FILES_BUCKET": bucket, config.LocalSignal: "true"}[k]
		})
		start := time.Now()
		if _, err := files.Open(env).URL(ctx, key, "a.pdf", stampduty.MimePDF); err != nil {
			t.Fatalf("URL with S3 unreachable: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("URL took %v", d)
		}
	})
	t.Run("ErrChecksumMismatchStoresNothing", func(t *testing.T) {
		bad := sum
		bad[0] ^= 1
		err := s.Put(ctx, orders.DocumentPrefix+"o1/f3", stampduty.MimePDF, body, bad)
		if stampduty.ErrorCode(err) != stampduty.EINTERNAL {
			t.Fatalf("Put with a wrong SHA-256 = %v, want EINTERNAL", err)
		}
		u, _ := s.URL(ctx, orders.DocumentPrefix+"o1/f3", "a.pdf", stampduty.MimePDF)
		if status, _, _ := get(t, u); status != http.StatusNotFound {
			t.Errorf("the refused object: GET = %d, want 404", status)
		}
	})
	t.Run("ErrWrongCredentials", func(t *testing.T) {
		err := open(t, accessKey, "wrong").Put(ctx, orders.DocumentPrefix+"o1/f4", stampduty.MimePDF, body, sum)
		if stampduty.ErrorCode(err) != stampduty.EINTERNAL {
			t.Errorf("Put with a wrong secret = %v, want EINTERNAL", err)
		}
		if !strings.Contains(err.Error(), "s3 PutObject") {
			t.Errorf("error %q does not name the call", err)
		}
	})
	t.Run("ErrS3DownIsUnavailable", func(t *testing.T) {
		env := config.New(func(k string) string {
			return map[string]string{"AWS_REGION": region, "AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secret,
				"S3_ENDPOINT": "http://127.0.0.1:1", "FILES_BUCKET": bucket, config.LocalSignal: "true"}[k]
		})
		err := files.Open(env).Put(ctx, orders.DocumentPrefix+"o1/f5", stampduty.MimePDF, body, sum)
		if stampduty.ErrorCode(err) != stampduty.EUNAVAILABLE || stampduty.ErrorMessage(err) != "Service Unavailable" {
			t.Errorf("Put with S3 down = %v (%s), want EUNAVAILABLE", err, stampduty.ErrorCode(err))
		}
	})
	t.Run("PurgeRemovesEveryVersion", func(t *testing.T) {
		k := orders.CertificatePrefix + "o1/f6"
		neighbour := k + "0" // shares k as a prefix: must be kept
		for _, key := range []string{k, k, neighbour} {
			if err := s.Put(ctx, key, stampduty.MimePDF, body, sum); err != nil {
				t.Fatal(err)
			}
		}
		if got := versions(t, k); got != 2 {
			t.Fatalf("%d versions before, want 2", got)
		}
		if err := s.Purge(ctx, k); err != nil {
			t.Fatal(err)
		}
		if got := versions(t, k); got != 0 {
			t.Errorf("%d versions or delete markers left, want 0", got)
		}
		if got := versions(t, neighbour); got != 1 {
			t.Errorf("the neighbour has %d versions, want 1", got)
		}
		if err := s.Purge(ctx, k); err != nil {
			t.Errorf("purging nothing: %v", err)
		}
	})
}

// TestPresignPut: S3 itself refuses a pre-signed upload of any other type
// or size than the one signed, or after its lifetime; the right one is
// stored, and Stat, Copy and Digest see it.
func TestPresignPut(t *testing.T) {
	ctx := context.Background()
	s := open(t, accessKey, secret)
	body := []byte("%PDF-1.7\n" + strings.Repeat("x", 1000) + "\n%%EOF\n")
	key := orders.StagingPrefix + "u1"
	req, err := s.PresignPut(ctx, key, stampduty.MimePDF, int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	if req.Method != http.MethodPut || req.Headers["Content-Type"] != stampduty.MimePDF || req.Headers["Content-Length"] != fmt.Sprint(len(body)) {
		t.Fatalf("presigned = %+v", req)
	}
	q, _ := url.ParseQuery(strings.SplitN(req.URL, "?", 2)[1])
	if got, want := q.Get("X-Amz-Expires"), "900"; got != want {
		t.Errorf("X-Amz-Expires = %s, want %s (15 minutes)", got, want)
	}
	send := func(u string, b []byte, contentType string) int {
		t.Helper()
		r, _ := http.NewRequest(req.Method, u, bytes.NewReader(b))
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		// A reset on a large body is S3's refusal too (locals3.Send); the
		// Stat below shows nothing was stored.
		return locals3.Send(t, r)
	}
	for name, tc := range map[string]struct {
		body        []byte
		contentType string
	}{
		"OneByteMore":   {append(append([]byte(nil), body...), 'x'), stampduty.MimePDF},
		"OneByteLess":   {body[:len(body)-1], stampduty.MimePDF},
		"OtherType":     {body, stampduty.MimePNG},
		"NoType":        {body, ""},
		"Empty":         {nil, stampduty.MimePDF},
		"TwentyMiBMore": {bytes.Repeat([]byte{'x'}, 20<<20), stampduty.MimePDF},
	} {
		if got := send(req.URL, tc.body, tc.contentType); got != http.StatusForbidden {
			t.Errorf("%s: PUT = %d, want 403 from S3", name, got)
		}
	}
	if _, _, err := s.Stat(ctx, key); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
		t.Fatalf("Stat after refused uploads = %v, want ENOTFOUND", err)
	}
	t.Run("ErrExpired", func(t *testing.T) {
		client := locals3.Client(endpoint, accessKey, secret, region)
		p := s3.NewPresignClient(client, func(o *s3.PresignOptions) { o.Presigner = earlier{16 * time.Minute} })
		old, err := p.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
			ContentType: aws.String(stampduty.MimePDF), ContentLength: aws.Int64(int64(len(body)))}, s3.WithPresignExpires(files.URLLifetime))
		if err != nil {
			t.Fatal(err)
		}
		if got := send(old.URL, body, stampduty.MimePDF); got != http.StatusForbidden {
			t.Errorf("expired: PUT = %d, want 403", got)
		}
	})
	if got := send(req.URL, body, stampduty.MimePDF); got != http.StatusOK {
		t.Fatalf("the declared file: PUT = %d, want 200", got)
	}
	size, mime, err := s.Stat(ctx, key)
	if err != nil || size != int64(len(body)) || mime != stampduty.MimePDF {
		t.Errorf("Stat = %d %q %v", size, mime, err)
	}
	final := orders.DocumentPrefix + "o9/f1"
	if err := s.Copy(ctx, key, final, stampduty.MimePDF); err != nil {
		t.Fatal(err)
	}
	head, n, sum, err := s.Digest(ctx, final)
	if err != nil || n != int64(len(body)) || sum != sha256.Sum256(body) || string(head) != string(body[:stampduty.SniffLength]) {
		t.Errorf("Digest = %d bytes, %x, %v", n, sum, err)
	}
	if _, _, _, err := s.Digest(ctx, orders.DocumentPrefix+"o9/none"); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
		t.Errorf("Digest of nothing = %v, want ENOTFOUND", err)
	}
}

// versions counts the versions and delete markers of key.
func versions(t *testing.T, key string) int {
	t.Helper()
	out, err := locals3.Client(endpoint, accessKey, secret, region).ListObjectVersions(context.Background(),
		&s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range out.Versions {
		if aws.ToString(v.Key) == key {
			n++
		}
	}
	for _, m := range out.DeleteMarkers {
		if aws.ToString(m.Key) == key {
			n++
		}
	}
	return n
}

// earlier is a presigner that signs as if it were d ago.
type earlier struct{ d time.Duration }

func (e earlier) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string,
	signingTime time.Time, optFns ...func(*v4.SignerOptions)) (string, http.Header, error) {
	return v4.NewSigner().PresignHTTP(ctx, creds, r, payloadHash, service, region, signingTime.Add(-e.d), optFns...)
}
