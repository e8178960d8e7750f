// Package teardown deletes what a deleted stack leaves behind on purpose:
// its tables and its files bucket, which template.yaml keeps (DeletionPolicy
// and UpdateReplacePolicy Retain, tables with deletion protection), so that
// deleting the stack never deletes the orders or the files by accident.
// `make destroy DELETE_DATA=<stack>` runs it through cmd/teardown, in three
// steps, each safe to run again:
//
//  1. Find (before the stack is deleted: its record of the resources goes
//     with it) every DynamoDB table and S3 bucket of the stack, from
//     CloudFormation's ListStackResources (DescribeStackResources lists only
//     the first 100 of a stack's resources, and this one has more), and
//     write them to a file.
//  2. sam delete deletes the stack (Makefile).
//  3. Delete what the file names, once CloudFormation says the stack is
//     gone and only when the stack's name is typed again: each bucket
//     emptied first, every object version and delete marker, in pages of
//     at most 1,000 (ListObjectVersions' page, DeleteObjects' limit), then
//     deleted; each table's deletion protection turned off, then the table
//     deleted.
//
// It is tooling: no function links it. It talks to DynamoDB and S3 through
// the SDK's clients (tested against dynalite and the local S3 server) and
// to CloudFormation through the small interface CloudFormation, as there is
// no local CloudFormation.
package teardown

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// The resource types a stack's data lives in: tables and buckets, which
// Delete deletes, and the staff's user pool, which it leaves (its accounts
// are people's: their owner deletes it in the Cognito console, after
// turning its deletion protection off) and names when it is done.
const (
	TableType    = "AWS::DynamoDB::Table"
	BucketType   = "AWS::S3::Bucket"
	UserPoolType = "AWS::Cognito::UserPool"
)

// PageSize is how many object versions and delete markers are listed, and
// then deleted in one DeleteObjects request, at a time: the most either
// API takes.
const PageSize = 1000

// CloudFormation is what teardown asks CloudFormation; the SDK's
// *cloudformation.Client is one.
type CloudFormation interface {
	DescribeStacks(ctx context.Context, in *cloudformation.DescribeStacksInput, opts ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
	ListStackResources(ctx context.Context, in *cloudformation.ListStackResourcesInput, opts ...func(*cloudformation.Options)) (*cloudformation.ListStackResourcesOutput, error)
}

// Resource is one table or bucket of a stack.
type Resource struct {
	LogicalID  string `json:"logicalId"`
	Type       string `json:"type"`
	PhysicalID string `json:"physicalId"` // the table's or the bucket's name
}

// Data is what a stack keeps when it is deleted: its tables and buckets
// (Resources), and its user pools (Kept), which Delete leaves.
type Data struct {
	Stack     string     `json:"stack"`
	Resources []Resource `json:"resources"`
	Kept      []Resource `json:"kept,omitempty"`
}

// Teardown is the clients teardown works with, and where it says what it
// does.
type Teardown struct {
	CloudFormation CloudFormation
	DynamoDB       *dynamodb.Client
	S3             *s3.Client
	Log            io.Writer
	// PageSize is the page of object versions (PageSize when 0).
	PageSize int32
}

// ErrNoStack is Find's error for a stack that does not exist.
var ErrNoStack = errors.New("no such stack")

// stackStatus returns the stack's status, ErrNoStack when CloudFormation
// has no stack of that name (a deleted stack is not found by its name).
func (t *Teardown) stackStatus(ctx context.Context, stack string) (cfntypes.StackStatus, error) {
	out, err := t.CloudFormation.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(stack)})
	var ae smithy.APIError
	switch {
	case errors.As(err, &ae) && ae.ErrorCode() == "ValidationError" && strings.Contains(ae.ErrorMessage(), "does not exist"):
		return "", fmt.Errorf("stack %s: %w", stack, ErrNoStack)
	case err != nil:
		return "", fmt.Errorf("describe stack %s (CloudFormation DescribeStacks): %w", stack, err)
	case len(out.Stacks) != 1:
		return "", fmt.Errorf("describe stack %s: CloudFormation described %d stacks", stack, len(out.Stacks))
	}
	return out.Stacks[0].StackStatus, nil
}

