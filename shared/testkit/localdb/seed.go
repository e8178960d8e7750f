package localdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
	"stampduty/shared/store"
)

// SampleCatalogue is the catalogue the tests and the bench seed, relative to
// the module root: eleven legacy articles whose answers the tests know.
const SampleCatalogue = "shared/testkit/localdb/testdata/articles.json"

// LocalCatalogue is the catalogue `make local` seeds by default: the sample
// articles and the state schedules of duty-rules-sources.md rated high or
// medium, each version with its citation (duty-rules.md).
const LocalCatalogue = "cmd/local/articles.json"

// LogicalNames names each table by its logical id, as the local stack does.
func LogicalNames(logicalID string) string { return logicalID }

// Seed loads the catalogue file into the articles table (a bad file is
// refused whole, with every row's errors) and publishes it (as `stampctl
// articles import` does), and, with devToken, registers
// DevToken once; table names each table from its logical id. It is the one
// seeding of the local stack, the bench and the tests, and returns how
// many articles it loaded. New articles take their ids from ids (the
// stack's counter, or a test's fixture ids).
func Seed(ctx context.Context, db *store.DB, ids orders.IDs, table func(logicalID string) string, catalogue string, devToken bool) (int, error) {
	data, err := os.ReadFile(catalogue)
	if err != nil {
		return 0, fmt.Errorf("read articles: %w", err)
	}
	arts, err := stampjson.DecodeArticles(data)
	if err != nil {
		var e *stampduty.Error
		if errors.As(err, &e) {
			for _, f := range e.Fields {
				switch {
				case f.Path == "" && f.Message == e.Message:
					// the file's own error, said already
				case f.Path == "":
					err = fmt.Errorf("%w\n  %s", err, f.Message)
				default:
					err = fmt.Errorf("%w\n  %s: %s", err, f.Path, f.Message)
				}
			}
		}
		return 0, fmt.Errorf("%s: %w", catalogue, err)
	}
	articles := db.Articles(table("ArticlesTable")).WithSnapshots(table("CatalogueTable"))
	if _, _, err := articles.Upsert(ctx, ids, arts); err != nil {
		return 0, fmt.Errorf("seed articles: %w", err)
	}
	if _, err := db.Catalogue(table("CatalogueTable")).Publish(ctx, articles, time.Now()); err != nil {
		return 0, fmt.Errorf("publish the catalogue: %w", err)
	}
	if devToken {
		err := db.Tokens(table("TokensTable")).Create(ctx, auth.Token{Hash: Hasher().Hash(DevToken), Owner: DevOwner, CreatedAt: time.Now()})
		if err != nil && stampduty.ErrorCode(err) != stampduty.ECONFLICT {
			return 0, fmt.Errorf("seed dev token: %w", err)
		}
	}
	return len(arts), nil
}
