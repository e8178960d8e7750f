package localdb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stampduty/shared/store"
	"stampduty/shared/testkit/samtemplate"
)

func TestSeed(t *testing.T) {
	ctx := context.Background()
	root := moduleRoot(t)
	srv, err := Start(ctx, root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	tmpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The local stack's names: the logical ids.
	if err := CreateTables(ctx, Client(srv.Endpoint), tmpl.Tables, nil); err != nil {
		t.Fatal(err)
	}
	db := store.New(Client(srv.Endpoint))

	t.Run("BadCatalogueRefusedWhole", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "bad.json")
		os.WriteFile(file, []byte(`[{"purpose_name":"Will","state":"Atlantis","min":5,"max":1,"fixed":null,"toFollowConsiderationPrice":false,"amountPercentConsideration":null}]`), 0o600)
		_, err := Seed(ctx, db, db.IDs("CountersTable", 10), LogicalNames, file, true)
		if err == nil || !strings.Contains(err.Error(), "[0].state") || !strings.Contains(err.Error(), "[0].max") {
			t.Fatalf("err = %v, want every row error", err)
		}
	})
	t.Run("NotJSONSaidOnce", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "bad.json")
		os.WriteFile(file, []byte("some invalid json"), 0o600)
		_, err := Seed(ctx, db, db.IDs("CountersTable", 10), LogicalNames, file, true)
		if err == nil {
			t.Fatal("Seed = nil, want an error")
		}
		if got, want := strings.Count(err.Error(), "not valid JSON"), 1; got != want {
			t.Errorf("error says %d times that the file is not JSON, want %d:\n%s", got, want, err)
		}
		if strings.Contains(err.Error(), "\n  : ") {
			t.Errorf("error has a row error with no path:\n%s", err)
		}
	})
	t.Run("SampleAndDevTokenTwice", func(t *testing.T) {
		for i := 0; i < 2; i++ {
			n, err := Seed(ctx, db, db.IDs("CountersTable", 10), LogicalNames, filepath.Join(root, SampleCatalogue), true)
			if err != nil || n != 11 {
				t.Fatalf("run %d: Seed = %d, %v; want 11, nil", i, n, err)
			}
		}
		owner, err := db.Tokens("TokensTable").Token(ctx, Hasher().Hash(DevToken))
		if err != nil || owner.Owner != DevOwner {
			t.Errorf("dev token = %+v, %v; want owner %s", owner, err, DevOwner)
		}
	})
	t.Run("IntoOtherNames", func(t *testing.T) {
		names := map[string]string{}
		for _, tb := range tmpl.Tables {
			names[tb.LogicalID] = "copy-" + tb.LogicalID
		}
		if err := CreateTables(ctx, Client(srv.Endpoint), tmpl.Tables, names); err != nil {
			t.Fatal(err)
		}
		n, err := Seed(ctx, db, db.IDs(names["CountersTable"], 10), func(id string) string { return names[id] }, filepath.Join(root, SampleCatalogue), false)
		if err != nil || n != 11 {
			t.Fatalf("Seed = %d, %v; want 11, nil", n, err)
		}
		all, err := db.Articles("copy-ArticlesTable").All(ctx)
		if err != nil || len(all) != 11 {
			t.Errorf("copy-ArticlesTable holds %d articles (%v), want 11", len(all), err)
		}
	})
}
