package specimen

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sample is a test order's values: Indian names with the diacritics of their
// romanisation, a purpose with an ampersand, and made-up references.
func sample() Certificate {
	return Certificate{
		FirstPartyName:    "Śrīnivās Nāgarāja Iyer",
		SecondPartyName:   "Lakshmī Venkataraman & Sons Pvt. Ltd.",
		Purpose:           "Agreement or its Records or Memorandum — Leave and License",
		State:             "Karnataka",
		Amount:            "500",
		CertificateNumber: "IN-KA00004821390751T",
		UniqueDocRef:      "SPECIMEN-KA-3F9A0C1B22D4E5F6",
		OrderDocumentID:   "a1b2c3d4e5f6g7h8i9j0k1l2",
		Paper:             2,
		Papers:            3,
	}
}

// poppler returns the path of a poppler-utils program (pdftotext, pdfinfo):
// $PDFTOTEXT's directory when set, else /usr/bin. Missing, it skips with
// the install command, and fails under CI=true (CI installs it: make test
// needs make poppler).
func poppler(t *testing.T, name string) string {
	t.Helper()
	dir := "/usr/bin"
	if p := os.Getenv("PDFTOTEXT"); p != "" {
		dir = filepath.Dir(p)
	}
	exe := filepath.Join(dir, name)
	if _, err := os.Stat(exe); err != nil {
		msg := "specimen: " + exe + " is missing: run `make poppler` (as root: apt-get install --no-install-recommends poppler-utils), or set PDFTOTEXT to a pdftotext binary; with CI=true this fails"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return exe
}

// read runs a poppler program on pdf and returns what it printed.
func read(t *testing.T, exe string, pdf []byte, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "specimen.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	args = append(args, path)
	if filepath.Base(exe) == "pdftotext" {
		args = append(args, "-") // to standard output
	}
	cmd := exec.Command(exe, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("%s: %v\n%s", exe, err, stderr.String())
	}
	return string(out)
}

// TestPDFOpensInPdftotext reads a made specimen with poppler's pdftotext,
// as a reader would: one page, the SPECIMEN banner on a line of its own at
// the top and the foot, the diagonal watermark, and every value of the order
// as it was given (the em dash and the names' diacritics included) beside
// its label. pdftotext -raw keeps the content's order: the watermark (drawn
// first, one letter per line as it is rotated), then the page from the top.
func TestPDFOpensInPdftotext(t *testing.T) {
	pdftotext := poppler(t, "pdftotext")
	c := sample()
	pdf, err := PDF(c)
	if err != nil {
		t.Fatalf("PDF: %v", err)
	}
	t.Run("OnePage", func(t *testing.T) {
		info := read(t, poppler(t, "pdfinfo"), pdf)
		if !regexp.MustCompile(`(?m)^Pages:\s+1$`).MatchString(info) {
			t.Errorf("pdfinfo says:\n%s\nwant Pages: 1", info)
		}
	})
	text := read(t, pdftotext, pdf, "-raw")
	lines := strings.Split(strings.TrimSpace(text), "\n")
	t.Run("SaysSpecimenOnItsFace", func(t *testing.T) {
		var at []int
		for i, l := range lines {
			if strings.TrimSpace(l) == Banner {
				at = append(at, i)
			}
		}
		if len(at) != 2 || at[1] != len(lines)-1 {
			t.Errorf("pdftotext shows the line %q at lines %v, want it twice, the foot being the last:\n%s", Banner, at, text)
		}
	})
	t.Run("WatermarkedSpecimen", func(t *testing.T) {
		if got, want := strings.Join(lines[:min(8, len(lines))], ""), "SPECIMEN"; got != want {
			t.Errorf("pdftotext's first lines make %q, want the watermark %q:\n%s", got, want, text)
		}
	})
	t.Run("ShowsEveryValue", func(t *testing.T) {
		flat := strings.Join(strings.Fields(text), " ")
		for _, v := range []string{
			"First party " + c.FirstPartyName,
			"Second party " + c.SecondPartyName,
			"Purpose " + c.Purpose,
			"State " + c.State,
			"Stamp duty INR " + c.Amount,
			"Certificate number " + c.CertificateNumber,
			"Unique doc ref " + c.UniqueDocRef,
			"Order " + c.OrderDocumentID,
			"Paper 2 of 3",
		} {
			if !strings.Contains(flat, v) {
				t.Errorf("pdftotext shows no %q:\n%s", v, text)
			}
		}
	})
	t.Run("WrapsALongValueWithoutLosingAWord", func(t *testing.T) {
		c := sample()
		c.Purpose = strings.TrimSpace(strings.Repeat("Conveyance of immovable property in a municipal area ", 4))
		pdf, err := PDF(c)
		if err != nil {
			t.Fatalf("PDF: %v", err)
		}
		text := read(t, pdftotext, pdf, "-raw")
		if n := strings.Count(text, "\n"); n < len(lines)+2 {
			t.Errorf("the long purpose took %d lines in all, want it wrapped over 3 or more", n)
		}
		if got, want := strings.Join(strings.Fields(text), " "), "Purpose "+c.Purpose+" State"; !strings.Contains(got, want) {
			t.Errorf("pdftotext shows:\n%s\nwant %q", text, want)
		}
	})
}

func TestPDF(t *testing.T) {
	t.Run("SameValuesSameBytes", func(t *testing.T) {
		a, err := PDF(sample())
		if err != nil {
			t.Fatal(err)
		}
		b, err := PDF(sample())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Error("two PDFs of the same values differ: a retried step would store another file")
		}
		if !bytes.HasPrefix(a, []byte("%PDF-")) {
			t.Errorf("starts %q, want %%PDF-", a[:min(len(a), 8)])
		}
	})
	t.Run("RefusesTextTheFontCannotDraw", func(t *testing.T) {
		for name, v := range map[string]string{"Devanagari": "श्रीनिवास", "Tamil": "லக்ஷ்மி", "Emoji": "Priya 🙂", "Control": "Priya\x07"} {
			t.Run(name, func(t *testing.T) {
				c := sample()
				c.FirstPartyName = v
				if _, err := PDF(c); !errors.Is(err, ErrUnsupportedText) {
					t.Errorf("PDF with first party %q: err = %v, want ErrUnsupportedText", v, err)
				}
			})
		}
	})
}

// BenchmarkPDF makes one specimen per iteration and reports its size.
func BenchmarkPDF(b *testing.B) {
	var n int
	for b.Loop() {
		pdf, err := PDF(sample())
		if err != nil {
			b.Fatal(err)
		}
		n = len(pdf)
	}
	b.ReportMetric(float64(n), "bytes/pdf")
}
