package duty

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestCanonical(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"KeysSortedNoWhitespace", `{ "b": "2", "a": {"d": true, "c": null} }`, `{"a":{"c":null,"d":true},"b":"2"}`},
		{"ArraysKeepTheirOrder", `{"components": [{"id":"z"}, {"id":"a"}]}`, `{"components":[{"id":"z"},{"id":"a"}]}`},
		// U+1F600 is D83D DE00 in UTF-16, before U+FB33: by code point
		// (or UTF-8 bytes) it would come after.
		{"KeysByUTF16CodeUnits", `{"\ufb33": "1", "\ud83d\ude00": "2"}`, "{\"\U0001F600\":\"2\",\"\uFB33\":\"1\"}"},
		{"EscapedOnlyWhereJSONRequires", `{"label": "\u00e9 <5% & \"x\"\u001f"}`, "{\"label\":\"é <5% & \\\"x\\\"\\u001f\"}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonical([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Canonical(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestHash(t *testing.T) {
	a, err := Hash([]byte(`{"total": {"rounding": {"step": "1", "mode": "up"}}, "legacy": true}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Hash([]byte("{\"legacy\":true,\n  \"total\":{\"rounding\":{\"mode\":\"up\",\"step\":\"1\"}}}"))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("one rule, spaced and ordered two ways, has two hashes: %s, %s", a, b)
	}
	sum := sha256.Sum256([]byte(`{"legacy":true,"total":{"rounding":{"mode":"up","step":"1"}}}`))
	if want := "sha256:" + hex.EncodeToString(sum[:]); a != want {
		t.Errorf("Hash = %s, want %s", a, want)
	}
	if _, err := Hash([]byte(`{"a": `)); err == nil {
		t.Error("Hash of broken JSON: no error")
	}
}
