package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/stampduty"
)

// Catalogue is the catalogue table: published snapshots of the articles
// table, so that the public routes never read the articles table whole.
// Key `k` (S): `version` holds the current snapshot's version, its number
// of articles and pages (and the previous snapshot's, kept a while for the
// instances still reading it); `<version>#<order>#<page, 4 digits>` holds
// one page: PageArticles articles in one of stampduty.ArticleOrders (id,
// id:desc, purpose_name, …: the list's one-field sorts, ties by id), as
// gzipped JSON in `z` (B).
type Catalogue struct {
	db    *DB
	table string
}

// Catalogue returns the catalogue table of the given name.
func (db *DB) Catalogue(table string) *Catalogue { return &Catalogue{db: db, table: table} }

// PageArticles is how many articles one snapshot page holds: a page of
// the list (at most 100 articles) spans at most two snapshot pages, and a
// page of typical articles is about 2-3 KB gzipped (one 0.5 RCU read).
const PageArticles = 100

// maxPageBytes is the largest gzipped page a publish writes: below
// DynamoDB's 400 KB item, with room for the key.
const maxPageBytes = 390 << 10

// versionKey is the key of the item naming the current snapshot.
const versionKey = "version"

// idOrder is the catalogue in id order: the default list's order, the one
// the whole catalogue is read in, and the one the version digests.
const idOrder = "id"

// Snapshot is what the version item says of a published catalogue.
type Snapshot struct {
	Version string `dynamodbav:"ver"`
	// Articles is how many articles it holds, Pages how many pages each
	// order has.
	Articles int `dynamodbav:"n"`
	Pages    int `dynamodbav:"pages"`
	// Prev and PrevPages are the snapshot it replaced, whose pages are
	// removed when the next one is published.
	Prev      string `dynamodbav:"prev,omitempty"`
	PrevPages int    `dynamodbav:"prevPages,omitempty"`
	At        string `dynamodbav:"at"`
}

// snapshotItem is the version item as stored.
type snapshotItem struct {
	K string `dynamodbav:"k"`
	Snapshot
}

// pageItem is a snapshot page as stored.
type pageItem struct {
	K string `dynamodbav:"k"`
	Z []byte `dynamodbav:"z"`
}

// pageArticle is an article inside a page's JSON.
type pageArticle struct {
	ID     int64  `json:"i"`
	Doc    string `json:"d"`
	P      string `json:"p"`
	S      string `json:"s"`
	Min    int64  `json:"lo"`
	Max    int64  `json:"hi"`
	Fixed  *int64 `json:"f,omitempty"`
	Follow bool   `json:"c,omitempty"`
	Factor string `json:"x,omitempty"`
	// Rules is the article's duty_rules; absent for an article whose
	// rules are only derived from its legacy fields (RulesDerived).
	Rules json.RawMessage `json:"r,omitempty"`
	V     int64           `json:"v,omitempty"`
}

func pageKey(version, order string, page int) string {
	return fmt.Sprintf("%s#%s#%04d", version, order, page)
}

