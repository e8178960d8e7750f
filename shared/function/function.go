// Package function runs a Lambda function whose work is a net/http handler
// behind an API Gateway HTTP API (payload 2.0): the part every
// functions/*/main.go would otherwise repeat.
package function

import (
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// Wire builds a function's handler from its environment, logging one line
// per request to logger.
type Wire func(getenv func(string) string, logger *slog.Logger) (http.Handler, error)

// Main builds the handler with wire from the process environment, logging
// JSON lines to standard output, and serves the Lambda runtime's events with
// it until the runtime ends the process. When wiring fails it logs why and
// exits with status 1, which Lambda reports as a failed init.
func Main(wire Wire) {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	h, err := wire(os.Getenv, logger)
	if err != nil {
		logger.Error("init failed", "err", err.Error())
		os.Exit(1)
	}
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}
