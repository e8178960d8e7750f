// Package links makes and reads the service's own download links: short
// signed addresses, GET /api/files/{token}, that the download-file function
// answers with a redirect to a fresh pre-signed S3 address.
//
// An S3 address signed with a Lambda's role carries the role's session
// token (about 1,400 characters; 2,277 in all): 2,000 of them made a page
// of 100 orders of 20 printed papers 6.5 MB on AWS, past Lambda's 6 MB. A
// link is about 370 characters whatever signs it, works for 15 minutes
// like the address it stands for, and cannot be guessed or altered: it is
// the file's key, name, type and expiry under an HMAC key that only the
// stack's functions hold (files/DECISIONS.md).
package links

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultKeyParameter is the SSM parameter that holds the links' key
// (template.yaml's FilesLinkKeyParameter).
const DefaultKeyParameter = "/stamp-duty/files-link-key"

// Path is where links are served: a link is base + Path + token.
const Path = "/api/files/"

// Link is what a download link names: the object's key, the name it is
// downloaded as, its media type, and until when the link works.
type Link struct {
	Key, Name, Mime string
	Expires         time.Time
}

// linkVersion is the first byte of a token, so that the format can change.
const linkVersion = 1

// macBytes is how much of the HMAC-SHA256 a token keeps: 128 bits, which
// no one guesses.
const macBytes = 16

// Signer makes and reads the tokens of download links under one secret key.
type Signer struct {
	key []byte
}

// NewSigner returns the signer of key, at least 32 bytes of a secret.
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("links: a key of %d bytes, want at least 32", len(key))
	}
	return &Signer{key: append([]byte(nil), key...)}, nil
}

// Token returns l as a token: base64url (no padding) of the version, the
// expiry (Unix seconds), each string length-prefixed, and the first
// macBytes of the HMAC-SHA256 of all that under the signer's key.
func (s *Signer) Token(l Link) string {
	b := []byte{linkVersion}
	b = binary.BigEndian.AppendUint64(b, uint64(l.Expires.Unix()))
	for _, f := range []string{l.Key, l.Name, l.Mime} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return base64.RawURLEncoding.EncodeToString(append(b, s.mac(b)...))
}

// ErrLink is the error of a token that is not one the signer made, was
// altered, or has expired: its link does not work.
var ErrLink = errors.New("not a working download link")

// Open returns the Link of token when the signer made it and it has not
// expired at now; ErrLink otherwise.
func (s *Signer) Open(token string, now time.Time) (Link, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < 1+8+macBytes || b[0] != linkVersion {
		return Link{}, ErrLink
	}
	body, mac := b[:len(b)-macBytes], b[len(b)-macBytes:]
	if !hmac.Equal(mac, s.mac(body)) {
		return Link{}, ErrLink
	}
	l := Link{Expires: time.Unix(int64(binary.BigEndian.Uint64(body[1:9])), 0)}
	rest := body[9:]
	for _, f := range []*string{&l.Key, &l.Name, &l.Mime} {
		n, k := binary.Uvarint(rest)
		if k <= 0 || uint64(len(rest)-k) < n {
			return Link{}, ErrLink
		}
		*f, rest = string(rest[k:k+int(n)]), rest[k+int(n):]
	}
	if len(rest) != 0 || !now.Before(l.Expires) {
		return Link{}, ErrLink
	}
	return l, nil
}

func (s *Signer) mac(b []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(b)
	return m.Sum(nil)[:macBytes]
}

// URL returns the link to l at base (scheme and host, and the stage's path
// when it is not the default one, without a trailing slash).
func (s *Signer) URL(base string, l Link) string { return base + Path + s.Token(l) }

type baseKey struct{}

// WithBase returns ctx carrying base, the address of the API a request came
// to, so that links made while serving it point back there.
func WithBase(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, baseKey{}, strings.TrimSuffix(base, "/"))
}

// Base returns the address WithBase put in ctx, "" when none: outside a
// request (a webhook's delivery) no link can be made.
func Base(ctx context.Context) string {
	b, _ := ctx.Value(baseKey{}).(string)
	return b
}
