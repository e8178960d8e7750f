package catalogue_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/catalogue"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// world is the catalogue's workflows over fresh tables holding the sample
// catalogue, and the tables behind them.
type world struct {
	ctx      context.Context
	env      *storetest.Env
	db       *store.DB
	articles *store.Articles
	cat      *store.Catalogue
	admin    *catalogue.Admin
	mu       sync.Mutex // guards now: concurrent edits read the clock together
	now      time.Time
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := storetest.New(t)
	functest.Seed(t, env)
	db := env.DB()
	w := &world{ctx: context.Background(), env: env, db: db,
		articles: db.Articles(env.Table("ArticlesTable")).WithLog(env.Table("ArticleLogTable")),
		cat:      db.Catalogue(env.Table("CatalogueTable")),
		now:      time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	w.admin = &catalogue.Admin{
		Articles: w.articles,
		IDs:      db.IDs(env.Table("CountersTable"), store.IDBlock),
		Publish: func(ctx context.Context, now time.Time) error {
			_, err := w.cat.Publish(ctx, w.articles, now)
			return err
		},
		Now: func() time.Time {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.now = w.now.Add(time.Second)
			return w.now
		},
	}
	return w
}

func ptr[T any](v T) *T { return &v }

// rent is the sample article "Rent Agreement" in Karnataka (100-500).
func rent() stampduty.Article {
	return stampduty.Article{PurposeName: "Rent Agreement", State: "Karnataka", Min: 100, Max: 500}
}

// published returns the published catalogue's article of (purpose, state), and whether it has one.
func (w *world) published(t *testing.T, purpose, state string) (stampduty.Article, bool) {
	t.Helper()
	all, err := store.NewSnapshotCache(w.cat, nil, time.Minute).All(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range all {
		if a.PurposeName == purpose && a.State == state {
			return a, true
		}
	}
	return stampduty.Article{}, false
}

// log returns the change log of (purpose, state).
func (w *world) log(t *testing.T, purpose, state string) []stampduty.ArticleChange {
	t.Helper()
	_, log, err := w.admin.Log(w.ctx, purpose, state)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

func wantCode(t *testing.T, err error, code stampduty.Code) {
	t.Helper()
	if got := stampduty.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

func TestAdd(t *testing.T) {
	w := newWorld(t)
	art := stampduty.Article{PurposeName: "Gift Deed", State: "Goa", Min: 50, Max: 900, Fixed: ptr[int64](300)}

	t.Run("adds the article, logs who, when and every field, and publishes it", func(t *testing.T) {
		e, err := w.admin.Add(w.ctx, "asha@example.com", art)
		if err != nil {
			t.Fatal(err)
		}
		if e.ID == 0 || e.DocumentID == "" || e.Version != 1 || e.Retired() {
			t.Errorf("added %+v: want an id, a documentId, version 1, not retired", e)
		}
		log := w.log(t, "Gift Deed", "Goa")
		want := []stampduty.ArticleChange{{Version: 1, Kind: stampduty.ArticleAdded, By: "asha@example.com", At: w.now, Changes: []stampduty.FieldChange{
			{Field: "min", After: "50"}, {Field: "max", After: "900"}, {Field: "fixed", After: "300"},
			{Field: "toFollowConsiderationPrice", After: "false"}, {Field: "amountPercentConsideration", After: "null"}}}}
		if !reflect.DeepEqual(log, want) {
			t.Errorf("log = %+v, want %+v", log, want)
		}
		if got, ok := w.published(t, "Gift Deed", "Goa"); !ok || *got.Fixed != 300 || got.DocumentID != e.DocumentID {
			t.Errorf("published %+v (%v), want the added article", got, ok)
		}
	})
	t.Run("an article that exists is a conflict", func(t *testing.T) {
		_, err := w.admin.Add(w.ctx, "asha@example.com", rent())
		wantCode(t, err, stampduty.ECONFLICT)
		if got := len(w.log(t, "Rent Agreement", "Karnataka")); got != 0 {
			t.Errorf("the refused add logged %d changes", got)
		}
	})
	t.Run("an invalid article is refused with its fields", func(t *testing.T) {
		bad := art
		bad.PurposeName, bad.Min, bad.Max = "New", 10, 5
		_, err := w.admin.Add(w.ctx, "asha@example.com", bad)
		wantCode(t, err, stampduty.EINVALID)
		var e *stampduty.Error
		if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Path != "max" {
			t.Errorf("error %v: want max's field", err)
		}
	})
	t.Run("who made the change is required", func(t *testing.T) {
		for _, by := range []string{"", "two words", "caf\u00e9@example.com"} {
			_, err := w.admin.Add(w.ctx, by, stampduty.Article{PurposeName: "Other", State: "Goa", Max: 1})
			wantCode(t, err, stampduty.EINVALID)
		}
	})
}

func TestEdit(t *testing.T) {
	w := newWorld(t)
	old, err := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("logs the changed fields only, before and after, and publishes", func(t *testing.T) {
		art := rent()
		art.Max, art.Fixed = 800, ptr[int64](250)
		e, err := w.admin.Edit(w.ctx, "ravi@example.com", old.Version, art)
		if err != nil {
			t.Fatal(err)
		}
		if e.ID != old.ID || e.DocumentID != old.DocumentID || e.Version != old.Version+1 {
			t.Errorf("edited %+v: want the id and documentId kept, the next version", e)
		}
		want := []stampduty.ArticleChange{{Version: old.Version + 1, Kind: stampduty.ArticleEdited, By: "ravi@example.com", At: w.now,
			Changes: []stampduty.FieldChange{{Field: "max", Before: "500", After: "800"}, {Field: "fixed", Before: "null", After: "250"}}}}
		if log := w.log(t, "Rent Agreement", "Karnataka"); !reflect.DeepEqual(log, want) {
			t.Errorf("log = %+v, want %+v", log, want)
		}
		if got, _ := w.published(t, "Rent Agreement", "Karnataka"); got.Max != 800 {
			t.Errorf("published max %d, want 800", got.Max)
		}
	})
	t.Run("an edit from a version read before another change is a conflict and writes nothing", func(t *testing.T) {
		art := rent()
		art.Max = 999
		_, err := w.admin.Edit(w.ctx, "meera@example.com", old.Version, art)
		wantCode(t, err, stampduty.ECONFLICT)
		if e, _ := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka"); e.Max != 800 {
			t.Errorf("max %d after the refused edit, want 800", e.Max)
		}
	})
	t.Run("the write's condition refuses a change stored after the read", func(t *testing.T) {
		// Both writers read version 1; the second write must not land.
		e, _ := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
		first, second := next(e, 600, "first@example.com"), next(e, 700, "second@example.com")
		if err := w.articles.Write(w.ctx, &e, first); err != nil {
			t.Fatal(err)
		}
		wantCode(t, w.articles.Write(w.ctx, &e, second), stampduty.ECONFLICT)
		if got, _ := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka"); got.Max != 600 || got.Last.By != "first@example.com" {
			t.Errorf("stored max %d by %s, want the first write's 600", got.Max, got.Last.By)
		}
	})
	t.Run("two admins editing at once: one wins, the other is told, nothing is lost", func(t *testing.T) {
		e, _ := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				art := e.Article
				art.Max = int64(1000 + i)
				_, errs[i] = w.admin.Edit(w.ctx, "admin"+strconv.Itoa(i)+"@example.com", e.Version, art)
			})
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch stampduty.ErrorCode(err) {
			case "":
				if won >= 0 {
					t.Fatalf("both edits succeeded")
				}
				won = i
			case stampduty.ECONFLICT:
			default:
				t.Fatalf("edit %d: %v", i, err)
			}
		}
		if won < 0 {
			t.Fatalf("no edit won: %v", errs)
		}
		got, _ := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
		if got.Max != int64(1000+won) || got.Version != e.Version+1 {
			t.Errorf("stored max %d version %d, want the winner's %d at %d", got.Max, got.Version, 1000+won, e.Version+1)
		}
		if log := w.log(t, "Rent Agreement", "Karnataka"); log[0].By != "admin"+strconv.Itoa(won)+"@example.com" || len(log) != int(got.Version-old.Version) {
			t.Errorf("log %+v: want one entry per version, the winner's newest", log)
		}
	})
	t.Run("an edit that changes nothing writes nothing", func(t *testing.T) {
		e, _ := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
		got, err := w.admin.Edit(w.ctx, "ravi@example.com", e.Version, e.Article)
		if err != nil || got.Version != e.Version {
			t.Errorf("Edit = version %d, %v; want %d unchanged", got.Version, err, e.Version)
		}
	})
	t.Run("an article that does not exist is not found", func(t *testing.T) {
		_, err := w.admin.Edit(w.ctx, "ravi@example.com", 0, stampduty.Article{PurposeName: "Nothing", State: "Goa", Max: 1})
		wantCode(t, err, stampduty.ENOTFOUND)
	})
}

