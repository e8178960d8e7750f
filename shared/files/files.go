// Package files keeps the service's files (callers' documents, e-stamp
// certificates) in one private S3 bucket, and makes the pre-signed addresses
// they are downloaded from. It is the only code that imports the S3 SDK.
//
// Objects are written once under keys made of random documentIds (no
// personal data: a file's name is stored in the order, never in the key),
// with the SHA-256 of their bytes, which S3 checks on arrival. Pre-signing
// is local (a signature over the request; no network call), and an address
// works for 15 minutes.
package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"stampduty/shared/config"
	"stampduty/shared/links"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/tracing"
)

// URLLifetime is how long a pre-signed download address works.
const URLLifetime = orders.URLLifetime

// attemptTimeout bounds one S3 call: a 4 MiB upload within Lambda's network.
const attemptTimeout = 5 * time.Second

// Store is the files bucket.
type Store struct {
	client  *s3.Client
	presign *s3.PresignClient
	bucket  string
	links   *links.Signer // nil: Sign writes S3's addresses
}

// Open returns the bucket named by FILES_BUCKET, reached with the Lambda
// environment's region and credentials, or at S3_ENDPOINT (path-style
// addresses, for a local S3-compatible server) when that is set in a local
// Lambda runtime (set elsewhere, it fails the init: config.Env.Endpoint).
// Its calls are traced when the function is built with tracing (package
// tracing).
func Open(env *config.Env) *Store {
	opts := s3.Options{
		Region: env.Require("AWS_REGION"),
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(
			env.Require("AWS_ACCESS_KEY_ID"), env.Require("AWS_SECRET_ACCESS_KEY"), env.Get("AWS_SESSION_TOKEN"))),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.MaxBackoff = 300 * time.Millisecond
		}),
		HTTPClient: &http.Client{Timeout: attemptTimeout},
		// The SHA-256 is sent with each upload (PutObject's ChecksumSHA256);
		// no other checksum is computed.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if ep := env.Endpoint("S3_ENDPOINT"); ep != "" {
		opts.BaseEndpoint = aws.String(ep)
		opts.UsePathStyle = true
	}
	tracing.Instrument(&opts.APIOptions)
	return New(s3.New(opts), env.Require("FILES_BUCKET"))
}

// Links returns the signer of the service's download links, under the key
// FILES_LINK_KEY holds (at least 32 bytes; what is missing or too short
// fails the init).
func Links(env *config.Env) *links.Signer {
	key := env.Require("FILES_LINK_KEY")
	signer, err := links.NewSigner([]byte(key))
	if err != nil && key != "" {
		env.Fail(fmt.Errorf("FILES_LINK_KEY: %w", err))
	}
	return signer
}

// WithLinks returns s making its download addresses the service's own
// links (package links) under signer whenever the request being served is
// known (links.Base), and following them (Follow).
func (s *Store) WithLinks(signer *links.Signer) *Store {
	c := *s
	c.links = signer
	return &c
}

// New returns the store of bucket through client.
func New(client *s3.Client, bucket string) *Store {
	return &Store{client: client, presign: s3.NewPresignClient(client), bucket: bucket}
}

// Put stores body under key as a file of media type mime. sum is the
// SHA-256 of body; S3 refuses the object if the bytes that arrive differ.
func (s *Store) Put(ctx context.Context, key, mime string, body []byte, sum [32]byte) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:         aws.String(s.bucket),
		Key:            aws.String(key),
		Body:           bytes.NewReader(body),
		ContentLength:  aws.Int64(int64(len(body))),
		ContentType:    aws.String(mime),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum[:])),
	})
	if err != nil {
		return fail("PutObject", err)
	}
	return nil
}

// URL returns a pre-signed address that downloads the file stored under
// key for URLLifetime, as an attachment named name. It makes no network
// call.
func (s *Store) URL(ctx context.Context, key, name, mediaType string) (string, error) {
	return s.presignGet(ctx, key, name, mediaType, URLLifetime)
}

func (s *Store) presignGet(ctx context.Context, key, name, mediaType string, lifetime time.Duration) (string, error) {
	req, err := s.presign.PresignGetObject(ctx, &s3.GetObjectInput{
		Bucket:                     aws.String(s.bucket),
		Key:                        aws.String(key),
		ResponseContentDisposition: aws.String(mime.FormatMediaType("attachment", map[string]string{"filename": name})),
		ResponseContentType:        aws.String(mediaType),
	}, s3.WithPresignExpires(lifetime))
	if err != nil {
		return "", stampduty.Internal(fmt.Errorf("presign %s: %w", key, err))
	}
	return req.URL, nil
}

// Sign fills in the download address of each file of o: a link of the
// service's own (links.URL, to the API the request came to) when s has a
// signer and ctx a request's base, else a pre-signed S3 address.
func (s *Store) Sign(ctx context.Context, o *stampduty.Order) error {
	base := links.Base(ctx)
	expires := time.Now().Add(URLLifetime)
	for _, f := range o.Files() {
		if s.links != nil && base != "" {
			f.URL = s.links.URL(base, links.Link{Key: f.Key, Name: f.Name, Mime: f.Mime, Expires: expires})
			continue
		}
		u, err := s.URL(ctx, f.Key, f.Name, f.Mime)
		if err != nil {
			return err
		}
		f.URL = u
	}
	return nil
}

// followLifetime bounds the S3 address a link redirects to: it is used at
// once, by the client following the redirect.
const followLifetime = time.Minute

