// Command teardown deletes the tables and the files bucket a deleted stack
// keeps (package teardown). `make destroy DELETE_DATA=<stack>` runs it:
//
//	teardown find --stack NAME --out FILE      before sam delete: the stack's tables and buckets, into FILE
//	teardown delete --from FILE --confirm NAME after it: empty and delete them, once the stack is gone
//
// Both take --region (else AWS_REGION or the profile's) and the AWS SDK's
// usual credentials. find exits with status 3 when the stack is gone
// already and FILE, from an earlier run, names its tables and buckets: a
// deletion that failed halfway is taken up again without a sam delete.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"stampduty/cmd/internal/teardown"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	switch {
	case errors.Is(err, errGone):
		fmt.Println(err)
		os.Exit(3)
	case err != nil:
		fmt.Fprintln(os.Stderr, "teardown:", err)
		os.Exit(1)
	}
}

// errGone is find's answer when the stack is gone already and the file
// names its tables and buckets from before.
var errGone = errors.New("the stack is gone already")

// run runs one verb of the command line args.
func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: teardown find --stack NAME --out FILE | teardown delete --from FILE --confirm NAME [--region R]")
	}
	fs := flag.NewFlagSet("teardown "+args[0], flag.ContinueOnError)
	region := fs.String("region", "", "the stack's region (default: AWS_REGION or the profile's)")
	stack := fs.String("stack", "", "find: the stack")
	file := fs.String("out", "", "find: the file to write the stack's tables and buckets to")
	from := fs.String("from", "", "delete: the file find wrote")
	confirm := fs.String("confirm", "", "delete: the stack's name, typed again")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var opts []func(*config.LoadOptions) error
	if *region != "" {
		opts = append(opts, config.WithRegion(*region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return fmt.Errorf("load the AWS configuration: %w", err)
	}
	td := &teardown.Teardown{CloudFormation: cloudformation.NewFromConfig(cfg), DynamoDB: dynamodb.NewFromConfig(cfg),
		S3: s3.NewFromConfig(cfg), Log: out}
	switch args[0] {
	case "find":
		if *stack == "" || *file == "" {
			return errors.New("find needs --stack and --out")
		}
		d, err := td.Find(ctx, *stack)
		if errors.Is(err, teardown.ErrNoStack) {
			if _, loadErr := teardown.Load(*file); loadErr == nil {
				return fmt.Errorf("%w: stack %s's tables and buckets are those %s names from before", errGone, *stack, *file)
			}
		}
		if err != nil {
			return err
		}
		if err := teardown.Save(*file, d); err != nil {
			return err
		}
		for _, r := range d.Resources {
			fmt.Fprintf(out, "%s %s (%s)\n", r.Type, r.PhysicalID, r.LogicalID)
		}
		for _, r := range d.Kept {
			fmt.Fprintf(out, "%s %s (%s): kept, not deleted\n", r.Type, r.PhysicalID, r.LogicalID)
		}
		fmt.Fprintf(out, "stack %s: %d tables and buckets, written to %s\n", *stack, len(d.Resources), *file)
		return nil
	case "delete":
		if *from == "" {
			return errors.New("delete needs --from (the file find wrote) and --confirm")
		}
		d, err := teardown.Load(*from)
		if err != nil {
			return err
		}
		return td.Delete(ctx, d, *confirm)
	}
	return fmt.Errorf("unknown verb %q: find or delete", args[0])
}
