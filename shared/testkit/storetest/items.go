package storetest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// PutItem writes item as it is to the table of logicalID, around the store:
// an item of an older format, or one the store would refuse to write.
func (e *Env) PutItem(t testing.TB, logicalID string, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := e.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.Table(logicalID)), Item: item}); err != nil {
		t.Fatal(err)
	}
}

// GetItem reads the item of key from the table of logicalID as it is
// stored (a consistent read, around the store); nil when there is none.
func (e *Env) GetItem(t testing.TB, logicalID string, key map[string]types.AttributeValue) map[string]types.AttributeValue {
	t.Helper()
	out, err := e.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(e.Table(logicalID)), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// Items returns every item of the table of logicalID as it is stored.
func (e *Env) Items(t testing.TB, logicalID string) []map[string]types.AttributeValue {
	t.Helper()
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(e.Client, &dynamodb.ScanInput{TableName: aws.String(e.Table(logicalID))})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, page.Items...)
	}
	return items
}
