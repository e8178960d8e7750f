package functest

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"stampduty/shared/accounts"
	"stampduty/shared/orders"
	"stampduty/shared/testkit/storetest"
)

// Main runs a function's tests with the local engines New needs
// (storetest.Main): call it from the package's TestMain.
func Main(m *testing.M) { storetest.Main(m) }

// PDF returns a new copy of a minimal PDF (one empty object, which the
// service takes as a document or a certificate), padded with spaces to
// size bytes when size is larger than it.
func PDF(size int) []byte {
	const minimal = "%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n"
	b := bytes.Repeat([]byte{' '}, max(size, len(minimal)))
	copy(b, minimal)
	return b
}

// Versions returns how many versions and delete markers env's files bucket
// (FilesBucket) holds, by key.
func Versions(t testing.TB, env *storetest.Env) map[string]int {
	t.Helper()
	out := map[string]int{}
	p := s3.NewListObjectVersionsPaginator(env.S3(), &s3.ListObjectVersionsInput{Bucket: aws.String(env.Table("FilesBucket"))})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Versions {
			out[aws.ToString(v.Key)]++
		}
		for _, m := range page.DeleteMarkers {
			out[aws.ToString(m.Key)]++
		}
	}
	return out
}

// StoredOrder reads order doc back from env's orders table (OrdersTable)
// as it is stored: found by its documentId, then read whole.
func StoredOrder(t testing.TB, env *storetest.Env, doc string) orders.Stored {
	t.Helper()
	ctx := context.Background()
	table := env.DB().Orders(env.Table("OrdersTable"))
	o, err := table.ByDocument(ctx, doc)
	if err == nil {
		o, err = table.Reread(ctx, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Account returns owner's account as env's ledger table holds it.
func Account(t testing.TB, env *storetest.Env, owner string) accounts.Account {
	t.Helper()
	a, err := env.DB().Ledger(env.Table("LedgerTable")).Account(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
