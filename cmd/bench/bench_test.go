package main

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseConsumed(t *testing.T) {
	for _, tc := range []struct {
		name, op, raw string
		want          capacity
	}{
		{"Absent", "Query", ``, capacity{}},
		{"Null", "Query", `null`, capacity{}},
		{"DynaliteRead", "Query", `{"CapacityUnits":2.5,"TableName":"OrdersTable"}`, capacity{Read: 2.5}},
		{"DynaliteWrite", "PutItem", `{"CapacityUnits":1,"TableName":"OrdersTable"}`, capacity{Write: 1}},
		{"DynaliteUpdate", "UpdateItem", `{"CapacityUnits":1,"TableName":"CountersTable"}`, capacity{Write: 1}},
		{"DynamoDBSplit", "UpdateItem", `{"CapacityUnits":1.5,"ReadCapacityUnits":0.5,"WriteCapacityUnits":1,"TableName":"T"}`, capacity{Read: 0.5, Write: 1}},
		{"Array", "BatchGetItem", `[{"CapacityUnits":1,"TableName":"A"},{"CapacityUnits":0.5,"TableName":"B"}]`, capacity{Read: 1.5}},
		{"ArrayWrite", "BatchWriteItem", `[{"CapacityUnits":3,"TableName":"A"}]`, capacity{Write: 3}},
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
	// ff: 2 + 3 + (1+1) + (1+1); name: 4 + 2 ("é" is two UTF-8 bytes); b: 1 + 3.
	item := `{"owner":{"S":"dev"},"seq":{"N":"12"},"sd":{"M":{"a":{"S":"xy"},"b":{"BOOL":true}}},` +
		`"ff":{"L":[{"NULL":true},{"N":"0"}]},"name":{"S":"é"},"b":{"B":"AQID"}}`
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(item), &m); err != nil {
		t.Fatal(err)
	}
	got, err := itemSize(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := 8 + 5 + 12 + 9 + 6 + 4; got != want {
		t.Errorf("itemSize = %d, want %d", got, want)
	}
	if _, err := valueSize(json.RawMessage(`{"X":"1"}`)); err == nil {
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

func TestCost(t *testing.T) {
	warm := usEast1.perMillion(3420*time.Microsecond, capacity{Read: 1, Write: 1.1})
	if warm.BilledMs != 4 {
		t.Errorf("billed %v ms, want 4", warm.BilledMs)
	}
	// 4 ms × 0.125 GB × $0.0000133334 per GB-s × 1e6 requests.
	for name, c := range map[string][2]float64{
		"duration": {warm.Duration, 0.0066667},
		"dynamodb": {warm.DynamoDB, 1*0.125 + 1.1*0.625},
		"total":    {warm.Total(), 1 + 0.2 + 0.0066667 + 0.8125},
	} {
		if math.Abs(c[0]-c[1]) > 1e-6 {
			t.Errorf("%s = %.7f, want %.7f", name, c[0], c[1])
		}
	}
	cold := usEast1.perMillion(7800*time.Microsecond, capacity{Read: 2, Write: 2})
	// 8 ms billed: 0.0133334; units 2×0.125 + 2×0.625 = 1.5.
	if got, want := cold.Total(), 1+0.2+0.0133334+1.5; math.Abs(got-want) > 1e-6 {
		t.Errorf("cold total = %.7f, want %.7f", got, want)
	}
	if got, want := blended(warm, cold, 0.01), 0.99*warm.Total()+0.01*cold.Total(); math.Abs(got-want) > 1e-12 {
		t.Errorf("blended = %v, want %v", got, want)
	}
}

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
pkg: stampduty/shared/rules
BenchmarkCreateOrderRules-2   	  485235	      2463 ns/op	 192.89 MB/s	     992 B/op	       3 allocs/op
PASS
BenchmarkEncodeOrders   	    7560	    137623 ns/op	  114778 B/op	       3 allocs/op
ok  	stampduty/functions/list-orders	2.807s
`
	got, err := parseGoBench(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []goBench{
		{Name: "BenchmarkCreateOrderRules", Iterations: 485235, NsPerOp: 2463, BytesPerOp: 992, AllocsOp: 3, MBPerS: 192.89},
		{Name: "BenchmarkEncodeOrders", Iterations: 7560, NsPerOp: 137623, BytesPerOp: 114778, AllocsOp: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestDurations(t *testing.T) {
	var d durations
	for i := 10; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if d.median() != 5500*time.Microsecond || d.min() != time.Millisecond || d.p90() != 9*time.Millisecond {
		t.Errorf("median %v, min %v, p90 %v; want 5.5ms, 1ms, 9ms", d.median(), d.min(), d.p90())
	}
	if d[0] != 10*time.Millisecond {
		t.Error("the sample was sorted in place")
	}
}

func TestPruneExpressionNames(t *testing.T) {
	req := map[string]json.RawMessage{
		"KeyConditionExpression":    json.RawMessage(`"#o = :o"`),
		"ExpressionAttributeNames":  json.RawMessage(`{"#o":"owner","#p":"purpose"}`),
		"ExpressionAttributeValues": json.RawMessage(`{":o":{"S":"dev"},":x":{"N":"1"}}`),
	}
	pruneExpressionNames(req)
	if got := string(req["ExpressionAttributeNames"]); got != `{"#o":"owner"}` {
		t.Errorf("names = %s", got)
	}
	if got := string(req["ExpressionAttributeValues"]); got != `{":o":{"S":"dev"}}` {
		t.Errorf("values = %s", got)
	}
	req = map[string]json.RawMessage{"ExpressionAttributeNames": json.RawMessage(`{"#s":"seq"}`)}
	pruneExpressionNames(req)
	if _, ok := req["ExpressionAttributeNames"]; ok {
		t.Error("an empty ExpressionAttributeNames was kept")
	}
}

// TestMeter drives the meter against a fake engine that answers like
// dynalite: it must ask for the consumed capacity, pass the answer through
// untouched, and bill a projected Query by the full items it reads.
func TestMeter(t *testing.T) {
	full := `{"owner":{"S":"dev"},"seq":{"N":"3"},"pad":{"S":"` + strings.Repeat("x", 5000) + `"}}`
	var (
		mu        sync.Mutex
		forwarded []map[string]json.RawMessage
	)
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req map[string]json.RawMessage
		json.Unmarshal(b, &req)
		mu.Lock()
		forwarded = append(forwarded, req)
		mu.Unlock()
		switch {
		case strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".PutItem"):
			w.WriteHeader(400)
			io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`)
		case strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".GetItem"):
			io.WriteString(w, `{"Item":`+full+`}`)
		case req["ProjectionExpression"] != nil:
			io.WriteString(w, `{"Items":[{"seq":{"N":"3"}}],"Count":1,"ConsumedCapacity":{"CapacityUnits":2,"TableName":"OrdersTable"}}`)
		default:
			io.WriteString(w, `{"Items":[`+full+`],"Count":1}`)
		}
	}))
	defer engine.Close()
	m, err := startMeter(engine.URL, map[string][]string{"OrdersTable": {"owner", "seq"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	m.setMode(modeAccount)

	post := func(op, body string) string {
		req, _ := http.NewRequest("POST", m.URL+"/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/20261121/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	body := post("Query", `{"TableName":"OrdersTable","KeyConditionExpression":"#o = :o","ExpressionAttributeNames":{"#o":"owner"},`+
		`"ExpressionAttributeValues":{":o":{"S":"dev"}},"ProjectionExpression":"seq","Limit":1,"ConsistentRead":true,"ReturnConsumedCapacity":"NONE"}`)
	if !strings.Contains(body, `"Items":[{"seq":{"N":"3"}}]`) {
		t.Errorf("the answer was changed: %s", body)
	}
	post("PutItem", `{"TableName":"OrdersTable","Item":{"owner":{"S":"dev"},"seq":{"N":"3"}},"ConditionExpression":"attribute_not_exists(seq)"}`)
	calls, err := m.take()
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 {
		t.Fatalf("%d calls recorded, want 2: %+v", len(calls), calls)
	}
	// The forwarded Query (after the shadow read) asked for the capacity.
	var sawTotal bool
	mu.Lock()
	defer mu.Unlock()
	for _, f := range forwarded {
		sawTotal = sawTotal || string(f["ReturnConsumedCapacity"]) == `"TOTAL"`
	}
	if !sawTotal {
		t.Error("no forwarded request asked for ReturnConsumedCapacity TOTAL")
	}
	q := calls[0]
	fullBytes := 5 + 3 + 3 + 2 + 3 + 5000
	if q.Op != "Query" || q.Table != "OrdersTable" || q.Dynalite.Read != 2 || q.ItemBytes != fullBytes || q.DDB.Read != 2 || !q.Accounted {
		t.Errorf("query call = %+v; want dynalite 2, %d bytes, DynamoDB 2 RCU (5 KB consistent)", q, fullBytes)
	}
	p := calls[1]
	if p.ErrType != "ConditionalCheckFailedException" || p.DDB.Write != 5 || p.Dynalite.Write != 0 {
		t.Errorf("failed put = %+v; want 5 WCU by DynamoDB's rules (the existing %d-byte item), none from the engine", p, fullBytes)
	}
}