// next is e changed to max by, as a writer that read e would write it.
func next(e stampduty.CatalogueEntry, max int64, by string) stampduty.CatalogueEntry {
	n := e
	n.Max, n.Version = max, e.Version+1
	n.Last = &stampduty.ArticleChange{Version: n.Version, Kind: stampduty.ArticleEdited, By: by, At: time.Now().UTC(),
		Changes: stampduty.DiffArticles(&e.Article, n.Article)}
	return n
}

// creator is the create-order workflow over w's tables, reading articles
// as create-order does.
func (w *world) creator() *orders.Creator {
	return &orders.Creator{
		Articles: w.db.Articles(w.env.Table("ArticlesTable")),
		IDs:      w.db.IDs(w.env.Table("CountersTable"), store.IDBlock),
		Orders:   w.db.Orders(w.env.Table("OrdersTable")),
		Keys:     w.db.Idempotency(w.env.Table("IdempotencyTable")),
		Now:      time.Now,
	}
}

// orderBody is a create-order body for purpose in state, of amount.
func orderBody(purpose, state string, amount int) *stampduty.OrderBody {
	str := func(s string) stampduty.Value { return stampduty.Value{Kind: stampduty.String, Text: s} }
	return stampduty.NewOrderBody([]stampduty.Field{
		{Name: "amount", Value: stampduty.Value{Kind: stampduty.Number, Text: strconv.Itoa(amount)}},
		{Name: "considerationPrice", Value: stampduty.Value{Kind: stampduty.Number, Text: "0"}},
		{Name: "purpose", Value: str(purpose)}, {Name: "state", Value: str(state)},
		{Name: "paidBy", Value: str("First Party")}, {Name: "firstPartyMobileNumber", Value: str("9876543210")},
		{Name: "firstPartyName", Value: str("Asha Rao")}, {Name: "secondPartyName", Value: str("Vikram Shah")},
	})
}