// encodePages returns arts, in order, as the JSON of each page, and a
// digest of them.
func encodePages(arts []stampduty.Article) (pages [][]byte, digest string, err error) {
	h := sha256.New()
	for chunk := range slices.Chunk(arts, PageArticles) {
		out := make([]pageArticle, len(chunk))
		for i, a := range chunk {
			out[i] = pageArticle{ID: a.ID, Doc: a.DocumentID, P: a.PurposeName, S: a.State, Min: a.Min, Max: a.Max,
				Fixed: a.Fixed, Follow: a.FollowsConsideration}
			if a.Factor != nil {
				out[i].Factor = a.Factor.String()
			}
			if a.Rules != nil && !a.RulesDerived {
				out[i].Rules, _ = a.Rules.MarshalJSON() // never fails
			}
			out[i].V = a.CatalogueVersion
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, "", fmt.Errorf("encode catalogue page: %w", err)
		}
		h.Write(b)
		pages = append(pages, b)
	}
	return pages, hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// decodePage reads a page's gzipped JSON.
func decodePage(z []byte) ([]stampduty.Article, error) {
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, stampduty.Internal(fmt.Errorf("catalogue page: %w", err))
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, stampduty.Internal(fmt.Errorf("catalogue page: %w", err))
	}
	var in []pageArticle
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, stampduty.Internal(fmt.Errorf("catalogue page: %w", err))
	}
	arts := make([]stampduty.Article, len(in))
	for i, p := range in {
		arts[i] = stampduty.Article{ID: p.ID, DocumentID: p.Doc, PurposeName: p.P, State: p.S, Min: p.Min, Max: p.Max,
			Fixed: p.Fixed, FollowsConsideration: p.Follow}
		if p.Factor != "" {
			d, err := stampduty.ParseDecimal(p.Factor)
			if err != nil {
				return nil, stampduty.Internal(fmt.Errorf("catalogue page: factor: %w", err))
			}
			arts[i].Factor = &d
		}
		arts[i].CatalogueVersion = p.V
		if p.Rules != nil {
			if err := json.Unmarshal(p.Rules, &arts[i].Rules); err != nil {
				return nil, stampduty.Internal(fmt.Errorf("catalogue page: %w", err))
			}
			continue
		}
		rules, err := arts[i].DutyRules()
		if err != nil {
			return nil, err
		}
		arts[i].Rules, arts[i].RulesDerived = rules, true
	}
	return arts, nil
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // the level is valid
	w.Write(b)                                              // a bytes.Buffer does not fail
	w.Close()
	return buf.Bytes()
}

// Current returns the current snapshot, and false when none was ever
// published (a stack whose articles were imported before snapshots). One
// GetItem of a small item: 0.5 RCU, 1 when consistent.
func (c *Catalogue) Current(ctx context.Context, consistent bool) (Snapshot, bool, error) {
	out, err := c.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(c.table),
		Key:            map[string]types.AttributeValue{"k": avS(versionKey)},
		ConsistentRead: aws.Bool(consistent),
	})
	if err != nil {
		return Snapshot{}, false, fail("GetItem", err)
	}
	if out.Item == nil {
		return Snapshot{}, false, nil
	}
	var it snapshotItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return Snapshot{}, false, stampduty.Internal(fmt.Errorf("decode catalogue version: %w", err))
	}
	return it.Snapshot, true, nil
}

// Page reads page i of order of snapshot version with one GetItem, or
// false when it is gone (a newer snapshot replaced it twice since).
func (c *Catalogue) Page(ctx context.Context, version, order string, i int) ([]stampduty.Article, bool, error) {
	out, err := c.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(c.table),
		Key:       map[string]types.AttributeValue{"k": avS(pageKey(version, order, i))},
	})
	if err != nil {
		return nil, false, fail("GetItem", err)
	}
	if out.Item == nil {
		return nil, false, nil
	}
	arts, err := decodeStoredPage(out.Item)
	return arts, err == nil, err
}

func decodeStoredPage(item map[string]types.AttributeValue) ([]stampduty.Article, error) {
	var it pageItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return nil, stampduty.Internal(fmt.Errorf("decode catalogue page: %w", err))
	}
	return decodePage(it.Z)
}