// Find returns the tables and buckets of stack, as CloudFormation lists
// its resources (every page); ErrNoStack when there is no such stack.
func (t *Teardown) Find(ctx context.Context, stack string) (Data, error) {
	if _, err := t.stackStatus(ctx, stack); err != nil {
		return Data{}, err
	}
	d := Data{Stack: stack}
	in := &cloudformation.ListStackResourcesInput{StackName: aws.String(stack)}
	for {
		out, err := t.CloudFormation.ListStackResources(ctx, in)
		if err != nil {
			return Data{}, fmt.Errorf("list stack %s's resources (CloudFormation ListStackResources): %w", stack, err)
		}
		for _, r := range out.StackResourceSummaries {
			typ, id := aws.ToString(r.ResourceType), aws.ToString(r.PhysicalResourceId)
			if id == "" || r.ResourceStatus == cfntypes.ResourceStatusDeleteComplete {
				continue
			}
			res := Resource{LogicalID: aws.ToString(r.LogicalResourceId), Type: typ, PhysicalID: id}
			switch typ {
			case TableType, BucketType:
				d.Resources = append(d.Resources, res)
			case UserPoolType:
				d.Kept = append(d.Kept, res)
			}
		}
		if aws.ToString(out.NextToken) == "" {
			return d, nil
		}
		in.NextToken = out.NextToken
	}
}

// Save writes d to the file path (JSON), replacing it whole or not at all.
func Save(path string, d Data) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Load reads what Save wrote to path.
func Load(path string) (Data, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Data{}, err
	}
	var d Data
	if err := json.Unmarshal(b, &d); err != nil {
		return Data{}, fmt.Errorf("read %s: %w", path, err)
	}
	if d.Stack == "" {
		return Data{}, fmt.Errorf("read %s: it names no stack", path)
	}
	return d, nil
}

// Delete deletes d's buckets (emptied first) and tables, when confirm is
// d's stack name and CloudFormation says that stack no longer exists (a
// stack still up would go on using them). What is already gone is said
// and skipped, so Delete can be run again after a failure.
func (t *Teardown) Delete(ctx context.Context, d Data, confirm string) error {
	if confirm != d.Stack {
		return fmt.Errorf("refused: deleting stack %s's tables and buckets needs its name typed again (DELETE_DATA=%s), not %q", d.Stack, d.Stack, confirm)
	}
	switch status, err := t.stackStatus(ctx, d.Stack); {
	case errors.Is(err, ErrNoStack) || status == cfntypes.StackStatusDeleteComplete:
	case err != nil:
		return err
	default:
		return fmt.Errorf("refused: stack %s still exists (%s): delete it first (sam delete), or its functions would use the tables and bucket being deleted", d.Stack, status)
	}
	var errs []error
	for _, r := range d.Resources {
		var err error
		switch r.Type {
		case BucketType:
			err = t.deleteBucket(ctx, r.PhysicalID)
		case TableType:
			err = t.deleteTable(ctx, r.PhysicalID)
		default:
			err = fmt.Errorf("%s (%s): not a table or a bucket", r.LogicalID, r.Type)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", r.LogicalID, r.PhysicalID, err))
		}
	}
	for _, r := range d.Kept {
		fmt.Fprintf(t.Log, "kept: %s %s (%s), the staff's accounts: delete it in the Cognito console (turn its deletion protection off first) if they are to go too\n",
			r.Type, r.PhysicalID, r.LogicalID)
	}
	return errors.Join(errs...)
}

// deleteBucket empties bucket (Empty) and deletes it.
func (t *Teardown) deleteBucket(ctx context.Context, bucket string) error {
	n, err := t.Empty(ctx, bucket)
	// ListObjectVersions does not model NoSuchBucket: its code says it.
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "NoSuchBucket" {
		fmt.Fprintf(t.Log, "bucket %s: already gone\n", bucket)
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := t.S3.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return fmt.Errorf("delete the bucket: %w", err)
	}
	fmt.Fprintf(t.Log, "bucket %s: deleted %d object versions and delete markers, then the bucket\n", bucket, n)
	return nil
}

