package callers_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/callers"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func wantCode(t *testing.T, err error, code stampduty.Code) {
	t.Helper()
	if got := stampduty.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

func TestCallers(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	functest.Seed(t, env) // the sample catalogue, and the dev caller's token (no record)
	db, proxy := env.ProxiedDB()
	hasher, err := auth.NewHasher(strings.Repeat("k", auth.MinKeyLength))
	if err != nil {
		t.Fatal(err)
	}
	tokens := db.Tokens(env.Table("TokensTable"))
	admin := &callers.Admin{Tokens: tokens, Orders: db.Orders(env.Table("OrdersTable")), Hasher: hasher, Now: time.Now}
	creator := &orders.Creator{Articles: db.Articles(env.Table("ArticlesTable")), IDs: db.IDs(env.Table("CountersTable"), store.IDBlock),
		Orders: db.Orders(env.Table("OrdersTable")), Keys: db.Idempotency(env.Table("IdempotencyTable")), Now: time.Now}
	summary := func(t *testing.T, owner string) callers.Summary {
		t.Helper()
		list, err := admin.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.Owner == owner {
				return s
			}
		}
		t.Fatalf("%s is not listed: %+v", owner, list)
		return callers.Summary{}
	}

	t.Run("a caller created without a token is listed, with who created it", func(t *testing.T) {
		if _, err := admin.Create(ctx, "asha@example.com", "acme"); err != nil {
			t.Fatal(err)
		}
		s := summary(t, "acme")
		if !s.Recorded || s.CreatedBy != "asha@example.com" || s.Active+s.Revoked+s.Orders != 0 {
			t.Errorf("acme: %+v", s)
		}
	})
	t.Run("a name is taken once", func(t *testing.T) {
		_, err := admin.Create(ctx, "ravi@example.com", "acme")
		wantCode(t, err, stampduty.ECONFLICT)
	})
	t.Run("a name no caller can have is refused", func(t *testing.T) {
		for _, owner := range []string{"", "two words", strings.Repeat("a", 65), "caller#x"} {
			_, err := admin.Create(ctx, "asha@example.com", owner)
			wantCode(t, err, stampduty.EINVALID)
		}
	})
	t.Run("a token for a caller that does not exist is refused", func(t *testing.T) {
		_, _, err := admin.Issue(ctx, "asha@example.com", "nobody", false)
		wantCode(t, err, stampduty.ENOTFOUND)
	})
	var secret string
	var tok auth.Token
	t.Run("an issued token works, and only its hash is stored", func(t *testing.T) {
		var err error
		if secret, tok, err = admin.Issue(ctx, "asha@example.com", "acme", false); err != nil {
			t.Fatal(err)
		}
		owner, err := auth.NewAuthenticator(tokens, hasher, auth.CacheTTL).Owner(ctx, "Bearer "+secret)
		if err != nil || owner != "acme" {
			t.Errorf("Owner = %q, %v; want acme", owner, err)
		}
		stored, err := tokens.Token(ctx, tok.Hash)
		if err != nil || stored.CreatedBy != "asha@example.com" || strings.Contains(stored.Hash, secret) {
			t.Errorf("stored %+v, %v", stored, err)
		}
	})
	t.Run("a test token works as the caller's test principal, never as the caller", func(t *testing.T) {
		if _, err := admin.Create(ctx, "asha@example.com", "globex"); err != nil {
			t.Fatal(err)
		}
		secret, tok, err := admin.Issue(ctx, "asha@example.com", "globex", true)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(secret, auth.TestPrefix) || !tok.Test || tok.Owner != "globex" {
			t.Errorf("issued %.12q, %+v; want a test token of globex", secret, tok)
		}
		owner, err := auth.NewAuthenticator(tokens, hasher, auth.CacheTTL).Owner(ctx, "Bearer "+secret)
		if got, want := owner, stampduty.TestOwnerOf("globex"); err != nil || got != want {
			t.Errorf("Owner = %q, %v; want %q", got, err, want)
		}
		stored, err := tokens.Token(ctx, tok.Hash)
		if err != nil || !stored.Test || strings.Contains(stored.Hash, secret) {
			t.Errorf("stored %+v, %v", stored, err)
		}
	})
	t.Run("the list counts tokens and orders from the per-caller counter, without scanning orders", func(t *testing.T) { listCountsFromTheCounter(t, env, proxy, admin, creator, tok.ID()) })
	t.Run("a caller's tokens are its own, revoked ones included, oldest first", func(t *testing.T) {
		got, err := admin.TokensOf(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Hash != tok.Hash || !got[0].Revoked() || got[1].Revoked() || got[1].Owner != "acme" {
			t.Errorf("acme's tokens: %+v; want the revoked one, then the active one", got)
		}
		dev, err := admin.TokensOf(ctx, "dev")
		if err != nil || len(dev) != 1 || dev[0].Owner != "dev" {
			t.Errorf("dev's tokens (a caller from before records): %+v, %v; want its one token", dev, err)
		}
		if _, err := admin.Create(ctx, "asha@example.com", "fresh"); err != nil {
			t.Fatal(err)
		}
		if none, err := admin.TokensOf(ctx, "fresh"); err != nil || none == nil || len(none) != 0 {
			t.Errorf("a new caller's tokens: %#v, %v; want an empty list", none, err)
		}
		_, err = admin.TokensOf(ctx, "nobody")
		wantCode(t, err, stampduty.ENOTFOUND)
		_, err = admin.TokensOf(ctx, "two words")
		wantCode(t, err, stampduty.EINVALID)
	})
	t.Run("a revoked token is refused by the next lookup, and no function caches one longer than 5 s", func(t *testing.T) {
		if _, err := auth.NewAuthenticator(tokens, hasher, auth.CacheTTL).Owner(ctx, "Bearer "+secret); stampduty.ErrorCode(err) != stampduty.EUNAUTHORIZED {
			t.Errorf("the revoked token: %v, want 401", err)
		}
		if auth.CacheTTL > 5*time.Second {
			t.Errorf("auth.CacheTTL is %v: a revoked token would work longer than decisions.md's 5 seconds", auth.CacheTTL)
		}
	})
	t.Run("a caller's record is no token", func(t *testing.T) {
		if _, err := tokens.Token(ctx, "caller#acme"); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
			t.Errorf("Token(caller#acme) = %v, want not found", err)
		}
		ts, err := tokens.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range ts {
			if strings.HasPrefix(tk.Hash, "caller#") {
				t.Errorf("token list holds a caller's record: %+v", tk)
			}
		}
	})
}

