package files_test

import (
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
	"stampduty/shared/files/locals3"
	"stampduty/shared/orders"
	"stampduty/shared/rules"
	"stampduty/shared/store/localdb"
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
		wd, _ := os.Getwd()
		root, err := localdb.ModuleRoot(wd)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		srv, err := locals3.Start(context.Background(), root, "", accessKey, secret, region, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "files tests:", err)
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
	if err := s.Put(ctx, key, rules.MimePDF, body, sum); err != nil {
		t.Fatal(err)
	}

	t.Run("URLDownloadsTheFileAsNamed", func(t *testing.T) {
		u, err := s.URL(ctx, key, "lease (1).pdf", rules.MimePDF)
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
		if got, want := h.Get("Content-Type"), rules.MimePDF; got != want {
			t.Errorf("Content-Type = %q, want %q", got, want)
		}
		q, _ := url.ParseQuery(strings.SplitN(u, "?", 2)[1])
		if got, want := q.Get("X-Amz-Expires"), "900"; got != want {
			t.Errorf("X-Amz-Expires = %s, want %s (15 minutes)", got, want)
		}
	})
	t.Run("ErrTamperedURL", func(t *testing.T) {
		u, _ := s.URL(ctx, key, "a.pdf", rules.MimePDF)
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
		if _, err := files.Open(env).URL(ctx, key, "a.pdf", rules.MimePDF); err != nil {
			t.Fatalf("URL with S3 unreachable: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("URL took %v", d)
		}
	})
	t.Run("ErrChecksumMismatchStoresNothing", func(t *testing.T) {
		bad := sum
		bad[0] ^= 1
		err := s.Put(ctx, orders.DocumentPrefix+"o1/f3", rules.MimePDF, body, bad)
		if rules.ErrorCode(err) != rules.EINTERNAL {
			t.Fatalf("Put with a wrong SHA-256 = %v, want EINTERNAL", err)
		}
		u, _ := s.URL(ctx, orders.DocumentPrefix+"o1/f3", "a.pdf", rules.MimePDF)
		if status, _, _ := get(t, u); status != http.StatusNotFound {
			t.Errorf("the refused object: GET = %d, want 404", status)
		}
	})
	t.Run("ErrWrongCredentials", func(t *testing.T) {
		err := open(t, accessKey, "wrong").Put(ctx, orders.DocumentPrefix+"o1/f4", rules.MimePDF, body, sum)
		if rules.ErrorCode(err) != rules.EINTERNAL {
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
		err := files.Open(env).Put(ctx, orders.DocumentPrefix+"o1/f5", rules.MimePDF, body, sum)
		if rules.ErrorCode(err) != rules.EUNAVAILABLE || rules.ErrorMessage(err) != "Service Unavailable" {
			t.Errorf("Put with S3 down = %v (%s), want EUNAVAILABLE", err, rules.ErrorCode(err))
		}
	})
	t.Run("DeleteRemoves", func(t *testing.T) {
		k := orders.CertificatePrefix + "o1/f6"
		if err := s.Put(ctx, k, rules.MimePDF, body, sum); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
		u, _ := s.URL(ctx, k, "a.pdf", rules.MimePDF)
		if status, _, _ := get(t, u); status != http.StatusNotFound {
			t.Errorf("deleted object: GET = %d, want 404", status)
		}
	})
}

// earlier is a presigner that signs as if it were d ago.
type earlier struct{ d time.Duration }

func (e earlier) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string,
	signingTime time.Time, optFns ...func(*v4.SignerOptions)) (string, http.Header, error) {
	return v4.NewSigner().PresignHTTP(ctx, creds, r, payloadHash, service, region, signingTime.Add(-e.d), optFns...)
}
