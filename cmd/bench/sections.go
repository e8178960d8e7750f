package main

import (
	"fmt"
	"strings"
)

// section is one part of the report: what it measures, run in the order of
// sections, and the tables it prints, numbered in that order.
type section struct {
	name    string
	measure func() error
	tables  []func() (*table, error)
}

// sections lists the report's parts in their order. A new measurement is a
// new entry here (its step and its tables in a file of their own).
func (b *bench) sections() []section {
	return []section{
		{"cold", b.coldStarts, []func() (*table, error){b.coldTable, b.sizeTable}},
		{"gobench", b.runGoBenchmarks, []func() (*table, error){b.goBenchTable}},
		{"dynamo", b.measureDynamo, []func() (*table, error){b.dynamoTable, b.costTable}},
		{"events", b.measureEvents, []func() (*table, error){b.eventTable, b.eventCostTable}},
		{"latency", b.measureLatency, []func() (*table, error){b.latencyTable}},
		{"shares", b.measureShares, []func() (*table, error){b.sharesTable, b.changeTable}},
		{"dispatch", b.measureKeepUp, []func() (*table, error){b.keepUpTable}},
		{"catalogue", b.measureCatalogue, []func() (*table, error){b.catalogueTable}},
		{"load", b.measureLoad, []func() (*table, error){b.loadTable, b.mixedTable}},
		{"drain", b.measureDrain, []func() (*table, error){b.drainTable}},
		{"ledger", b.measureLedger, []func() (*table, error){b.ledgerTable}},
	}
}

// sectionNames returns the sections' names in order.
func sectionNames() []string {
	var names []string
	for _, s := range (&bench{}).sections() {
		names = append(names, s.name)
	}
	return names
}

// pickSections parses -only's comma-separated names.
func pickSections(list string) (map[string]bool, error) {
	known := map[string]bool{}
	for _, n := range sectionNames() {
		known[n] = true
	}
	picked := map[string]bool{}
	for n := range strings.SplitSeq(list, ",") {
		n = strings.TrimSpace(n)
		if !known[n] {
			return nil, fmt.Errorf("-only: no section %q (there are %s)", n, strings.Join(sectionNames(), ", "))
		}
		picked[n] = true
	}
	return picked, nil
}
