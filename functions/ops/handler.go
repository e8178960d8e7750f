package main

import (
	"context"
	"net/http"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"stampduty/shared/function"
	"stampduty/shared/function/fulfillment"
	"stampduty/shared/stampduty"
)

// handler is the operators' API.
type handler struct {
	orders interface {
		Queue(ctx context.Context, status string, test bool, cursor string, size int) ([]stampduty.OpsOrder, string, error)
		fulfillment.Papers
	}
}

const (
	orderPath       = "/api/ops/live-orders/{documentId}"
	fulfillmentPath = orderPath + "/fulfillments/{fulfillmentDocumentId}"
)

// routes answers the six operator routes.
func (h *handler) routes() http.Handler {
	paper := fulfillment.Routes{Papers: h.orders}
	return function.Routes(
		function.Path{Method: http.MethodGet, Pattern: "/api/ops/live-orders", Serve: asOperator(h.queue)},
		function.Path{Method: http.MethodGet, Pattern: orderPath, Serve: asOperator(paper.Get)},
		function.Path{Method: http.MethodPatch, Pattern: fulfillmentPath, Serve: asOperator(paper.Move)},
		function.Path{Method: http.MethodPut, Pattern: fulfillmentPath + "/certificate", Serve: asOperator(paper.Attach)},
		function.Path{Method: http.MethodPost, Pattern: fulfillmentPath + "/certificate/upload", Serve: asOperator(paper.Upload)},
		function.Path{Method: http.MethodPost, Pattern: orderPath + "/cancel", Serve: asOperator(paper.Cancel)},
	)
}

// asOperator serves r with serve, given the IAM identity API Gateway
// verified for r (the ARN in requestContext.authorizer.iam), whom r's
// request log line then names. A request without one did not come through
// the AWS_IAM routes: it is refused.
func asOperator(serve func(r *http.Request, by string) (any, error)) func(r *http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
		if !ok || rc.Authorizer == nil || rc.Authorizer.IAM == nil || rc.Authorizer.IAM.UserARN == "" {
			return nil, stampduty.Errorf(stampduty.EFORBIDDEN, "Forbidden")
		}
		function.SetCaller(r.Context(), rc.Authorizer.IAM.UserARN)
		return serve(r, rc.Authorizer.IAM.UserARN)
	}
}

// queue answers a page of the work queue: status (default Pending), mode
// (live, the default, or test: the test orders only; fulfillment.ReadMode),
// pagination[pageSize] (default 25, at most 100) and pagination[cursor].
func (h *handler) queue(r *http.Request, _ string) (any, error) {
	q, size, err := fulfillment.ReadQueue(r)
	if err != nil {
		return nil, err
	}
	status, ok, err := q.Value("status")
	if err != nil {
		return nil, err
	}
	if !ok {
		status = stampduty.StatusPending
	}
	cursor, _, err := q.Value("pagination[cursor]")
	if err != nil {
		return nil, err
	}
	test, err := fulfillment.ReadMode(q)
	if err != nil {
		return nil, err
	}
	page, next, err := h.orders.Queue(r.Context(), status, test, cursor, size)
	if err != nil {
		return nil, err
	}
	var resp fulfillment.QueueResponse
	resp.Data, resp.Meta.Pagination.PageSize = page, size
	if next != "" {
		resp.Meta.Pagination.Next = &next
	}
	return resp, nil
}