func TestEditNeverChangesAnOrder(t *testing.T) {
	w := newWorld(t)
	ords := w.db.Orders(w.env.Table("OrdersTable"))
	doc, err := w.creator().Create(w.ctx, "acme", orderBody("Rent Agreement", "Karnataka", 200), nil)
	if err != nil {
		t.Fatal(err)
	}
	before, err := ords.ByDocument(w.ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
	art := e.Article
	art.Min, art.Max, art.Fixed = 300, 900, ptr[int64](450)
	if _, err := w.admin.Edit(w.ctx, "ravi@example.com", e.Version, art); err != nil {
		t.Fatal(err)
	}
	if _, err := w.admin.Retire(w.ctx, "ravi@example.com", "Rent Agreement", "Karnataka"); err != nil {
		t.Fatal(err)
	}
	after, err := ords.ByDocument(w.ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Errorf("the order after the edit and the retirement:\n%+v\nwant as created:\n%+v", after, before)
	}
}

func TestRetire(t *testing.T) {
	w := newWorld(t)
	e, err := w.admin.Retire(w.ctx, "asha@example.com", "Rent Agreement", "Karnataka")
	if err != nil {
		t.Fatal(err)
	}
	notFound := stampduty.NotFoundPurpose("Rent Agreement").Error()

	t.Run("a new order answers as for an article that does not exist", func(t *testing.T) {
		_, err := w.creator().Create(w.ctx, "acme", orderBody("Rent Agreement", "Karnataka", 200), nil)
		wantCode(t, err, stampduty.ENOTFOUND)
		if err.Error() != notFound {
			t.Errorf("create: %q, want %q", err, notFound)
		}
	})
	t.Run("a quote answers as for an article that does not exist", func(t *testing.T) {
		versions := store.NewSnapshotCache(w.cat, nil, time.Minute)
		q := orders.Quoter{Articles: store.NewVersionedArticleCache(w.db.Articles(w.env.Table("ArticlesTable")), versions)}
		_, err := q.Quote(w.ctx, stampduty.QuoteQuery{Purpose: []string{"Rent Agreement"}, State: []string{"Karnataka"}, Amount: []string{"200"}})
		wantCode(t, err, stampduty.ENOTFOUND)
		if err.Error() != notFound {
			t.Errorf("quote: %q, want %q", err, notFound)
		}
	})
	t.Run("the public catalogue leaves it out", func(t *testing.T) {
		if _, ok := w.published(t, "Rent Agreement", "Karnataka"); ok {
			t.Error("the published catalogue lists the retired article")
		}
	})
	t.Run("admins still see it, retired, with its change", func(t *testing.T) {
		list, err := w.admin.List(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		var seen bool
		for _, a := range list {
			if a.DocumentID == e.DocumentID {
				seen = a.Retired() && a.Max == 500
			}
		}
		if !seen {
			t.Error("the admins' list lacks the retired article, or shows it active")
		}
		want := []stampduty.FieldChange{{Field: "retired", Before: "false", After: "true"}}
		if log := w.log(t, "Rent Agreement", "Karnataka"); len(log) != 1 || log[0].Kind != stampduty.ArticleRetired || !reflect.DeepEqual(log[0].Changes, want) {
			t.Errorf("log %+v: want one retirement", log)
		}
	})
	t.Run("retiring it again changes nothing", func(t *testing.T) {
		again, err := w.admin.Retire(w.ctx, "ravi@example.com", "Rent Agreement", "Karnataka")
		if err != nil || again.Version != e.Version || !again.RetiredAt.Equal(e.RetiredAt) {
			t.Errorf("Retire again = %+v, %v; want it as it was", again, err)
		}
	})
	t.Run("a retired article cannot be edited", func(t *testing.T) {
		art := rent()
		art.Max = 700
		_, err := w.admin.Edit(w.ctx, "ravi@example.com", e.Version, art)
		wantCode(t, err, stampduty.ECONFLICT)
	})
	t.Run("adding it again brings it back, with its id and documentId", func(t *testing.T) {
		art := rent()
		art.Max = 650
		back, err := w.admin.Add(w.ctx, "ravi@example.com", art)
		if err != nil {
			t.Fatal(err)
		}
		if back.ID != e.ID || back.DocumentID != e.DocumentID || back.Retired() {
			t.Errorf("added again: %+v; want the id and documentId of %+v, not retired", back, e)
		}
		if _, err := w.creator().Create(w.ctx, "acme", orderBody("Rent Agreement", "Karnataka", 600), nil); err != nil {
			t.Errorf("create after it came back: %v", err)
		}
		log := w.log(t, "Rent Agreement", "Karnataka")
		if len(log) != 2 || log[0].Changes[len(log[0].Changes)-1] != (stampduty.FieldChange{Field: "retired", Before: "true", After: "false"}) {
			t.Errorf("log %+v: want the add bringing it back, newest first", log)
		}
	})
}

func TestLogKeepsAChangeWhoseEntryDidNotReachTheLog(t *testing.T) {
	w := newWorld(t)
	e, _ := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
	art := e.Article
	art.Max = 600
	e, err := w.admin.Edit(w.ctx, "first@example.com", e.Version, art)
	if err != nil {
		t.Fatal(err)
	}
	// As if its writer had stopped right after the article's write.
	_, err = w.db.Client().DeleteItem(w.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(w.env.Table("ArticleLogTable")),
		Key: map[string]types.AttributeValue{"doc": &types.AttributeValueMemberS{Value: e.DocumentID}, "v": &types.AttributeValueMemberN{Value: strconv.FormatInt(e.Version, 10)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the log shows it from the article's item", func(t *testing.T) {
		if log := w.log(t, "Rent Agreement", "Karnataka"); len(log) != 1 || log[0].By != "first@example.com" {
			t.Errorf("log %+v: want the first change", log)
		}
	})
	t.Run("the next change puts it into the log table", func(t *testing.T) {
		art.Max = 700
		if _, err := w.admin.Edit(w.ctx, "second@example.com", e.Version, art); err != nil {
			t.Fatal(err)
		}
		out, err := w.db.Client().Query(w.ctx, &dynamodb.QueryInput{TableName: aws.String(w.env.Table("ArticleLogTable")),
			KeyConditionExpression:    aws.String("doc = :d"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":d": &types.AttributeValueMemberS{Value: e.DocumentID}}})
		if err != nil {
			t.Fatal(err)
		}
		if out.Count != 2 {
			t.Errorf("the log table holds %d entries, want 2", out.Count)
		}
	})
}

func TestImport(t *testing.T) {
	w := newWorld(t)
	all, err := w.articles.Entries(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The file: Rent Agreement changed, one article new, the rest as they
	// are but for Indemnity Bond, left out.
	var file []stampduty.Article
	for _, e := range all {
		switch e.PurposeName {
		case "Indemnity Bond":
		case "Rent Agreement":
			a := e.Article
			a.Max = 550
			file = append(file, a)
		default:
			file = append(file, e.Article)
		}
	}
	file = append(file, stampduty.Article{PurposeName: "Gift Deed", State: "Goa", Min: 1, Max: 10})

	t.Run("the preview says what would change and writes nothing", func(t *testing.T) {
		db, proxy := w.env.ProxiedDB()
		admin := *w.admin
		admin.Articles = db.Articles(w.env.Table("ArticlesTable")).WithLog(w.env.Table("ArticleLogTable"))
		p, err := admin.Preview(w.ctx, file, true)
		if err != nil {
			t.Fatal(err)
		}
		if p.Add != 1 || p.Change != 1 || p.Retire != 1 || p.Leave != len(all)-2 {
			t.Errorf("plan: add %d, change %d, retire %d, leave %d; want 1, 1, 1, %d", p.Add, p.Change, p.Retire, p.Leave, len(all)-2)
		}
		for _, s := range p.Steps {
			if s.After.PurposeName == "Rent Agreement" && !reflect.DeepEqual(s.Changes, []stampduty.FieldChange{{Field: "max", Before: "500", After: "550"}}) {
				t.Errorf("Rent Agreement's changes: %+v", s.Changes)
			}
		}
		if got, want := w.env.Operations(proxy.Take()), "Scan:ArticlesTable=1"; got != want {
			t.Errorf("the preview called %s, want %s", got, want)
		}
	})
	t.Run("without retiring, what the file leaves out is left", func(t *testing.T) {
		p, err := w.admin.Preview(w.ctx, file, false)
		if err != nil {
			t.Fatal(err)
		}
		if p.Retire != 0 || p.Leave != len(all)-1 {
			t.Errorf("plan: retire %d, leave %d; want 0, %d", p.Retire, p.Leave, len(all)-1)
		}
	})
	t.Run("the import applies the plan, logging each change as imported", func(t *testing.T) {
		p, err := w.admin.Preview(w.ctx, file, true)
		if err != nil {
			t.Fatal(err)
		}
		r, err := w.admin.Import(w.ctx, "asha@example.com", p)
		if err != nil {
			t.Fatal(err)
		}
		if r != (catalogue.ImportResult{Added: 1, Changed: 1, Retired: 1, Left: len(all) - 2}) {
			t.Errorf("result %+v", r)
		}
		for _, k := range [][2]string{{"Rent Agreement", "Karnataka"}, {"Gift Deed", "Goa"}, {"Indemnity Bond", "West Bengal"}} {
			if log := w.log(t, k[0], k[1]); len(log) != 1 || log[0].Kind != stampduty.ArticleImported || log[0].By != "asha@example.com" {
				t.Errorf("%s's log: %+v, want one imported change", k[0], log)
			}
		}
		if log := w.log(t, "Loan Agreement", "Gujarat"); len(log) != 0 {
			t.Errorf("an article the import left has a log: %+v", log)
		}
		if _, ok := w.published(t, "Indemnity Bond", "West Bengal"); ok {
			t.Error("the retired article is still published")
		}
		if a, _ := w.published(t, "Rent Agreement", "Karnataka"); a.Max != 550 {
			t.Errorf("published max %d, want 550", a.Max)
		}
	})
	t.Run("a plan older than a change is a conflict", func(t *testing.T) {
		file[0].Min++
		p, err := w.admin.Preview(w.ctx, file, false)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := w.articles.Entry(w.ctx, file[0].PurposeName, file[0].State)
		edit := e.Article
		edit.Max++
		if _, err := w.admin.Edit(w.ctx, "ravi@example.com", e.Version, edit); err != nil {
			t.Fatal(err)
		}
		_, err = w.admin.Import(w.ctx, "asha@example.com", p)
		wantCode(t, err, stampduty.ECONFLICT)
		if got, _ := w.articles.Entry(w.ctx, file[0].PurposeName, file[0].State); got.Max != edit.Max {
			t.Errorf("max %d: the import overwrote the edit's %d", got.Max, edit.Max)
		}
	})
}

func TestEditCalls(t *testing.T) {
	w := newWorld(t)
	db, proxy := w.env.ProxiedDB()
	admin := *w.admin
	arts := db.Articles(w.env.Table("ArticlesTable")).WithLog(w.env.Table("ArticleLogTable"))
	admin.Articles = arts
	admin.Publish = func(ctx context.Context, now time.Time) error { return nil } // measured apart (the table design)
	e, _ := w.articles.Entry(w.ctx, "Rent Agreement", "Karnataka")
	art := e.Article
	art.Max = 600
	if e, err := admin.Edit(w.ctx, "ravi@example.com", e.Version, art); err != nil {
		t.Fatal(err)
	} else {
		proxy.SetMode(storetest.Account)
		art.Max = 700
		if _, err := admin.Edit(w.ctx, "ravi@example.com", e.Version, art); err != nil {
			t.Fatal(err)
		}
	}
	calls := proxy.Take()
	if got, want := w.env.Operations(calls), "GetItem:ArticlesTable=1 PutItem:ArticleLogTable=2 PutItem:ArticlesTable=1"; got != want {
		t.Errorf("an edit called %s, want %s", got, want)
	}
	var units storetest.Capacity
	for _, c := range calls {
		units = units.Add(c.Billed)
	}
	if units.Read != 1 || units.Write != 3 {
		t.Errorf("an edit costs %v RCU and %v WCU, want 1 and 3", units.Read, units.Write)
	}
	t.Logf("an edit (publish apart): %s, %v RCU, %v WCU", w.env.Operations(calls), units.Read, units.Write)
}

// TestByDoc: an article is found by its documentId, retired or not, with
// one Scan of the articles table and no read of its log; a documentId no
// article has is not found.
func TestByDoc(t *testing.T) {
	w := newWorld(t)
	e, err := w.admin.Retire(w.ctx, "asha@example.com", "Rent Agreement", "Karnataka")
	if err != nil {
		t.Fatal(err)
	}
	db, proxy := w.env.ProxiedDB()
	admin := *w.admin
	admin.Articles = db.Articles(w.env.Table("ArticlesTable")).WithLog(w.env.Table("ArticleLogTable"))
	got, err := admin.ByDoc(w.ctx, e.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	if got.PurposeName != "Rent Agreement" || got.State != "Karnataka" || got.Version != e.Version || !got.Retired() {
		t.Errorf("ByDoc = %+v; want the retired Rent Agreement at version %d", got, e.Version)
	}
	if got, want := w.env.Operations(proxy.Take()), "Scan:ArticlesTable=1"; got != want {
		t.Errorf("ByDoc called %s, want %s", got, want)
	}
	_, err = admin.ByDoc(w.ctx, "zzzzzzzzzzzzzzzzzzzzzzzz")
	wantCode(t, err, stampduty.ENOTFOUND)
}
