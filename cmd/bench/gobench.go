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

// goBenchTable is section 3: it runs goBenchmarks with go test in root.
func goBenchTable(ctx context.Context, root string) (*table, error) {
	var names, pkgs []string
	for _, b := range goBenchmarks {
		names, pkgs = append(names, b.Name), append(pkgs, b.Pkg)
	}
	pattern := strings.Join(names, "|")
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-run", "^$", "-bench", pattern, "-benchmem", "-count", "1"}, pkgs...)...)
	cmd.Dir = root
	line := fmt.Sprintf("go test -run '^$' -bench '%s' -benchmem -count 1 %s", pattern, strings.Join(pkgs, " "))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", line, err, out)
	}
	res, err := parseGoBench(string(out))
	if err != nil {
		return nil, err
	}
	t := &table{
		Title:    "3. Warm handler cost (go test -bench, this host)",
		Header:   []string{"benchmark", "what", "ns/op", "µs/op", "B/op", "allocs/op"},
		TextCols: 2,
	}
	for _, b := range goBenchmarks {
		v, ok := res[b.Name]
		if !ok {
			return nil, fmt.Errorf("go test did not report %s:\n%s", b.Name, out)
		}
		t.add(b.Name, b.What, num(v["ns/op"], 0), fmt.Sprintf("%.1f", v["ns/op"]/1000), num(v["B/op"], 0), num(v["allocs/op"], 0))
	}
	t.note("%s", line)
	return t, nil
}

// benchLine matches a result line: name (with its -GOMAXPROCS suffix),
// iterations, then value-unit pairs.
var benchLine = regexp.MustCompile(`^(Benchmark[^\s-]+)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// parseGoBench parses the result lines of go test -bench -benchmem output:
// each benchmark's values by unit ("ns/op", "B/op", …), and its
// "iterations".
func parseGoBench(out string) (map[string]map[string]float64, error) {
	res := map[string]map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		f := append([]string{m[2], "iterations"}, strings.Fields(m[3])...)
		vals := map[string]float64{}
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark line %q: %w", sc.Text(), err)
			}
			vals[f[i+1]] = v
		}
		res[m[1]] = vals
	}
	return res, sc.Err()
}
