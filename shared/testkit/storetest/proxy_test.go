package storetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

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

// TestProxyAccounts drives a proxy in Account mode against a fake engine
// that answers like dynalite: it must ask for the consumed capacity, pass
// the answer through untouched, and bill a projected Query by the full
// items it reads.
func TestProxyAccounts(t *testing.T) {
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
	m, err := StartProxy(engine.URL, map[string]Schema{"OrdersTable": {Keys: []string{"owner", "seq"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.SetMode(Account)

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
	calls := m.Take()
	if err := m.Err(); err != nil {
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
	if q.Operation != "Query" || q.Table != "OrdersTable" || q.Consumed.Read != 2 || q.ItemBytes != fullBytes || q.Billed.Read != 2 || !q.Accounted {
		t.Errorf("query call = %+v; want dynalite 2, %d bytes, DynamoDB 2 RCU (5 KB consistent)", q, fullBytes)
	}
	p := calls[1]
	if p.ErrType != "ConditionalCheckFailedException" || p.Billed.Write != 5 || p.Consumed.Write != 0 {
		t.Errorf("failed put = %+v; want 5 WCU by DynamoDB's rules (the existing %d-byte item), none from the engine", p, fullBytes)
	}
}

// TestProxyRecords: in Record mode the proxy forwards each request as it
// is, records its operation, table and error type, and answers a fault
// itself without the request reaching the engine.
func TestProxyRecords(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies []string
	)
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.WriteHeader(400)
		io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"no table"}`)
	}))
	defer engine.Close()
	p, err := StartProxy(engine.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	post := func(op, body string) int {
		req, _ := http.NewRequest("POST", p.URL+"/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	const get = `{"TableName":"T1","Key":{"k":{"S":"a"}}}`
	post("GetItem", get)
	p.SetFault(func(c ProxyCall) *Fault {
		if c.Table == "T2" {
			return &Fault{Status: 500, Type: "InternalServerError"}
		}
		return nil
	})
	if got, want := post("PutItem", `{"TableName":"T2","Item":{}}`), 500; got != want {
		t.Errorf("faulted status = %d, want %d", got, want)
	}
	want := []ProxyCall{
		{Operation: "GetItem", Table: "T1", ErrType: "ResourceNotFoundException"},
		{Operation: "PutItem", Table: "T2", ErrType: "InternalServerError"},
	}
	got := p.Take()
	if len(got) != len(want) {
		t.Fatalf("calls = %+v, want %+v", got, want)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("call %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || bodies[0] != get {
		t.Errorf("the engine got %q, want only %q as it was sent", bodies, get)
	}
}

// TestIndexUnits: a write to an indexed table is billed again for each
// index entry it writes, by DynamoDB's rules.
func TestIndexUnits(t *testing.T) {
	sc := Schema{Keys: []string{"owner", "seq"}, Indexes: []Index{{Name: "by-document", Keys: []string{"doc"}, All: true}, {Name: "queue", Keys: []string{"qs", "qk"}, All: true}}}
	s := func(v string) map[string]any { return map[string]any{"S": v} }
	item := func(qs string, extra ...string) map[string]any {
		it := map[string]any{"owner": s("o"), "seq": map[string]any{"N": "1"}, "doc": s("d")}
		if qs != "" {
			it["qs"], it["qk"] = s(qs), s("2026#d")
		}
		for _, e := range extra {
			it[e] = s(strings.Repeat("x", 1500))
		}
		return it
	}
	for _, tc := range []struct {
		name     string
		old, new map[string]any
		want     float64
	}{
		{"CreatePutsBothEntries", nil, item("Pending"), 2},
		{"UnchangedWritesNone", item("Pending"), item("Pending"), 0},
		{"ChangeWithinTheSameQueue", item("Pending"), item("Pending", "ref"), 4}, // 1.5 KB items: 2 units per entry
		{"MoveToAnotherQueue", item("Pending"), item("Created"), 3},              // by-document rewritten; queue deleted and put
		{"LegacyJoinsTheQueue", item(""), item("Pending"), 2},                    // by-document rewritten; queue put
		{"DeleteRemovesBoth", item("Pending"), nil, 2},
		{"NoIndexes", nil, item("Pending"), 0},
		{"KeysOnlyUnchangedKeysWriteNone", item("Pending"), item("Pending", "ref"), 0},
		{"KeysOnlyKeyChangeDeletesAndPuts", item("Pending"), item("Created"), 2},
		{"KeysOnlyEntryIsKeysSized", nil, item("Pending", "ref"), 1}, // a 1.5 KB item, a small entry
		{"KeysOnlyLeaving", item("Pending"), item(""), 1},
		{"IncludeChangedAttributeRewrites", item("Pending"), item("Pending", "ref"), 2}, // ref is included: a 1.5 KB entry
		{"IncludeOtherAttributeWritesNone", item("Pending"), item("Pending", "other"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := sc
			switch {
			case tc.name == "NoIndexes":
				schema.Indexes = nil
			case strings.HasPrefix(tc.name, "KeysOnly"): // the queue index, projecting keys only
				schema.Indexes = []Index{{Name: "queue", Keys: []string{"qs", "qk"}}}
			case strings.HasPrefix(tc.name, "Include"): // the queue index, projecting ref too
				schema.Indexes = []Index{{Name: "queue", Keys: []string{"qs", "qk"}, Include: []string{"ref"}}}
			}
			if got := schema.indexUnits(tc.old, tc.new); got != tc.want {
				t.Errorf("indexUnits = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestKeyWrites: a write's units are broken down by partition key value,
// of the table (its units given: the first want) and of each index entry,
// with the item's own table key; a
// move between queues bills the old key for the delete and the new one
// for the put.
func TestKeyWrites(t *testing.T) {
	sc := Schema{Keys: []string{"owner", "seq"}, Indexes: []Index{
		{Name: "by-document", Keys: []string{"doc"}}, {Name: "queue", Keys: []string{"qs", "qk"}}}}
	s := func(v string) map[string]any { return map[string]any{"S": v} }
	item := func(qs string) map[string]any {
		return map[string]any{"owner": s("o"), "seq": map[string]any{"N": "7"}, "doc": s("d"),
			"qs": s(qs), "qk": s("2026#d"), "body": s(strings.Repeat("x", 1500))}
	}
	for _, tc := range []struct {
		name     string
		old, new map[string]any
		want     []KeyWrite
	}{
		{"CreatePutsEachEntryUnderItsKey", nil, item("Pending#03"), []KeyWrite{
			{"", "o", "o", 2}, {"by-document", "d", "o", 1}, {"queue", "Pending#03", "o", 1}}},
		{"MoveBillsTheOldKeyAndTheNew", item("Pending#03"), item("Created#03"), []KeyWrite{
			{"", "o", "o", 2}, {"queue", "Pending#03", "o", 1}, {"queue", "Created#03", "o", 1}}},
		{"UnchangedKeysOnlyEntriesWriteNothing", item("Pending#03"), func() map[string]any {
			it := item("Pending#03")
			it["body"] = s("changed")
			return it
		}(), []KeyWrite{{"", "o", "o", 2}}},
		{"DeleteBillsTheEntriesItHad", item("Pending#03"), nil, []KeyWrite{
			{"", "o", "o", 2}, {"by-document", "d", "o", 1}, {"queue", "Pending#03", "o", 1}}},
		{"NumberKeysAreTheirDigits", nil, map[string]any{"owner": map[string]any{"N": "42"}, "seq": map[string]any{"N": "1"}},
			[]KeyWrite{{"", "42", "42", 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sc.writes(tc.want[0].Units, tc.old, tc.new); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("writes = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestBatchReadUnits: a BatchGetItem is billed as a GetItem per key
// processed: each found item rounded up to 4 KB, a key with no item at
// the minimum, the unprocessed keys not at all.
func TestBatchReadUnits(t *testing.T) {
	big := strings.Repeat("x", 5000) // with its name "b": 5,001 bytes, 2 units
	req := map[string]json.RawMessage{"RequestItems": json.RawMessage(`{"T":{"Keys":[{"k":{"S":"1"}},{"k":{"S":"2"}},{"k":{"S":"3"}},{"k":{"S":"4"}}]}}`)}
	body := `{"Responses":{"T":[{"b":{"S":"` + big + `"}},{"k":{"S":"2"}}]},"UnprocessedKeys":{"T":{"Keys":[{"k":{"S":"4"}}]}}}`
	bytes, units, err := batchReadUnits(req, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	// Eventually consistent: 2/2 + 1/2 + 1/2 (key 3, not found).
	if bytes != 5001+2 || units != 2 {
		t.Errorf("batchReadUnits = %d bytes, %v units; want 5003, 2", bytes, units)
	}
	req["RequestItems"] = json.RawMessage(`{"T":{"Keys":[{"k":{"S":"1"}}],"ConsistentRead":true}}`)
	if _, units, _ := batchReadUnits(req, []byte(`{"Responses":{"T":[{"b":{"S":"`+big+`"}}]}}`)); units != 2 {
		t.Errorf("consistent: %v units, want 2", units)
	}
}

// TestRetriesAreNotTheCodesCalls: the proxy records the SDK's attempt
// number, and Operations counts a request once however often the SDK sent
// it (a retry after an attempt timed out on a loaded machine is not a call
// more of the code's).
func TestRetriesAreNotTheCodesCalls(t *testing.T) {
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{}`)
	}))
	defer engine.Close()
	p, err := StartProxy(engine.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, header := range []string{"", "attempt=1; max=3", "attempt=2; max=3", "ttl=20261126T212200Z; attempt=3; max=3"} {
		req, _ := http.NewRequest("POST", p.URL+"/", strings.NewReader(`{"TableName":"t-1"}`))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.Query")
		if header != "" {
			req.Header.Set("amz-sdk-request", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	calls := p.Take()
	var attempts []int
	for _, c := range calls {
		attempts = append(attempts, c.Attempt)
	}
	if got, want := fmt.Sprint(attempts), "[0 1 2 3]"; got != want {
		t.Errorf("attempts = %s, want %s", got, want)
	}
	e := &Env{Names: map[string]string{"T": "t-1"}}
	if got, want := e.Operations(calls), "Query:T=2"; got != want {
		t.Errorf("Operations = %s, want %s", got, want)
	}
}
