package main

import (
	"strings"
	"testing"
)

// BenchmarkDecodeBatch measures what a batch's body costs to read before
// any row is checked (decodeBatch), for the 1 MiB bodies that cost the
// most: nesting opened and never closed (refused at maxBatchDepth), 100
// rows nested 2,000 levels deep (each answered in its row), and 100 rows
// of flat numbers, the costliest body whatever the depth limit.
// maxBatchDepth's comment quotes it:
//
//	go test -run '^$' -bench BenchmarkDecodeBatch -benchmem ./functions/create-order
func BenchmarkDecodeBatch(b *testing.B) {
	const mib = 1 << 20
	head := `{"data":[`
	rows := func(row string) string { // as many copies of row as fit in 1 MiB, at most 100
		n := min(100, (mib-len(head))/(len(row)+1))
		return batchBody(strings.Split(strings.Repeat(row+"\n", n-1)+row, "\n")...)
	}
	for _, bc := range []struct{ name, body string }{
		{"OpenArrays", head + strings.Repeat("[", (mib-len(head)))},
		{"OpenObjects", head + strings.Repeat(`{"":`, (mib-len(head))/4)},
		{"RowsOf2000Arrays", rows(rowNested(2000))},
		{"RowsOf2000Objects", rows(`{"amount":` + nested(`{"":`, "1", "}", 2000) + `}`)},
		{"RowsOfFlatNumbers", rows(`{"amount":[` + strings.Repeat("0,", 5200) + `0]}`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body := []byte(bc.body)
			if len(body) > mib {
				b.Fatalf("%d bytes", len(body))
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				decodeBatch(body)
			}
		})
	}
}