// Pages reads the given pages of order of snapshot version with
// BatchGetItem (batchKeys pages a call), asking again for what DynamoDB
// leaves unprocessed. A page that is gone is absent from the answer.
func (c *Catalogue) Pages(ctx context.Context, version, order string, pages []int) (map[int][]stampduty.Article, error) {
	got := make(map[int][]stampduty.Article, len(pages))
	byKey := make(map[string]int, len(pages))
	var keys []map[string]types.AttributeValue
	for _, i := range pages {
		byKey[pageKey(version, order, i)] = i
		keys = append(keys, map[string]types.AttributeValue{"k": avS(pageKey(version, order, i))})
	}
	err := c.db.batchGet(ctx, c.table, keys, func(item map[string]types.AttributeValue) error {
		var it pageItem
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return stampduty.Internal(fmt.Errorf("decode catalogue page: %w", err))
		}
		arts, err := decodePage(it.Z)
		got[byKey[it.K]] = arts
		return err
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// Publish makes the articles table's content the current snapshot: it
// reads the table whole (a Scan: publishing is an operator's step, never a
// request's), writes the snapshot's pages, then points the version item at
// them, and removes the pages of the snapshot before the one it replaces.
// A catalogue unchanged since the current snapshot writes nothing. It is
// what `stampctl articles import` and `stampctl articles publish` run, and
// what any other writer of articles (the console) must run after writing.
// Two publishes at once: the version item's condition lets one win, and
// the other reads the table again and publishes that (at most 3 tries).
func (c *Catalogue) Publish(ctx context.Context, src *Articles, now time.Time) (Snapshot, error) {
	for try := 1; ; try++ {
		s, err := c.publish(ctx, src, now)
		if stampduty.ErrorCode(err) != stampduty.ECONFLICT || try == 3 {
			return s, err
		}
	}
}

func (c *Catalogue) publish(ctx context.Context, src *Articles, now time.Time) (Snapshot, error) {
	old, had, err := c.Current(ctx, true)
	if err != nil {
		return Snapshot{}, err
	}
	arts, err := src.All(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	// The version is a digest of the catalogue in id order, so the same
	// catalogue always has the same version and publishing it again
	// changes nothing; the other orders follow from it.
	pages := map[string][][]byte{}
	var version string
	for _, order := range stampduty.ArticleOrders() {
		stampduty.SortArticlesBy(arts, order)
		var digest string
		if pages[order], digest, err = encodePages(arts); err != nil {
			return Snapshot{}, err
		}
		if order == idOrder {
			version = digest
		}
	}
	if had && old.Version == version {
		return old, nil
	}
	s := Snapshot{Version: version, Articles: len(arts), Pages: len(pages[idOrder]), Prev: old.Version, PrevPages: old.Pages,
		At: now.UTC().Format(time.RFC3339)}
	var puts []types.WriteRequest
	for _, order := range stampduty.ArticleOrders() {
		for i, p := range pages[order] {
			z := gzipped(p)
			if len(z) > maxPageBytes {
				// Only articles with many large rule versions reach it
				// (100 × 24 KiB of rules that do not compress).
				return Snapshot{}, stampduty.Errorf(stampduty.EINVALID, "page %d of the catalogue is %d bytes gzipped, more than an item holds (%d): shorten the largest duty_rules (archive old versions)", i, len(z), maxPageBytes)
			}
			item, err := attributevalue.MarshalMap(pageItem{K: pageKey(version, order, i), Z: z})
			if err != nil {
				return Snapshot{}, fmt.Errorf("encode catalogue page: %w", err)
			}
			puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
	}
	if err := c.db.batchWrite(ctx, c.table, puts); err != nil {
		return Snapshot{}, err
	}
	item, err := attributevalue.MarshalMap(snapshotItem{K: versionKey, Snapshot: s})
	if err != nil {
		return Snapshot{}, fmt.Errorf("encode catalogue version: %w", err)
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(c.table), Item: item,
		ConditionExpression: aws.String("attribute_not_exists(k)")}
	if had {
		in.ConditionExpression = aws.String("ver = :old")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":old": avS(old.Version)}
	}
	if _, err := c.db.client.PutItem(ctx, in); err != nil {
		if conditionFailed(err) {
			return Snapshot{}, stampduty.Errorf(stampduty.ECONFLICT, "the catalogue was published by someone else meanwhile")
		}
		return Snapshot{}, fail("PutItem", err)
	}
	// The snapshot before the replaced one: no instance reads it after a
	// minute (each checks the version at least once a minute). A failure
	// here leaves old pages behind and harms nothing.
	if old.Prev != "" && old.Prev != version {
		var dels []types.WriteRequest
		for _, order := range stampduty.ArticleOrders() {
			for i := range old.PrevPages {
				dels = append(dels, types.WriteRequest{DeleteRequest: &types.DeleteRequest{
					Key: map[string]types.AttributeValue{"k": avS(pageKey(old.Prev, order, i))}}})
			}
		}
		if err := c.db.batchWrite(ctx, c.table, dels); err != nil {
			return s, nil // published; the old pages stay (see above)
		}
	}
	return s, nil
}