// listCountsFromTheCounter creates 3 orders of acme, issues it a token and
// revokes the token revoke, then checks that the list counts them from the
// per-caller counter: one Query per caller and one Scan of the tokens.
func listCountsFromTheCounter(t *testing.T, env *storetest.Env, proxy *storetest.Proxy, admin *callers.Admin, creator *orders.Creator, revoke string) {
	ctx := context.Background()
	for range 3 {
		body := stampduty.NewOrderBody([]stampduty.Field{
			{Name: "amount", Value: stampduty.Value{Kind: stampduty.Number, Text: "200"}},
			{Name: "considerationPrice", Value: stampduty.Value{Kind: stampduty.Number, Text: "0"}},
			{Name: "purpose", Value: stampduty.Value{Kind: stampduty.String, Text: "Rent Agreement"}},
			{Name: "state", Value: stampduty.Value{Kind: stampduty.String, Text: "Karnataka"}},
			{Name: "paidBy", Value: stampduty.Value{Kind: stampduty.String, Text: "First Party"}},
			{Name: "firstPartyMobileNumber", Value: stampduty.Value{Kind: stampduty.String, Text: "9876543210"}},
			{Name: "firstPartyName", Value: stampduty.Value{Kind: stampduty.String, Text: "Asha Rao"}},
			{Name: "secondPartyName", Value: stampduty.Value{Kind: stampduty.String, Text: "Vikram Shah"}},
		})
		if _, err := creator.Create(ctx, "acme", body, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := admin.Issue(ctx, "asha@example.com", "acme", false); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Revoke(ctx, revoke); err != nil {
		t.Fatal(err)
	}
	proxy.SetMode(storetest.Account)
	list, err := admin.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	calls := proxy.Take()
	byOwner := map[string]callers.Summary{}
	for _, s := range list {
		byOwner[s.Owner] = s
	}
	if s := byOwner["acme"]; s.Active != 1 || s.Revoked != 1 || s.Orders != 3 {
		t.Errorf("acme: %+v; want 1 active, 1 revoked, 3 orders", s)
	}
	if s, ok := byOwner["dev"]; !ok || s.Recorded || s.Active != 1 {
		t.Errorf("dev (a caller from before records): %+v, %v; want listed with its token", s, ok)
	}
	if got, want := env.Operations(calls), "Query:OrdersTable="+strconv.Itoa(len(list))+" Scan:TokensTable=1"; got != want {
		t.Errorf("the list called %s, want %s", got, want)
	}
	var units storetest.Capacity
	for _, c := range calls {
		units = units.Add(c.Billed)
	}
	if want := 0.5 + float64(len(list)); units.Read != want || units.Write != 0 {
		t.Errorf("the list of %d callers cost %v RCU, %v WCU; want %v RCU (the Scan 0.5, 1 per caller's count), 0 WCU", len(list), units.Read, units.Write, want)
	}
	t.Logf("the list of %d callers: %s, %v RCU", len(list), env.Operations(calls), units.Read)
}
