package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"testing"

	"stampduty/shared/testkit/browser"
	"stampduty/shared/testkit/localdb"
)

// checkDocumentInline: the caller's uploaded document is shown inline on
// the order's page (console.md: "the caller's uploaded document shown
// inline (PDF, PNG, JPEG)"): an image loads through the service's own
// download link at its natural size, under the CSP.
func checkDocumentInline(t *testing.T, s *stack, b *browser.Browser) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for x := range 40 {
		for y := range 30 {
			img.Set(x, y, color.RGBA{R: uint8(6 * x), G: 90, B: uint8(8 * y), A: 255})
		}
	}
	var scan bytes.Buffer
	if err := png.Encode(&scan, img); err != nil {
		t.Fatal(err)
	}
	doc := createOrder(t, s, 1)
	req, _ := http.NewRequest("PUT", s.URL+"/api/live-orders/"+doc+"/document?name=scan.png", bytes.NewReader(scan.Bytes()))
	req.Header.Set("Authorization", "Bearer "+localdb.DevToken)
	req.Header.Set("Content-Type", "image/png")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("upload: %d", resp.StatusCode)
	}

	operator := s.Cognito.Staff[1]
	p := atQueue(t, s, b, browser.Desktop, operator)
	p.Press(browser.Link(doc))
	if w, h := p.WaitImage(browser.Image("Uploaded document scan.png")); w != 40 || h != 30 {
		t.Errorf("the document shows at %dx%d; want its 40x30", w, h)
	}
	p.Find(browser.Link("scan.png"))
	p.Check("order-document")
}
