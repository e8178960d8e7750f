package teardown_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"stampduty/cmd/internal/teardown"
	"stampduty/shared/testkit/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// fakeStack is CloudFormation for one stack (there is no local
// CloudFormation): DescribeStacks finds it until gone is set, as
// CloudFormation finds no deleted stack by its name; ListStackResources
// hands out its resources two a page.
type fakeStack struct {
	mu        sync.Mutex
	name      string
	gone      bool
	resources []cfntypes.StackResourceSummary
}

func (f *fakeStack) DescribeStacks(_ context.Context, in *cloudformation.DescribeStacksInput, _ ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if aws.ToString(in.StackName) != f.name || f.gone {
		return nil, &smithy.GenericAPIError{Code: "ValidationError", Message: "Stack with id " + aws.ToString(in.StackName) + " does not exist"}
	}
	return &cloudformation.DescribeStacksOutput{Stacks: []cfntypes.Stack{{StackName: in.StackName, StackStatus: cfntypes.StackStatusUpdateComplete}}}, nil
}

func (f *fakeStack) ListStackResources(_ context.Context, in *cloudformation.ListStackResourcesInput, _ ...func(*cloudformation.Options)) (*cloudformation.ListStackResourcesOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if aws.ToString(in.StackName) != f.name || f.gone {
		return nil, &smithy.GenericAPIError{Code: "ValidationError", Message: "Stack with id " + aws.ToString(in.StackName) + " does not exist"}
	}
	start, _ := strconv.Atoi(aws.ToString(in.NextToken))
	end := min(start+2, len(f.resources))
	out := &cloudformation.ListStackResourcesOutput{StackResourceSummaries: f.resources[start:end]}
	if end < len(f.resources) {
		out.NextToken = aws.String(strconv.Itoa(end))
	}
	return out, nil
}

// summary is a resource as ListStackResources lists it.
func summary(logicalID, typ, physicalID string, status cfntypes.ResourceStatus) cfntypes.StackResourceSummary {
	return cfntypes.StackResourceSummary{LogicalResourceId: aws.String(logicalID), ResourceType: aws.String(typ),
		PhysicalResourceId: aws.String(physicalID), ResourceStatus: status}
}

// stack is a test's tables and bucket (storetest: template.yaml's, in
// dynalite and the local S3 server) as the resources of a fake stack, with
// resources of other kinds beside them, and what Find should find.
func stack(t *testing.T) (*storetest.Env, *fakeStack, teardown.Data) {
	env := storetest.New(t)
	f := &fakeStack{name: "stamp-duty-test"}
	want := teardown.Data{Stack: f.name}
	f.resources = append(f.resources,
		summary("CreateOrderFunction", "AWS::Lambda::Function", "stamp-duty-test-CreateOrderFunction-1", cfntypes.ResourceStatusCreateComplete),
		summary("CreateOrderFunctionRole", "AWS::IAM::Role", "stamp-duty-test-CreateOrderFunctionRole-1", cfntypes.ResourceStatusCreateComplete),
		summary("OldTable", teardown.TableType, "an-old-table", cfntypes.ResourceStatusDeleteComplete),
		summary("StaffUserPool", teardown.UserPoolType, "ap-south-1_AbC123", cfntypes.ResourceStatusCreateComplete))
	want.Kept = []teardown.Resource{{LogicalID: "StaffUserPool", Type: teardown.UserPoolType, PhysicalID: "ap-south-1_AbC123"}}
	for _, tb := range env.Template.Tables {
		name := env.Table(tb.LogicalID)
		f.resources = append(f.resources, summary(tb.LogicalID, teardown.TableType, name, cfntypes.ResourceStatusCreateComplete))
		want.Resources = append(want.Resources, teardown.Resource{LogicalID: tb.LogicalID, Type: teardown.TableType, PhysicalID: name})
	}
	for _, b := range env.Template.Buckets {
		f.resources = append(f.resources, summary(b, teardown.BucketType, env.Names[b], cfntypes.ResourceStatusUpdateComplete))
		want.Resources = append(want.Resources, teardown.Resource{LogicalID: b, Type: teardown.BucketType, PhysicalID: env.Names[b]})
	}
	if len(env.Template.Tables) < 2 || len(env.Template.Buckets) != 1 {
		t.Fatalf("template.yaml has %d tables and %d buckets", len(env.Template.Tables), len(env.Template.Buckets))
	}
	return env, f, want
}

// versions returns how many object versions and delete markers bucket holds.
func versions(t *testing.T, c *s3.Client, bucket string) int {
	t.Helper()
	n := 0
	p := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n += len(out.Versions) + len(out.DeleteMarkers)
	}
	return n
}

// tables returns which of names DynamoDB lists.
func tables(t *testing.T, c *dynamodb.Client, names []string) []string {
	t.Helper()
	var found []string
	p := dynamodb.NewListTablesPaginator(c, &dynamodb.ListTablesInput{})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range out.TableNames {
			if slices.Contains(names, n) {
				found = append(found, n)
			}
		}
	}
	return found
}

