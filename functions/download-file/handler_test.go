package main

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"testing"
	"time"

	"stampduty/shared/files"
	"stampduty/shared/links"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
)

func TestMain(m *testing.M) { functest.Main(m) }

// A link the service made is answered 302 to an address that downloads the
// file, with its name and type, for a minute at most; one expired, altered
// or made under another key is 403 in the envelope, and sends nowhere.
func TestDownloadFile(t *testing.T) {
	s := functest.New(t, "DownloadFileFunction", wire)
	ctx := context.Background()
	pdf := functest.PDF(0)
	const key = "certificates/k3v9xq2m7p4r8t1w5y6z0abc/m2n8b4v6c1x3z5l7k9j0h2g4"
	if err := files.New(s.Env.S3(), s.Env.Table("FilesBucket")).Put(ctx, key, stampduty.MimePDF, pdf, sha256.Sum256(pdf)); err != nil {
		t.Fatal(err)
	}
	signer, err := links.NewSigner([]byte(localdb.LinkKey))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	link := links.Link{Key: key, Name: "stamp paper (1).pdf", Mime: stampduty.MimePDF, Expires: now.Add(15 * time.Minute)}
	get := func(token string) functest.Response {
		t.Helper()
		return s.Invoke(functest.Request("GET", links.Path+token, "", nil, ""))
	}

	t.Run("Redirects", func(t *testing.T) {
		r := get(signer.Token(link))
		if got, want := r.Status, http.StatusFound; got != want {
			t.Fatalf("status %d, want %d: %s", got, want, r.Body)
		}
		if got, want := r.Headers["Cache-Control"], "no-store"; got != want {
			t.Errorf("Cache-Control %q, want %q", got, want)
		}
		to := r.Headers["Location"]
		if !strings.Contains(to, "X-Amz-Expires=60&") {
			t.Errorf("Location %.200s: want an address valid for 60 s", to)
		}
		resp, err := http.Get(to)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if got, want := resp.StatusCode, http.StatusOK; got != want {
			t.Fatalf("GET Location: %d, want %d", got, want)
		}
		if got, want := resp.Header.Get("Content-Disposition"), `attachment; filename="stamp paper (1).pdf"`; got != want {
			t.Errorf("Content-Disposition %q, want %q", got, want)
		}
		if got, want := resp.Header.Get("Content-Type"), stampduty.MimePDF; got != want {
			t.Errorf("Content-Type %q, want %q", got, want)
		}
	})
	t.Run("NearItsEndTheAddressEndsWithIt", func(t *testing.T) {
		soon := link
		soon.Expires = now.Add(20 * time.Second)
		r := get(signer.Token(soon))
		if got := r.Headers["Location"]; r.Status != http.StatusFound || strings.Contains(got, "X-Amz-Expires=60&") {
			t.Errorf("status %d, Location %.200s: want an address that ends with the link", r.Status, got)
		}
	})
	other, err := links.NewSigner([]byte(strings.Repeat("x", 32)))
	if err != nil {
		t.Fatal(err)
	}
	expired := link
	expired.Expires = now.Add(-time.Second)
	tok := signer.Token(link)
	for name, token := range map[string]string{
		"ErrExpired":    signer.Token(expired),
		"ErrAnotherKey": other.Token(link),
		"ErrAltered":    tok[:40] + map[bool]string{true: "B", false: "A"}[tok[40] == 'A'] + tok[41:],
		"ErrNotAToken":  "not-a-token",
	} {
		t.Run(name, func(t *testing.T) {
			r := get(token)
			if got, want := r.Status, http.StatusForbidden; got != want {
				t.Fatalf("status %d, want %d: %s", got, want, r.Body)
			}
			if r.Headers["Location"] != "" || !strings.Contains(r.Error(t).Error.Message, "download link has expired") {
				t.Errorf("Location %q, body %s", r.Headers["Location"], r.Body)
			}
		})
	}
}

// A path API Gateway delivers with a control character in it is answered
// 404 in the envelope (issue 17), as on every route.
func TestHostilePaths(t *testing.T) {
	functest.CheckHostilePaths(t, functest.New(t, "DownloadFileFunction", wire))
}
