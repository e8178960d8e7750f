package storetest

import (
	"encoding/json"
	"testing"
)

func TestParseConsumed(t *testing.T) {
	for _, tc := range []struct {
		name, op, raw string
		want          Capacity
	}{
		{"Absent", "Query", ``, Capacity{}},
		{"Null", "Query", `null`, Capacity{}},
		{"DynaliteRead", "Query", `{"CapacityUnits":2.5,"TableName":"OrdersTable"}`, Capacity{Read: 2.5}},
		{"DynaliteWrite", "PutItem", `{"CapacityUnits":1,"TableName":"OrdersTable"}`, Capacity{Write: 1}},
		{"DynaliteUpdate", "UpdateItem", `{"CapacityUnits":1,"TableName":"CountersTable"}`, Capacity{Write: 1}},
		{"DynamoDBSplit", "UpdateItem", `{"CapacityUnits":1.5,"ReadCapacityUnits":0.5,"WriteCapacityUnits":1,"TableName":"T"}`, Capacity{Read: 0.5, Write: 1}},
		{"Array", "BatchGetItem", `[{"CapacityUnits":1,"TableName":"A"},{"CapacityUnits":0.5,"TableName":"B"}]`, Capacity{Read: 1.5}},
		{"ArrayWrite", "BatchWriteItem", `[{"CapacityUnits":3,"TableName":"A"}]`, Capacity{Write: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseConsumed(tc.op, json.RawMessage(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, err := parseConsumed("Query", json.RawMessage(`"x"`)); err == nil {
		t.Error("a string is not a ConsumedCapacity")
	}
}

func TestItemSize(t *testing.T) {
	// owner: 5 + 3; seq: 3 + 2 (two digits); sd: 2 + 3 + 2 elements + (1+2) + (1+1);
	// ff: 2 + 3 + (1+1) + (1+1); name: 4 + 2 ("é" is two UTF-8 bytes); b: 1 + 3;
	// sets, their elements' bare sizes: ss: 2 + 1 + 2; ns: 2 + 2 + 2; bs: 2 + 3.
	item := `{"owner":{"S":"dev"},"seq":{"N":"12"},"sd":{"M":{"a":{"S":"xy"},"b":{"BOOL":true}}},` +
		`"ff":{"L":[{"NULL":true},{"N":"0"}]},"name":{"S":"é"},"b":{"B":"AQID"},` +
		`"ss":{"SS":["a","bc"]},"ns":{"NS":["12","0.001"]},"bs":{"BS":["AQID"]}}`
	var m map[string]any
	if err := json.Unmarshal([]byte(item), &m); err != nil {
		t.Fatal(err)
	}
	got, err := itemSize(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := 8 + 5 + 12 + 9 + 6 + 4 + 5 + 6 + 5; got != want {
		t.Errorf("itemSize = %d, want %d", got, want)
	}
	if _, err := valueSize(map[string]any{"X": "1"}); err == nil {
		t.Error("unknown type accepted")
	}
}

func TestNumberSize(t *testing.T) {
	for s, want := range map[string]int{
		"0": 1, "7": 2, "12": 2, "123": 3, "12345": 4, "100": 2, "-1.50": 2, "0.001": 2,
		"1E+3": 2, "999999999999999": 9, "1234567890": 6,
	} {
		if got := numberSize(s); got != want {
			t.Errorf("numberSize(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestUnits(t *testing.T) {
	for _, tc := range []struct {
		bytes      int
		consistent bool
		want       float64
	}{
		{0, true, 1}, {0, false, 0.5}, {374, true, 1}, {4096, false, 0.5}, {4097, false, 1},
		{9350, false, 1.5}, {9350, true, 3},
	} {
		if got := readUnits(tc.bytes, tc.consistent); got != tc.want {
			t.Errorf("readUnits(%d, %v) = %v, want %v", tc.bytes, tc.consistent, got, tc.want)
		}
	}
	for b, want := range map[int]float64{0: 1, 374: 1, 1024: 1, 1025: 2, 4000: 4} {
		if got := writeUnits(b); got != want {
			t.Errorf("writeUnits(%d) = %v, want %v", b, got, want)
		}
	}
}
