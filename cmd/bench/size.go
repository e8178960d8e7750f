package main

import (
	"fmt"
	"os"
)

// binarySize is the size of one linux/arm64 bootstrap.
type binarySize struct {
	Name  string
	Bytes int64
}

// sizes stats each binary of bins, in the order of names.
func sizes(bins map[string]string, names []string) ([]binarySize, error) {
	var out []binarySize
	for _, n := range names {
		fi, err := os.Stat(bins[n])
		if err != nil {
			return nil, fmt.Errorf("size of %s: %w", n, err)
		}
		out = append(out, binarySize{Name: n, Bytes: fi.Size()})
	}
	return out, nil
}

// sizeTable is section 2: bytes, MiB and the ratio to hello-world.
func sizeTable(ss []binarySize) *table {
	t := &table{
		Title:  "2. Binary size (linux/arm64, release flags)",
		Header: []string{"binary", "bytes", "MiB", "× hello"},
	}
	var hello int64
	for _, s := range ss {
		if s.Name == helloID {
			hello = s.Bytes
		}
	}
	for _, s := range ss {
		ratio := "—"
		if hello > 0 {
			ratio = fmt.Sprintf("%.2f", float64(s.Bytes)/float64(hello))
		}
		t.add(s.Name, fmt.Sprint(s.Bytes), fmt.Sprintf("%.2f", float64(s.Bytes)/(1<<20)), ratio)
	}
	t.note(`GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags "-s -w" (functions by their Makefile targets)`)
	return t
}
