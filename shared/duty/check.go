package duty

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ValidateRules is every check of §11 on an article's duty_rules, as a
// save or an import runs it: ParseRules, then Check. Stored rules, which
// passed it when they were saved, are read with ParseRules alone.
func ValidateRules(data []byte) (Rules, []Problem) {
	rules, problems := ParseRules(data)
	if problems != nil {
		return nil, problems
	}
	if problems := Check(rules); problems != nil {
		return nil, problems
	}
	return rules, nil
}

// maxCombinationProblems bounds how many enum combinations without a
// component one version reports: the first ones say what is missing.
const maxCombinationProblems = 8

// Check is the part of §11 that evaluates: for each version, every
// combination of its enum values has a component that applies other than
// a percentOf (at most MaxCombinations, checked exhaustively), and a probe
// of each combination with the numeric inputs at their bounds and at 1,
// 10⁵, 10⁷, 10⁹ and 10¹² gives a total from 0 to MaxInput.
func Check(rules Rules) []Problem {
	var ps problems
	for i, v := range rules {
		v.check(&ps, []any{i})
	}
	return ps.list
}

// absent stands for an optional enum input that is not sent, in a combination.
const absent = ""

// combinations returns each enum input the version declares with the values
// it can take (absent too, for an optional one without a default), and
// how many combinations they make (capped just above MaxCombinations).
func (v *Version) combinations() (names []string, values [][]string, n int) {
	n = 1
	for _, in := range v.Inputs {
		if !in.Enum {
			continue
		}
		vals := slices.Clone(in.Values)
		if !in.Required && in.Default == "" {
			vals = append(vals, absent)
		}
		names, values = append(names, in.Name), append(values, vals)
		n = min(n*len(vals), MaxCombinations+1)
	}
	return names, values, n
}

// check runs Check on one version at path.
func (v *Version) check(ps *problems, path []any) {
	names, values, n := v.combinations()
	if n > MaxCombinations {
		ps.add(at(path, "inputs"), "the enum inputs make more than %d combinations of values: too many to check", MaxCombinations)
		return
	}
	missing := 0
	probe := v.probes()
	reported := false
	// A probe's result depends on the enum values only through the
	// components that apply (when): each set of them is probed once.
	probed := map[uint64]bool{}
	idx := make([]int, len(names))
	for {
		enums := make(map[string]string, len(names))
		for i, name := range names {
			if s := values[i][idx[i]]; s != absent {
				enums[name] = s
			}
		}
		if !v.someApplies(enums) {
			if missing < maxCombinationProblems {
				ps.add(at(path, "components"), "no component other than a percentOf applies when %s", describe(names, values, idx))
			}
			missing++
		}
		applying := v.applying(enums)
		for _, nums := range probe {
			if reported || probed[applying] {
				break
			}
			_, err := v.Evaluate(Request{Date: "probe", Numbers: nums, Enums: enums, probe: true})
			var broken *BrokenError
			if errors.As(err, &broken) {
				ps.add(path, "the probe breaks the rule: %s when %s and %s", broken.Why, describe(names, values, idx), describeNumbers(nums))
				reported = true
			}
		}
		probed[applying] = true
		// The next combination, the last input fastest.
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(values[i]) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			break
		}
	}
	if missing > maxCombinationProblems {
		ps.add(at(path, "components"), "and %d more combinations with no component that applies", missing-maxCombinationProblems)
	}
}

// someApplies reports whether a component other than a percentOf applies
// to enums.
func (v *Version) someApplies(enums map[string]string) bool {
	for _, c := range v.Components {
		if c.Kind != KindPercentOf && c.applies(enums) {
			return true
		}
	}
	return false
}

// applying returns the set of the components whose when holds for enums,
// bit i for Components[i] (a version has at most 32, MaxComponents).
func (v *Version) applying(enums map[string]string) uint64 {
	var set uint64
	for i, c := range v.Components {
		if c.applies(enums) {
			set |= 1 << i
		}
	}
	return set
}

// probePoints are the values every numeric input is probed at, besides
// its bounds (§11).
var probePoints = []int64{1, 1e5, 1e7, 1e9, 1e12}

// probes returns the numeric inputs of each probe: all inputs at each
// point (each within its own bounds), and each input at its highest with
// the others at their lowest, and the other way round.
func (v *Version) probes() []map[string]int64 {
	var nums []*Input
	for _, in := range v.Inputs {
		if !in.Enum {
			nums = append(nums, in)
		}
	}
	lo := func(in *Input) int64 {
		if in.Positive {
			return max(in.Min, 1)
		}
		return in.Min
	}
	at := func(in *Input, x int64) int64 { return min(max(x, lo(in)), in.Max) }
	var out []map[string]int64
	points := append([]int64{0, MaxInput}, probePoints...)
	for _, x := range points {
		m := map[string]int64{}
		for _, in := range nums {
			m[in.Name] = at(in, x)
		}
		out = append(out, m)
	}
	for _, high := range nums {
		up, down := map[string]int64{}, map[string]int64{}
		for _, in := range nums {
			up[in.Name], down[in.Name] = lo(in), in.Max
		}
		up[high.Name], down[high.Name] = high.Max, lo(high)
		out = append(out, up, down)
	}
	return out
}

// describe writes a combination of enum values: "partyCategory is female,
// locationClass is absent".
func describe(names []string, values [][]string, idx []int) string {
	if len(names) == 0 {
		return "no enum input is sent"
	}
	var parts []string
	for i, name := range names {
		if s := values[i][idx[i]]; s == absent {
			parts = append(parts, name+" is absent")
		} else {
			parts = append(parts, name+" is "+s)
		}
	}
	return strings.Join(parts, ", ")
}

// describeNumbers writes a probe's numeric inputs in InputNames' order.
func describeNumbers(nums map[string]int64) string {
	if len(nums) == 0 {
		return "no numeric input"
	}
	var parts []string
	for _, name := range numericInputs {
		if x, ok := nums[name]; ok {
			parts = append(parts, fmt.Sprintf("%s is %d", name, x))
		}
	}
	return strings.Join(parts, ", ")
}
