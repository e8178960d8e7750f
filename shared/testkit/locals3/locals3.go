// Package locals3 runs the local S3 server (Versity's S3 gateway, posix
// backend in a temporary folder, installed by `make versitygw`), which
// checks Signature Version 4 like S3, pre-signed URLs included, and
// creates buckets as template.yaml defines them.
package locals3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"stampduty/shared/testkit/localserver"
)

// GatewayPath is where `make versitygw` installs the gateway, relative to
// the module root.
const GatewayPath = ".build/tools/versitygw"

// Server is a running local S3 server; its objects go when it stops.
type Server = localserver.Server

// Installed returns the gateway's binary under the module root, or a
// *localserver.NotInstalledError when `make versitygw` has not run.
func Installed(root string) (string, error) {
	return localserver.Find(root, GatewayPath, "the local S3 server (versitygw)", "versitygw")
}

// Start starts the gateway as localserver.Start does, storing its objects
// in a new temporary folder and accepting accessKey, secret for region.
// Without the gateway, its error is a *localserver.NotInstalledError.
func Start(ctx context.Context, root, addr, accessKey, secret, region string, log io.Writer) (*Server, error) {
	gw, err := Installed(root)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "stampduty-s3-")
	data, versions := filepath.Join(dir, "data"), filepath.Join(dir, "versions")
	if err == nil {
		err = errors.Join(os.Mkdir(data, 0o700), os.Mkdir(versions, 0o700))
	}
	if err != nil {
		os.RemoveAll(dir) // "" when none was made: nothing removed
		return nil, err
	}
	return localserver.Start(ctx, addr, localserver.Spec{
		Name: "s3",
		Command: func(host, port string) *exec.Cmd {
			return exec.Command(gw, "--access", accessKey, "--secret", secret, "--region", region,
				"--port", host+":"+port, "posix", "--versioning-dir", versions, data)
		},
		Listening: "│Admin/S3 service listening on:",
		Probe: func(ctx context.Context, endpoint string) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.Header.Get("Server") != "VERSITYGW" {
				return errors.New("not the S3 gateway")
			}
			return nil
		},
		Log: log,
		Dir: dir,
	})
}

// Client returns an S3 client of the server at endpoint, signing as
// accessKey for region, with path-style addresses.
func Client(endpoint, accessKey, secret, region string) *s3.Client {
	return s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, secret, ""),
	})
}

// CreateBucket creates bucket versioned, as the template defines the files
// bucket, keeping an existing one. (The gateway has no public-access block
// or default encryption; its objects stay private on this machine.)
func CreateBucket(ctx context.Context, client *s3.Client, bucket string) error {
	_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("create bucket %s: %w", bucket, err)
	}
	_, err = client.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}})
	if err != nil {
		return fmt.Errorf("enable versioning of %s: %w", bucket, err)
	}
	return nil
}