// Follow returns the pre-signed S3 address that the link token stands for
// at now, valid for a minute or what is left of the link's life if less.
// A token s did not sign, altered or expired is EFORBIDDEN: the link does
// not work, as an expired S3 address does not (S3 answers 403 too).
func (s *Store) Follow(ctx context.Context, token string, now time.Time) (string, error) {
	if s.links == nil {
		return "", stampduty.Internal(errors.New("follow a download link: no FILES_LINK_KEY"))
	}
	l, err := s.links.Open(token, now)
	if err != nil {
		return "", stampduty.Errorf(stampduty.EFORBIDDEN, "Forbidden. This download link has expired or is not one of this service's: read the order again for a fresh one")
	}
	lifetime := min(followLifetime, l.Expires.Sub(now).Truncate(time.Second))
	return s.presignGet(ctx, l.Key, l.Name, l.Mime, max(lifetime, time.Second))
}

// Purge removes the object under key for good: every version of it and
// every delete marker (the bucket is versioned; a person's document must
// not linger as an old version). Removing a key that holds nothing does
// nothing. It lists the versions under key as a prefix and removes those
// of key itself.
func (s *Store) Purge(ctx context.Context, key string) error {
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(s.bucket), Prefix: aws.String(key)}
	for {
		out, err := s.client.ListObjectVersions(ctx, in)
		if err != nil {
			return fail("ListObjectVersions", err)
		}
		var ids []*string
		for _, v := range out.Versions {
			if aws.ToString(v.Key) == key {
				ids = append(ids, v.VersionId)
			}
		}
		for _, m := range out.DeleteMarkers {
			if aws.ToString(m.Key) == key {
				ids = append(ids, m.VersionId)
			}
		}
		for _, id := range ids {
			if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key), VersionId: id}); err != nil {
				return fail("DeleteObject", err)
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			return nil
		}
		in.KeyMarker, in.VersionIdMarker = out.NextKeyMarker, out.NextVersionIdMarker
	}
}

// PresignPut returns a PUT request (its method, address and the headers it
// must carry, all of them signed), valid for URLLifetime, that stores a
// file of media type mime and exactly size bytes under key. Content-Type
// and Content-Length are signed headers, so S3 refuses the request
// (403 SignatureDoesNotMatch) when either differs; a request after the
// lifetime is refused too. It makes no network call.
func (s *Store) PresignPut(ctx context.Context, key, mime string, size int64) (orders.Presigned, error) {
	req, err := s.presign.PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(key),
		ContentType:   aws.String(mime),
		ContentLength: aws.Int64(size),
	}, s3.WithPresignExpires(URLLifetime))
	if err != nil {
		return orders.Presigned{}, stampduty.Internal(fmt.Errorf("presign upload %s: %w", key, err))
	}
	return orders.Presigned{Method: req.Method, URL: req.URL,
		Headers: map[string]string{"Content-Type": mime, "Content-Length": strconv.FormatInt(size, 10)}}, nil
}

// Stat returns the size and media type of the object under key, or
// ENOTFOUND when there is none.
func (s *Store) Stat(ctx context.Context, key string) (int64, string, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		return 0, "", fail("HeadObject", err)
	}
	return aws.ToInt64(out.ContentLength), aws.ToString(out.ContentType), nil
}

// Copy stores a copy of the object under from under to, as media type
// mime: a copy inside S3, the bytes never pass through the function.
func (s *Store) Copy(ctx context.Context, from, to, mime string) error {
	_, err := s.client.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket:            aws.String(s.bucket),
		Key:               aws.String(to),
		CopySource:        aws.String(s.bucket + "/" + from),
		ContentType:       aws.String(mime),
		MetadataDirective: types.MetadataDirectiveReplace,
	})
	if err != nil {
		return fail("CopyObject", err)
	}
	return nil
}

// Digest reads the object under key once, as a stream (never whole in
// memory), and returns its first stampduty.SniffLength bytes (fewer for a
// shorter file), its size and its SHA-256. ENOTFOUND when there is none.
func (s *Store) Digest(ctx context.Context, key string) (head []byte, size int64, sum [32]byte, err error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		return nil, 0, sum, fail("GetObject", err)
	}
	defer out.Body.Close()
	h := sha256.New()
	head = make([]byte, stampduty.SniffLength)
	n, err := io.ReadFull(out.Body, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, 0, sum, fail("GetObject", err)
	}
	head = head[:n]
	h.Write(head)
	rest, err := io.Copy(h, out.Body)
	if err != nil {
		return nil, 0, sum, fail("GetObject", err)
	}
	copy(sum[:], h.Sum(nil))
	return head, int64(n) + rest, sum, nil
}

// fail wraps an S3 error of operation op as a rules error: no such key is
// ENOTFOUND; an answer S3 gives for the request itself (access denied, no
// such bucket) is EINTERNAL; throttling, server faults, timeouts and the network are
// EUNAVAILABLE, which a retry may cure. Callers see neither cause; keys are
// random ids, so the logged error quotes no personal data.
func fail(op string, err error) error {
	err = fmt.Errorf("s3 %s: %w", op, err)
	var api smithy.APIError
	if errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound") {
		return &stampduty.Error{Code: stampduty.ENOTFOUND, Message: "Not Found", Err: err}
	}
	if errors.As(err, &api) && api.ErrorFault() != smithy.FaultServer && api.ErrorCode() != "SlowDown" {
		return stampduty.Internal(err)
	}
	return stampduty.Unavailable(err)
}
