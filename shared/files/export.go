package files

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ExportPrefix is where exports (an account's entries as CSV) are written:
// the bucket's lifecycle removes them a day later; the address an export
// answers with works for ExportLifetime.
const ExportPrefix = "exports/"

// ExportLifetime is how long an export's pre-signed address works: it is
// followed at once, by the redirect that hands it out.
const ExportLifetime = 5 * time.Minute

// ExportPartSize is the size of an export's upload parts: S3's smallest
// part but the last. An export never holds more than one part in memory.
const ExportPartSize = 5 << 20

// ExportKey returns a new export's key: ExportPrefix, a random id, and the
// file's extension (no personal data in a key).
func ExportKey(ext string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return ExportPrefix + hex.EncodeToString(b[:]) + ext
}

// Export stores the object key as write produces it, and returns a
// pre-signed address that downloads it for ExportLifetime as an attachment
// named name. The bytes go up as they come: a multipart upload of
// ExportPartSize parts once a part is full (a file smaller than one part
// is one PutObject), so that a file of any size passes through a
// function's memory one part at a time. When write or a call fails, the
// upload is aborted and nothing is stored.
func (s *Store) Export(ctx context.Context, key, mediaType, name string, write func(io.Writer) error) (string, error) {
	up := &exportUpload{ctx: ctx, s: s, key: key, mediaType: mediaType}
	err := write(up)
	if err == nil {
		err = up.finish()
	}
	if err != nil {
		return "", errors.Join(err, up.abort())
	}
	return s.presignGet(ctx, key, name, mediaType, ExportLifetime)
}

// exportUpload is an Export's writer: it buffers a part and uploads each
// full one.
type exportUpload struct {
	ctx       context.Context
	s         *Store
	key       string
	mediaType string
	buf       bytes.Buffer
	id        *string // the multipart upload's, once begun
	parts     []types.CompletedPart
}

// Write buffers p, uploading each full part.
func (u *exportUpload) Write(p []byte) (int, error) {
	n, _ := u.buf.Write(p)
	for u.buf.Len() >= ExportPartSize {
		if err := u.part(u.buf.Next(ExportPartSize)); err != nil {
			return n, err
		}
	}
	return n, nil
}

// part uploads b as the next part, beginning the upload first.
func (u *exportUpload) part(b []byte) error {
	if u.id == nil {
		out, err := u.s.client.CreateMultipartUpload(u.ctx, &s3.CreateMultipartUploadInput{
			Bucket: aws.String(u.s.bucket), Key: aws.String(u.key), ContentType: aws.String(u.mediaType)})
		if err != nil {
			return fail("CreateMultipartUpload", err)
		}
		u.id = out.UploadId
	}
	num := int32(len(u.parts) + 1)
	out, err := u.s.client.UploadPart(u.ctx, &s3.UploadPartInput{Bucket: aws.String(u.s.bucket), Key: aws.String(u.key),
		UploadId: u.id, PartNumber: aws.Int32(num), Body: bytes.NewReader(b), ContentLength: aws.Int64(int64(len(b)))})
	if err != nil {
		return fail("UploadPart", err)
	}
	u.parts = append(u.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num)})
	return nil
}

// finish stores what is left: one PutObject when no part was uploaded,
// else the last part and the upload's completion.
func (u *exportUpload) finish() error {
	if u.id == nil {
		_, err := u.s.client.PutObject(u.ctx, &s3.PutObjectInput{Bucket: aws.String(u.s.bucket), Key: aws.String(u.key),
			Body: bytes.NewReader(u.buf.Bytes()), ContentLength: aws.Int64(int64(u.buf.Len())), ContentType: aws.String(u.mediaType)})
		if err != nil {
			return fail("PutObject", err)
		}
		return nil
	}
	if u.buf.Len() > 0 {
		if err := u.part(u.buf.Bytes()); err != nil {
			return err
		}
	}
	_, err := u.s.client.CompleteMultipartUpload(u.ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(u.s.bucket), Key: aws.String(u.key),
		UploadId: u.id, MultipartUpload: &types.CompletedMultipartUpload{Parts: u.parts}})
	if err != nil {
		return fail("CompleteMultipartUpload", err)
	}
	return nil
}

// abort drops a begun multipart upload (the bucket's lifecycle drops one
// whose abort fails, a day later).
func (u *exportUpload) abort() error {
	if u.id == nil {
		return nil
	}
	_, err := u.s.client.AbortMultipartUpload(context.WithoutCancel(u.ctx), &s3.AbortMultipartUploadInput{
		Bucket: aws.String(u.s.bucket), Key: aws.String(u.key), UploadId: u.id})
	if err != nil {
		return fail("AbortMultipartUpload", err)
	}
	return nil
}
