package stampduty

import (
	"fmt"
	"net/http"
	"strings"
)

// MaxFileSize is the largest file a caller or an operator may upload in
// a request's body: 4 MiB.
const MaxFileSize = 4 << 20

// The largest files uploaded straight to the bucket (lifecycle.md "Large
// files: straight to S3"): a caller's document 20 MiB, a certificate 10 MiB.
const (
	MaxDirectDocumentSize    = 20 << 20
	MaxDirectCertificateSize = 10 << 20
)

// The media types of stored files.
const (
	MimePDF  = "application/pdf"
	MimePNG  = "image/png"
	MimeJPEG = "image/jpeg"
)

// FileKind is what an uploaded file is for, which decides the types it may
// have and its default name.
type FileKind int

const (
	// Document is a caller's document: PDF, PNG or JPEG.
	Document FileKind = iota
	// Certificate is an e-stamp certificate: PDF only.
	Certificate
)

// extensions maps each accepted media type to its file-name extension.
var extensions = map[string]string{MimePDF: "pdf", MimePNG: "png", MimeJPEG: "jpg"}

// accepts reports whether kind k may have media type mime.
func (k FileKind) accepts(mime string) bool {
	if k == Certificate {
		return mime == MimePDF
	}
	_, ok := extensions[mime]
	return ok
}

// fileNameChars are the characters of a file name: ASCII letters, digits,
// space and . _ - ( ).
var fileNameChars = charTable(" ._-()")

// Upload is a file as a request brings it: its declared Content-Type, the
// name query parameter (nil when absent) and its bytes.
type Upload struct {
	ContentType string
	Name        *string
	Body        []byte
}

// Check applies lifecycle.md's rules for a file of kind k and returns its
// media type and name:
//
//   - an empty body is EINVALID; one over MaxFileSize is ETOOLARGE;
//   - a name, when given, is 1–100 characters of letters, digits, space and
//     . _ - ( ) (EINVALID otherwise); the default is document.<ext> or
//     certificate.pdf;
//   - the type is sniffed from the bytes (the WHATWG algorithm of
//     net/http.DetectContentType), must be one kind k accepts and must be
//     the declared Content-Type (its parameters aside): EUNSUPPORTED
//     otherwise.
func (k FileKind) Check(u Upload) (mime, name string, err error) {
	if len(u.Body) == 0 {
		return "", "", Invalid([]FieldError{{Path: "body", Message: "the file must not be empty"}})
	}
	if len(u.Body) > MaxFileSize {
		return "", "", FileTooLarge()
	}
	if err := checkFileName(u.Name); err != nil {
		return "", "", err
	}
	sniffed, _, _ := strings.Cut(http.DetectContentType(u.Body), ";")
	declared, _, _ := strings.Cut(u.ContentType, ";")
	declared = strings.ToLower(strings.TrimSpace(declared))
	if !k.accepts(sniffed) || declared != sniffed {
		return "", "", Errorf(EUNSUPPORTED, "The file must be %s, sent with its own Content-Type.", k.types())
	}
	return sniffed, k.name(u.Name, sniffed), nil
}

// MaxDirect is the largest file of kind k uploaded straight to the bucket.
func (k FileKind) MaxDirect() int64 {
	if k == Certificate {
		return MaxDirectCertificateSize
	}
	return MaxDirectDocumentSize
}

// Declared is a file a client is about to upload straight to the bucket,
// as it describes it: {"name", "mime", "size"}.
type Declared struct {
	Name *string
	Mime string
	Size int64
}

// CheckDeclared applies the rules of Check to a file described before it
// is sent (the bytes are sniffed when it is attached, Sniff): the size is
// 1 byte to k.MaxDirect() (EINVALID, ETOOLARGE), the name as in Check, and
// mime one kind k accepts (EUNSUPPORTED). It returns the media type
// (lower-case, without parameters) and the name.
func (k FileKind) CheckDeclared(d Declared) (mime, name string, err error) {
	if d.Size < 1 {
		return "", "", Invalid([]FieldError{{Path: "size", Message: "size must be a whole number of bytes, at least 1"}})
	}
	if d.Size > k.MaxDirect() {
		return "", "", Errorf(ETOOLARGE, "The file is larger than %d bytes (%d MiB).", k.MaxDirect(), k.MaxDirect()>>20)
	}
	if err := checkFileName(d.Name); err != nil {
		return "", "", err
	}
	mime, _, _ = strings.Cut(d.Mime, ";")
	mime = strings.ToLower(strings.TrimSpace(mime))
	if !k.accepts(mime) {
		return "", "", Errorf(EUNSUPPORTED, "The file must be %s.", k.types())
	}
	return mime, k.name(d.Name, mime), nil
}

// SniffLength is how many leading bytes of a file Sniff needs.
const SniffLength = 512

// Sniff checks that a file whose first bytes are head is of media type
// mime as net/http.DetectContentType sniffs it: EUNSUPPORTED otherwise.
func (k FileKind) Sniff(head []byte, mime string) error {
	sniffed, _, _ := strings.Cut(http.DetectContentType(head), ";")
	if !k.accepts(sniffed) || sniffed != mime {
		return Errorf(EUNSUPPORTED, "The file must be %s, as declared when the upload was made.", k.types())
	}
	return nil
}

// checkFileName applies the rule of a file's name, when one is given.
func checkFileName(name *string) error {
	if name != nil {
		if n := len([]rune(*name)); n < 1 || n > 100 || !onlyChars(*name, fileNameChars) {
			return Invalid([]FieldError{{Path: "name",
				Message: "name must be 1 to 100 characters of letters, digits, space and . _ - ( )"}})
		}
	}
	return nil
}

// name is a file's name: the one given, else document.<ext> or
// certificate.pdf.
func (k FileKind) name(given *string, mime string) string {
	switch {
	case given != nil:
		return *given
	case k == Certificate:
		return "certificate.pdf"
	default:
		return "document." + extensions[mime]
	}
}

// FileTooLarge is the error of a file over MaxFileSize.
func FileTooLarge() error {
	return Errorf(ETOOLARGE, "The file is larger than %d bytes (4 MiB).", MaxFileSize)
}

// types names the media types kind k accepts, for messages.
func (k FileKind) types() string {
	if k == Certificate {
		return MimePDF
	}
	return fmt.Sprintf("%s, %s or %s", MimePDF, MimePNG, MimeJPEG)
}
