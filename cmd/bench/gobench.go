package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// goBenchmarks are the warm handler benchmarks and the packages they live in.
var goBenchmarks = []struct{ Name, Pkg, What string }{
	{"BenchmarkCreateOrderRules", "./shared/stampduty", "create-order: decode + validate a full body, amount rule"},
	{"BenchmarkEncodeOrders", "./functions/list-orders", "list-orders: encode a page of 100 orders"},
	{"BenchmarkEncodeArticles", "./functions/list-articles", "list-articles: sort + encode 100 cached articles"},
}

// runGoBenchmarks is section 3: goBenchmarks run by go test in the module
// root, with the flags of the functions' host builds (CGO_ENABLED=0,
// -trimpath), whose compiled packages serve here too.
func (b *bench) runGoBenchmarks() error {
	say("go test -bench…\n")
	var names, pkgs []string
	for _, g := range goBenchmarks {
		names, pkgs = append(names, g.Name), append(pkgs, g.Pkg)
	}
	pattern := strings.Join(names, "|")
	b.goTest = fmt.Sprintf("CGO_ENABLED=0 go test -tags benchmarks -trimpath -run '^$' -bench '%s' -benchmem -count 1 %s", pattern, strings.Join(pkgs, " "))
	cmd := exec.CommandContext(b.ctx, "go", append([]string{"test", "-tags", "benchmarks", "-trimpath", "-run", "^$", "-bench", pattern, "-benchmem", "-count", "1"}, pkgs...)...)
	cmd.Dir, cmd.Env = b.root, append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err == nil {
		b.gobench, err = parseGoBench(string(out))
	}
	for _, n := range names {
		if err == nil && b.gobench[n] == nil {
			err = fmt.Errorf("no result of %s", n)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", b.goTest, err, out)
	}
	return nil
}

// benchLine matches a result line: name (with its -GOMAXPROCS suffix),
// iterations, then value-unit pairs.
var benchLine = regexp.MustCompile(`(?m)^(Benchmark[^\s-]+)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// parseGoBench parses the result lines of go test -bench -benchmem output:
// each benchmark's values by unit ("ns/op", "B/op", …, and "iterations").
func parseGoBench(out string) (map[string]map[string]float64, error) {
	res := map[string]map[string]float64{}
	for _, m := range benchLine.FindAllStringSubmatch(out, -1) {
		f := append([]string{m[2], "iterations"}, strings.Fields(m[3])...)
		res[m[1]] = map[string]float64{}
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark line %q: %w", m[0], err)
			}
			res[m[1]][f[i+1]] = v
		}
	}
	return res, nil
}

// goBenchTable is section 3.
func (b *bench) goBenchTable() (*table, error) {
	t := &table{
		Title:    "3. Warm handler cost (go test -bench, this host)",
		Header:   []string{"benchmark", "what", "ns/op", "µs/op", "B/op", "allocs/op"},
		TextCols: 2,
	}
	for _, g := range goBenchmarks {
		v := b.gobench[g.Name]
		t.add(g.Name, g.What, num(v["ns/op"], 0), fmt.Sprintf("%.1f", v["ns/op"]/1000), num(v["B/op"], 0), num(v["allocs/op"], 0))
	}
	t.note("%s", b.goTest)
	return t, nil
}
