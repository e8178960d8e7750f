package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// goBenchmarks are the warm handler benchmarks and the packages they live in.
var goBenchmarks = []struct{ Name, Pkg, What string }{
	{"BenchmarkCreateOrderRules", "./shared/rules", "create-order: decode + validate a full body, amount rule"},
	{"BenchmarkEncodeOrders", "./functions/list-orders", "list-orders: encode a page of 100 orders"},
	{"BenchmarkEncodeArticles", "./functions/list-articles", "list-articles: sort + encode 100 cached articles"},
}

// goBench is one benchmark's result line.
type goBench struct {
	Name       string
	Iterations int64
	NsPerOp    float64
	BytesPerOp float64 // B/op
	AllocsOp   float64
	MBPerS     float64 // 0 when not reported
}

// runGoBenchmarks runs the warm handler benchmarks with go test as a
// subprocess in root and parses their results.
func runGoBenchmarks(ctx context.Context, root string) ([]goBench, error) {
	var names, pkgs []string
	for _, b := range goBenchmarks {
		names = append(names, b.Name)
		pkgs = append(pkgs, b.Pkg)
	}
	args := append([]string{"test", "-run", "^$", "-bench", strings.Join(names, "|"), "-benchmem", "-count", "1"}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	res, err := parseGoBench(string(out))
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		found := false
		for _, r := range res {
			found = found || r.Name == n
		}
		if !found {
			return nil, fmt.Errorf("go test did not report %s:\n%s", n, out)
		}
	}
	return res, nil
}

// benchLine matches a result line: name (with its -GOMAXPROCS suffix),
// iterations, then value-unit pairs.
var benchLine = regexp.MustCompile(`^(Benchmark[^\s-]+)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// parseGoBench parses the result lines of go test -bench -benchmem output.
func parseGoBench(out string) ([]goBench, error) {
	var res []goBench
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		b := goBench{Name: m[1]}
		b.Iterations, _ = strconv.ParseInt(m[2], 10, 64)
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark line %q: %w", sc.Text(), err)
			}
			switch f[i+1] {
			case "ns/op":
				b.NsPerOp = v
			case "B/op":
				b.BytesPerOp = v
			case "allocs/op":
				b.AllocsOp = v
			case "MB/s":
				b.MBPerS = v
			}
		}
		res = append(res, b)
	}
	return res, sc.Err()
}

// goBenchTable is section 3.
func goBenchTable(bs []goBench) *table {
	t := &table{
		Title:    "3. Warm handler cost (go test -bench, this host)",
		Header:   []string{"benchmark", "what", "ns/op", "µs/op", "B/op", "allocs/op"},
		TextCols: 2,
	}
	for _, want := range goBenchmarks {
		for _, b := range bs {
			if b.Name == want.Name {
				t.add(b.Name, want.What, num(b.NsPerOp, 0), fmt.Sprintf("%.1f", b.NsPerOp/1000), num(b.BytesPerOp, 0), num(b.AllocsOp, 0))
			}
		}
	}
	t.note("go test -run '^$' -bench 'BenchmarkCreateOrderRules|BenchmarkEncodeOrders|BenchmarkEncodeArticles' -benchmem -count 1 ./shared/rules ./functions/list-orders ./functions/list-articles")
	return t
}