// TestFind: the stack's tables and bucket, every page of its resources,
// its user pool apart (kept), and nothing of another kind or already
// deleted; no stack, ErrNoStack.
func TestFind(t *testing.T) {
	_, f, want := stack(t)
	td := &teardown.Teardown{CloudFormation: f}
	got, err := td.Find(context.Background(), f.name)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Resources, want.Resources) || !slices.Equal(got.Kept, want.Kept) || got.Stack != want.Stack {
		t.Errorf("Find = %+v, want %+v", got, want)
	}
	t.Run("SavedAndLoaded", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "data.json")
		if err := teardown.Save(path, got); err != nil {
			t.Fatal(err)
		}
		back, err := teardown.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.Resources, got.Resources) || !slices.Equal(back.Kept, got.Kept) || back.Stack != got.Stack {
			t.Errorf("Load = %+v, want %+v", back, got)
		}
	})
	t.Run("NoStack", func(t *testing.T) {
		if _, err := td.Find(context.Background(), "another-stack"); !errors.Is(err, teardown.ErrNoStack) {
			t.Errorf("Find of a stack that does not exist = %v, want ErrNoStack", err)
		}
	})
}

// TestDelete: the data of a deleted stack goes only with its name typed
// again and once the stack is gone; then the versioned bucket is emptied
// (every version and delete marker, page by page) and deleted, every
// table deleted, and the user pool named as kept; run again, it finds them
// gone and succeeds.
func TestDelete(t *testing.T) {
	env, f, data := stack(t)
	ctx := context.Background()
	c, bucket := env.S3(), env.Names[env.Template.Buckets[0]]
	// 3 versions of one file, 2 of another and a delete marker on top, a
	// file deleted (1 version, 1 marker), and two files: 9 in all, more
	// than 4 pages of 2.
	for i, key := range []string{"documents/a", "documents/a", "documents/a", "documents/b", "documents/b", "uploads/c", "certificates/d", "certificates/e"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(fmt.Sprint("version ", i))}); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"documents/b", "uploads/c"} {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := versions(t, c, bucket), 10; got != want {
		t.Fatalf("the bucket holds %d versions and markers, want %d", got, want)
	}
	var names []string
	for _, r := range data.Resources {
		if r.Type == teardown.TableType {
			names = append(names, r.PhysicalID)
		}
	}
	var log bytes.Buffer
	td := &teardown.Teardown{CloudFormation: f, DynamoDB: env.Client, S3: c, Log: &log, PageSize: 2}
	untouched := func(t *testing.T) {
		t.Helper()
		if got, want := versions(t, c, bucket), 10; got != want {
			t.Errorf("the bucket holds %d versions and markers, want %d", got, want)
		}
		if got := tables(t, env.Client, names); len(got) != len(names) {
			t.Errorf("DynamoDB lists %d of the stack's %d tables", len(got), len(names))
		}
	}

	t.Run("RefusedWithoutTheName", func(t *testing.T) {
		for _, confirm := range []string{"", "yes", "stamp-duty-other"} {
			if err := td.Delete(ctx, data, confirm); err == nil || !strings.Contains(err.Error(), "refused") {
				t.Errorf("Delete confirmed by %q = %v, want refused", confirm, err)
			}
		}
		untouched(t)
	})
	t.Run("RefusedWhileTheStackExists", func(t *testing.T) {
		if err := td.Delete(ctx, data, f.name); err == nil || !strings.Contains(err.Error(), "still exists") {
			t.Errorf("Delete = %v, want refused: the stack still exists", err)
		}
		untouched(t)
	})
	f.mu.Lock()
	f.gone = true
	f.mu.Unlock()
	t.Run("DeletesEverything", func(t *testing.T) {
		if err := td.Delete(ctx, data, f.name); err != nil {
			t.Fatalf("Delete: %v\n%s", err, &log)
		}
		if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err == nil {
			t.Errorf("bucket %s is still there", bucket)
		}
		if got := tables(t, env.Client, names); len(got) != 0 {
			t.Errorf("tables %q are still there", got)
		}
		for _, want := range []string{fmt.Sprintf("bucket %s: deleted 10 object versions and delete markers, then the bucket", bucket),
			"kept: AWS::Cognito::UserPool ap-south-1_AbC123 (StaffUserPool)"} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("the log says\n%s\nwant a line %q", &log, want)
			}
		}
	})
	t.Run("AgainFindsThemGone", func(t *testing.T) {
		log.Reset()
		if err := td.Delete(ctx, data, f.name); err != nil {
			t.Fatalf("Delete again: %v", err)
		}
		if got, want := strings.Count(log.String(), "already gone"), len(data.Resources); got != want {
			t.Errorf("the log says\n%s\nwant %d resources already gone", &log, want)
		}
	})
}
