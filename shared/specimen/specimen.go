// Package specimen makes the certificate PDF of a test order's paper
// (test-mode.md, "Test orders fulfil themselves"): one A4 page that says on
// its face SPECIMEN — NOT A VALID E-STAMP CERTIFICATE, large, over a
// diagonal SPECIMEN watermark, and shows the order's values.
//
// It is not in the domain (shared/stampduty links only the standard
// library): it draws with github.com/signintech/gopdf, a maintained PDF
// generator that embeds a subset of a TrueType font with a ToUnicode map,
// so the em dash and names beyond ASCII (Śrīnivās, Nāgarāja) render and
// extract as written. The font is Go Regular and Go Bold
// (golang.org/x/image/font/gofont, BSD-licensed, WGL4: Latin with Latin
// Extended-A, the em dash). It has no Indian scripts, and no Go PDF library
// shapes them: a value with a character the font lacks (Devanagari or
// another Indian script, an emoji) is refused with ErrUnsupportedText
// rather than drawn as empty boxes, so the caller decides what to do.
package specimen

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/signintech/gopdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
)

// Banner is the line every specimen carries at the top of its page.
const Banner = "SPECIMEN — NOT A VALID E-STAMP CERTIFICATE"

// Certificate holds the values a specimen shows, as the order has them.
type Certificate struct {
	FirstPartyName    string
	SecondPartyName   string
	Purpose           string // the article's purpose_name
	State             string
	Amount            string // the paper's stamp duty in rupees, as the order shows it ("500")
	CertificateNumber string
	UniqueDocRef      string
	OrderDocumentID   string
	Paper             int // the paper's number in its order, from 1
	Papers            int // how many papers the order has
}

// ErrUnsupportedText is returned for a value with a character the
// embedded font cannot draw (an Indian script, an emoji).
var ErrUnsupportedText = errors.New("specimen: a value has characters the certificate's font cannot draw")

// The page: A4 in points, 50 pt margins.
const (
	pageW, pageH = 595.28, 841.89
	margin       = 50.0
	labelW       = 150.0
	bodySize     = 12.0
	lineH        = 17.0
)

// PDF returns the specimen certificate of c: a one-page PDF. It is
// deterministic (no creation date, no random id): the same values make the
// same bytes, so a retried step stores the same file.
func PDF(c Certificate) ([]byte, error) {
	rows := [][2]string{
		{"First party", c.FirstPartyName},
		{"Second party", c.SecondPartyName},
		{"Purpose", c.Purpose},
		{"State", c.State},
		{"Stamp duty", "INR " + c.Amount},
		{"Certificate number", c.CertificateNumber},
		{"Unique doc ref", c.UniqueDocRef},
		{"Order", c.OrderDocumentID},
		{"Paper", strconv.Itoa(c.Paper) + " of " + strconv.Itoa(c.Papers)},
	}
	fonts, err := parseFonts()
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if !drawable(fonts, r[1]) {
			return nil, fmt.Errorf("%w: %s %q", ErrUnsupportedText, strings.ToLower(r[0]), r[1])
		}
	}

	pdf := &gopdf.GoPdf{}
	pdf.Start(gopdf.Config{PageSize: *gopdf.PageSizeA4})
	pdf.SetInfo(gopdf.PdfInfo{Title: Banner, Creator: "stamp-duty service, test mode"})
	if err := pdf.AddTTFFontData("regular", goregular.TTF); err != nil {
		return nil, fmt.Errorf("specimen: font: %w", err)
	}
	if err := pdf.AddTTFFontData("bold", gobold.TTF); err != nil {
		return nil, fmt.Errorf("specimen: font: %w", err)
	}
	pdf.AddPage()
	d := drawer{pdf: pdf}

	// The watermark first, so the values print over it: SPECIMEN across
	// the page's diagonal, in a pale red.
	d.font("bold", 120)
	pdf.SetTextColor(250, 215, 215)
	w := d.width("SPECIMEN")
	pdf.Rotate(54, pageW/2, pageH/2) // the diagonal of A4 is at about 54.7°
	pdf.SetXY(pageW/2-w/2, pageH/2-40)
	d.text("SPECIMEN")
	pdf.RotateReset()

	// The banner, as large as fits the width, in red, and a rule under it.
	pdf.SetTextColor(180, 0, 0)
	d.font("bold", fitSize(&d, Banner, pageW-2*margin, 20))
	pdf.SetXY(margin, margin)
	d.text(Banner)
	d.font("regular", 10)
	pdf.SetXY(margin, margin+30)
	d.text("Made by the stamp-duty service for a test order. No stamp duty was paid; no authority issued it.")
	pdf.SetStrokeColor(180, 0, 0)
	pdf.SetLineWidth(1.5)
	pdf.Line(margin, margin+50, pageW-margin, margin+50)

	// The values, a label column and a wrapped value column.
	pdf.SetTextColor(0, 0, 0)
	y := margin + 75
	for _, r := range rows {
		d.font("bold", bodySize)
		pdf.SetXY(margin, y)
		d.text(r[0])
		d.font("regular", bodySize)
		lines, err := pdf.SplitTextWithWordWrap(r[1], pageW-2*margin-labelW)
		if err != nil || len(lines) == 0 {
			lines = []string{r[1]}
		}
		for _, l := range lines {
			pdf.SetXY(margin+labelW, y)
			d.text(l)
			y += lineH
		}
		y += 6
	}

	// The banner again at the foot, smaller: a page cut in two still says it.
	pdf.SetTextColor(180, 0, 0)
	d.font("bold", 12)
	pdf.SetXY(margin, pageH-margin-12)
	d.text(Banner)

	if d.err != nil {
		return nil, fmt.Errorf("specimen: drawing: %w", d.err)
	}
	var buf bytes.Buffer
	if _, err := pdf.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("specimen: writing the PDF: %w", err)
	}
	return buf.Bytes(), nil
}

// parseFonts parses the embedded fonts, for drawable.
func parseFonts() ([]*sfnt.Font, error) {
	var fonts []*sfnt.Font
	for _, ttf := range [][]byte{goregular.TTF, gobold.TTF} {
		f, err := sfnt.Parse(ttf)
		if err != nil {
			return nil, fmt.Errorf("specimen: font: %w", err)
		}
		fonts = append(fonts, f)
	}
	return fonts, nil
}

// drawable reports whether every character of s is one that fonts draw (a
// glyph other than the missing-glyph box in each), and none is a control
// character.
func drawable(fonts []*sfnt.Font, s string) bool {
	var b sfnt.Buffer
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
		for _, f := range fonts {
			if g, err := f.GlyphIndex(&b, r); err != nil || g == 0 {
				return false
			}
		}
	}
	return true
}

// drawer keeps the first error of a run of drawing calls.
type drawer struct {
	pdf *gopdf.GoPdf
	err error
}

func (d *drawer) font(family string, size float64) {
	if d.err == nil {
		d.err = d.pdf.SetFont(family, "", size)
	}
}

func (d *drawer) text(s string) {
	if d.err == nil {
		d.err = d.pdf.Text(s)
	}
}

func (d *drawer) width(s string) float64 {
	w, err := d.pdf.MeasureTextWidth(s)
	if d.err == nil {
		d.err = err
	}
	return w
}

// fitSize returns the largest size up to max at which s fits width in the
// current font.
func fitSize(d *drawer, s string, width, max float64) float64 {
	d.font("bold", max)
	if w := d.width(s); w > width {
		return max * width / w
	}
	return max
}
