package main

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// snapshotQueries are the queries the catalogue tests compare: the
// default page (read on its own), and queries that need the whole
// catalogue (other sorts, filters, fields, offsets).
var snapshotQueries = []string{
	"", "pagination[page]=2&pagination[pageSize]=4", "pagination[start]=3&pagination[limit]=5&sort=id",
	"sort[0]=purpose_name:asc&sort[1]=state:desc", "sort=fixed:desc&fields[0]=state",
	"filters[state][$eq]=Karnataka&sort=min:desc", "filters[fixed][$null]=true&pagination[withCount]=false",
	"sort=id:desc&pagination[pageSize]=3", "status=draft",
}

// coldStartCalls is what a cold instance's first default page reads: the
// version, then the one snapshot page (no Scan).
const coldStartCalls = "GetItem:CatalogueTable=2"

// oldDeployment checks a stack whose articles were imported before
// snapshots (no version item): a cold instance answers every query exactly
// as from the snapshot, by reading the articles table whole (the only Scan
// the function may make), and once the catalogue is published (`stampctl
// articles publish`) the next cold instance reads the snapshot and never
// scans.
func (c sample) oldDeployment(t *testing.T) {
	ctx := context.Background()
	want := map[string]string{}
	for _, q := range snapshotQueries {
		r, _ := c.list(t, q)
		want[q] = r.Body
	}
	_, err := c.Env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(c.Env.Table("CatalogueTable")),
		Key: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: "version"}}})
	if err != nil {
		t.Fatal(err)
	}
	c.Restart(wire)
	c.Proxy.Take()
	for _, q := range snapshotQueries {
		if r, _ := c.list(t, q); r.Body != want[q] {
			t.Errorf("%q without a snapshot:\n got %s\nwant %s", q, r.Body, want[q])
		}
	}
	if got, want := c.Env.Operations(c.Proxy.Take()), "GetItem:CatalogueTable=1 Scan:ArticlesTable=1"; got != want {
		t.Errorf("without a snapshot, calls %s, want %s", got, want)
	}

	db := c.Env.DB()
	if _, err := db.Catalogue(c.Env.Table("CatalogueTable")).Publish(ctx, db.Articles(c.Env.Table("ArticlesTable")), time.Now()); err != nil {
		t.Fatal(err)
	}
	c.Restart(wire)
	for _, q := range snapshotQueries[:1] {
		if r, _ := c.list(t, q); r.Body != want[q] {
			t.Errorf("%q once published:\n got %s\nwant %s", q, r.Body, want[q])
		}
	}
	if got, want := c.Env.Operations(c.Proxy.Take()), coldStartCalls; got != want {
		t.Errorf("a cold default page reads %s, want %s", got, want)
	}
	c.Restart(wire)
	for _, q := range snapshotQueries[3:] {
		if r, _ := c.list(t, q); r.Body != want[q] {
			t.Errorf("%q once published:\n got %s\nwant %s", q, r.Body, want[q])
		}
	}
	if got, want := c.Env.Operations(c.Proxy.Take()), "BatchGetItem:CatalogueTable=1 GetItem:CatalogueTable=1"; got != want {
		t.Errorf("a cold sorted list reads %s, want %s", got, want)
	}
}
