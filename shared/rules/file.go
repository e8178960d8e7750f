package rules

import (
	"fmt"
	"net/http"
	"strings"
)

// MaxFileSize is the largest file a caller or an operator may upload: 4 MiB.
const MaxFileSize = 4 << 20

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
	if u.Name != nil {
		if n := len([]rune(*u.Name)); n < 1 || n > 100 || !onlyChars(*u.Name, fileNameChars) {
			return "", "", Invalid([]FieldError{{Path: "name",
				Message: "name must be 1 to 100 characters of letters, digits, space and . _ - ( )"}})
		}
	}
	sniffed, _, _ := strings.Cut(http.DetectContentType(u.Body), ";")
	declared, _, _ := strings.Cut(u.ContentType, ";")
	declared = strings.ToLower(strings.TrimSpace(declared))
	if !k.accepts(sniffed) || declared != sniffed {
		return "", "", Errorf(EUNSUPPORTED, "The file must be %s, sent with its own Content-Type.", k.types())
	}
	switch {
	case u.Name != nil:
		name = *u.Name
	case k == Certificate:
		name = "certificate.pdf"
	default:
		name = "document." + extensions[sniffed]
	}
	return sniffed, name, nil
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