// Empty deletes every object version and delete marker of bucket, a page
// of at most PageSize at a time (listed, then deleted in one DeleteObjects
// request), and aborts its unfinished multipart uploads. It returns how
// many versions and markers it deleted.
func (t *Teardown) Empty(ctx context.Context, bucket string) (int, error) {
	page := t.PageSize
	if page <= 0 || page > PageSize {
		page = PageSize
	}
	n := 0
	var first s3types.ObjectIdentifier
	for {
		// Always the first page: what was listed before is deleted.
		out, err := t.S3.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), MaxKeys: aws.Int32(page)})
		if err != nil {
			return n, fmt.Errorf("list object versions: %w", err)
		}
		var ids []s3types.ObjectIdentifier
		for _, v := range out.Versions {
			ids = append(ids, s3types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
		}
		for _, m := range out.DeleteMarkers {
			ids = append(ids, s3types.ObjectIdentifier{Key: m.Key, VersionId: m.VersionId})
		}
		if len(ids) == 0 {
			break
		}
		if aws.ToString(ids[0].Key) == aws.ToString(first.Key) && aws.ToString(ids[0].VersionId) == aws.ToString(first.VersionId) {
			return n, fmt.Errorf("%s (version %s) is listed again after it was deleted", aws.ToString(first.Key), aws.ToString(first.VersionId))
		}
		first = ids[0]
		del, err := t.S3.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket),
			Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
		if err != nil {
			return n, fmt.Errorf("delete %d object versions: %w", len(ids), err)
		}
		if len(del.Errors) > 0 {
			e := del.Errors[0]
			return n, fmt.Errorf("delete %d object versions: %d failed, the first %s (version %s): %s %s", len(ids), len(del.Errors),
				aws.ToString(e.Key), aws.ToString(e.VersionId), aws.ToString(e.Code), aws.ToString(e.Message))
		}
		n += len(ids)
	}
	uploads := s3.NewListMultipartUploadsPaginator(t.S3, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	for uploads.HasMorePages() {
		out, err := uploads.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("list multipart uploads: %w", err)
		}
		for _, u := range out.Uploads {
			if _, err := t.S3.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: u.Key, UploadId: u.UploadId}); err != nil {
				return n, fmt.Errorf("abort the multipart upload of %s: %w", aws.ToString(u.Key), err)
			}
		}
	}
	return n, nil
}

// tableGoneWait bounds the wait for a deleted table to disappear.
const tableGoneWait = 10 * time.Minute

// deleteTable turns the table's deletion protection off when it is on,
// deletes it and waits until DynamoDB no longer lists it.
func (t *Teardown) deleteTable(ctx context.Context, table string) error {
	out, err := t.DynamoDB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var missing *dbtypes.ResourceNotFoundException
	if errors.As(err, &missing) {
		fmt.Fprintf(t.Log, "table %s: already gone\n", table)
		return nil
	}
	if err != nil {
		return fmt.Errorf("describe the table: %w", err)
	}
	if aws.ToBool(out.Table.DeletionProtectionEnabled) {
		if _, err := t.DynamoDB.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(table), DeletionProtectionEnabled: aws.Bool(false)}); err != nil {
			return fmt.Errorf("turn deletion protection off: %w", err)
		}
		fmt.Fprintf(t.Log, "table %s: deletion protection turned off\n", table)
	}
	if _, err := t.DynamoDB.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
		if errors.As(err, &missing) {
			fmt.Fprintf(t.Log, "table %s: already gone\n", table)
			return nil
		}
		return fmt.Errorf("delete the table: %w", err)
	}
	if err := dynamodb.NewTableNotExistsWaiter(t.DynamoDB, func(o *dynamodb.TableNotExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 100*time.Millisecond, 5*time.Second
	}).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, tableGoneWait); err != nil {
		return fmt.Errorf("wait for the table to go: %w", err)
	}
	fmt.Fprintf(t.Log, "table %s: deleted\n", table)
	return nil
}
