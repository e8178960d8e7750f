package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestPurposeFloodKeepsMemoryBounded is the attack of a caller with a token
// who sends 5,000 bodies of about 64 KiB, each naming a new purpose: half
// with the purpose itself 64 KiB long (no article can have it), half with a
// purpose an article could have (200 characters) beside 64 KiB of padding.
// Every one is a 404; none may make the instance keep its body. A Lambda
// instance has 128 MB; the heap must stay under 48 MB.
func TestPurposeFloodKeepsMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("5,000 requests")
	}
	s := functest.New(t, "CreateOrderFunction", wire)
	const (
		requests = 5000
		maxHeap  = 48 << 20
	)
	pad := strings.Repeat("x", 64<<10-1024)
	for i := range requests {
		var b string
		if i%2 == 0 {
			b = body(map[string]any{"purpose": fmt.Sprintf("%06d %s", i, pad)})
		} else {
			purpose := fmt.Sprintf("Lease %06d %s", i, strings.Repeat("y", 200-13))
			b = body(map[string]any{"purpose": purpose, "padding": pad})
		}
		r := s.Invoke(functest.Request("POST", "/api/live-orders", "", functest.DevHeaders, b))
		if r.Status != 404 {
			t.Fatalf("request %d: status %d: %.200s", i, r.Status, r.Body)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap after %d requests of %d KiB with new purposes: %.1f MB (limit %d MB)", requests, len(pad)>>10, float64(ms.HeapAlloc)/(1<<20), maxHeap>>20)
	if ms.HeapAlloc > maxHeap {
		t.Errorf("heap = %.1f MB after %d requests, want under %d MB", float64(ms.HeapAlloc)/(1<<20), requests, maxHeap>>20)
	}
	// Only the possible keys were looked up; the rest cost no DynamoDB call.
	gets := 0
	for _, c := range s.Proxy.All() {
		if c.Operation == "GetItem" && c.Table == s.Env.Table("ArticlesTable") {
			gets++
		}
	}
	if got, want := gets, requests/2; got != want {
		t.Errorf("article GetItems = %d, want %d (one per possible key)", got, want)
	}
}
