package stampduty

import (
	"bytes"
	"strings"
	"testing"
)

var (
	pdfBytes  = []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n%%EOF\n")
	pngBytes  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")
	jpegBytes = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
)

func TestFileCheck(t *testing.T) {
	name := func(s string) *string { return &s }
	tests := []struct {
		name               string
		kind               FileKind
		upload             Upload
		code               Code
		wantMime, wantName string
	}{
		{name: "DocumentPDF", kind: Document, upload: Upload{ContentType: "application/pdf", Body: pdfBytes},
			wantMime: MimePDF, wantName: "document.pdf"},
		{name: "DocumentPNGNamed", kind: Document, upload: Upload{ContentType: "image/png", Name: name("Lease (1).png"), Body: pngBytes},
			wantMime: MimePNG, wantName: "Lease (1).png"},
		{name: "DocumentJPEG", kind: Document, upload: Upload{ContentType: "IMAGE/JPEG; charset=binary", Body: jpegBytes},
			wantMime: MimeJPEG, wantName: "document.jpg"},
		{name: "CertificatePDF", kind: Certificate, upload: Upload{ContentType: "application/pdf", Body: pdfBytes},
			wantMime: MimePDF, wantName: "certificate.pdf"},
		{name: "ErrPNGSentAsPDF", kind: Document, upload: Upload{ContentType: "application/pdf", Body: pngBytes}, code: EUNSUPPORTED},
		{name: "ErrCertificatePNG", kind: Certificate, upload: Upload{ContentType: "image/png", Body: pngBytes}, code: EUNSUPPORTED},
		{name: "ErrText", kind: Document, upload: Upload{ContentType: "text/plain", Body: []byte("hello")}, code: EUNSUPPORTED},
		{name: "ErrNoContentType", kind: Document, upload: Upload{Body: pdfBytes}, code: EUNSUPPORTED},
		{name: "ErrEmpty", kind: Document, upload: Upload{ContentType: "application/pdf"}, code: EINVALID},
		{name: "ErrTooLarge", kind: Certificate, upload: Upload{ContentType: "application/pdf",
			Body: append(append([]byte(nil), pdfBytes...), bytes.Repeat([]byte{' '}, MaxFileSize)...)}, code: ETOOLARGE},
		{name: "ExactlyTheLimit", kind: Certificate, upload: Upload{ContentType: "application/pdf",
			Body: append(append([]byte(nil), pdfBytes...), bytes.Repeat([]byte{' '}, MaxFileSize-len(pdfBytes))...)},
			wantMime: MimePDF, wantName: "certificate.pdf"},
		{name: "ErrEmptyName", kind: Document, upload: Upload{ContentType: "application/pdf", Name: name(""), Body: pdfBytes}, code: EINVALID},
		{name: "ErrLongName", kind: Document, upload: Upload{ContentType: "application/pdf", Name: name(strings.Repeat("a", 101)), Body: pdfBytes}, code: EINVALID},
		{name: "LongestName", kind: Document, upload: Upload{ContentType: "application/pdf", Name: name(strings.Repeat("a", 100)), Body: pdfBytes},
			wantMime: MimePDF, wantName: strings.Repeat("a", 100)},
		{name: "ErrSlashInName", kind: Document, upload: Upload{ContentType: "application/pdf", Name: name("../etc/passwd"), Body: pdfBytes}, code: EINVALID},
		{name: "ErrUnicodeName", kind: Document, upload: Upload{ContentType: "application/pdf", Name: name("lease\u202e.pdf"), Body: pdfBytes}, code: EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mime, name, err := tt.kind.Check(tt.upload)
			if got := ErrorCode(err); got != tt.code {
				t.Fatalf("Check: %v (code %q), want code %q", err, got, tt.code)
			}
			if mime != tt.wantMime || name != tt.wantName {
				t.Errorf("Check = %q, %q, want %q, %q", mime, name, tt.wantMime, tt.wantName)
			}
		})
	}
}
