package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

// TestLogsHoldNoPersonalData: a create, a refused create, a conflict and a
// DynamoDB fault log one structured line each, with the request's route,
// status, latency and caller, and never a PAN, a mobile number, a party's
// name or address, a description or a token — not in error paths either.
func TestLogsHoldNoPersonalData(t *testing.T) {
	personal := map[string]any{
		"firstPartyName": "Zebulon Quixote", "secondPartyName": "Yolanda Xerxes",
		"firstPartyAddress": "77 Wisteria Lane, Mysuru", "secondPartyAddress": "9 Juniper Court, Hubli",
		"firstPartyPan": "QWERT9876Z", "secondPartyPan": "ZXCVB5432Y", "firstPartyMobileNumber": "9123456780",
		"description": "Secret lease for flat 12", "purchasedBy": "Ulysses Vantablack",
	}
	s := functest.New(t, "CreateOrderFunction", wire)
	headers, keyed := functest.DevHeaders, withKey("log-key")
	send := func(h map[string]string, edits map[string]any) functest.Response {
		m := map[string]any{}
		for k, v := range personal {
			m[k] = v
		}
		for k, v := range edits {
			m[k] = v
		}
		return s.Invoke(functest.Request("POST", "/api/live-orders", "", h, body(m)))
	}
	created := send(keyed, nil)
	statuses := []int{
		created.Status, // created
		send(keyed, map[string]any{"amount": 300}).Status,                                             // 409: same key, other body
		send(headers, map[string]any{"amount": 9999}).Status,                                          // 400: amount rule
		send(headers, map[string]any{"firstPartyPan": 1}).Status,                                      // 400: field
		send(map[string]string{"authorization": "Bearer sdt_" + strings.Repeat("Q", 43)}, nil).Status, // 401
	}
	s.Proxy.SetFault(func(storetest.ProxyCall) *storetest.Fault {
		return &storetest.Fault{Status: 500, Type: "InternalServerError"}
	})
	statuses = append(statuses, send(headers, nil).Status) // 503
	s.Proxy.SetFault(nil)
	if got, want := fmt.Sprint(statuses), "[200 409 400 400 401 503]"; got != want {
		t.Fatalf("statuses %s, want %s", got, want)
	}

	logs := s.Logs.String()
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	if len(lines) != len(statuses) {
		t.Fatalf("%d log lines for %d requests:\n%s", len(lines), len(statuses), logs)
	}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d is not JSON: %s", i, line)
		}
		if m["msg"] != "request" || m["route"] != "POST /api/live-orders" || int(m["status"].(float64)) != statuses[i] {
			t.Errorf("line %d: %s", i, line)
		}
		if _, ok := m["latency_ms"].(float64); !ok {
			t.Errorf("line %d has no latency: %s", i, line)
		}
		if statuses[i] != 401 && m["caller"] != localdb.DevOwner {
			t.Errorf("line %d has no caller: %s", i, line)
		}
		// The created order's documentId, for a query of everything about
		// it; a refused create made none.
		var want any
		if i == 0 {
			var answer struct{ OrderID string }
			if err := json.Unmarshal([]byte(created.Body), &answer); err != nil || answer.OrderID == "" {
				t.Fatalf("create answered %s", created.Body)
			}
			want = answer.OrderID
		}
		if m["order"] != want {
			t.Errorf("line %d: order = %v, want %v: %s", i, m["order"], want, line)
		}
	}
	if !strings.Contains(lines[5], `"cause":"Service Unavailable: dynamodb GetItem: InternalServerError"`) || !strings.Contains(lines[5], `"level":"ERROR"`) {
		t.Errorf("the 503 line has no cause: %s", lines[5])
	}
	secrets := []string{localdb.DevToken, "sdt_" + strings.Repeat("Q", 43), "log-key"}
	for _, v := range personal {
		secrets = append(secrets, v.(string))
	}
	secrets = append(secrets, "Zebulon", "Quixote", "Wisteria", "QWERT", "9123456780", "Secret lease")
	for _, secret := range secrets {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q", secret)
		}
	}
}
