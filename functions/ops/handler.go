package main

import (
	"context"
	"net/http"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"stampduty/shared/function"
	"stampduty/shared/function/fulfillment"
	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
)

// handler is the operators' API.
type handler struct {
	orders interface {
		Queue(ctx context.Context, status, cursor string, size int) ([]stampduty.OpsOrder, string, error)
		OpsGet(ctx context.Context, doc string) (stampduty.OpsOrder, error)
		fulfillment.Papers
	}
}

// The answers: a queue page, and one order (with "meta" on reads).
type (
	queueResponse struct {
		Data []stampduty.OpsOrder `json:"data"`
		Meta struct {
			Pagination struct {
				PageSize int     `json:"pageSize"`
				Next     *string `json:"next"`
			} `json:"pagination"`
		} `json:"meta"`
	}
	orderResponse struct {
		Data stampduty.OpsOrder `json:"data"`
		Meta *struct{}          `json:"meta,omitempty"`
	}
)

const (
	orderPath       = "/api/ops/live-orders/{documentId}"
	fulfillmentPath = orderPath + "/fulfillments/{fulfillmentDocumentId}"
)

// routes answers the six operator routes.
func (h *handler) routes() http.Handler {
	return function.Routes(
		function.Path{Method: http.MethodGet, Pattern: "/api/ops/live-orders", Serve: asOperator(h.queue)},
		function.Path{Method: http.MethodGet, Pattern: orderPath, Serve: asOperator(h.get)},
		function.Path{Method: http.MethodPatch, Pattern: fulfillmentPath, Serve: asOperator(h.advance)},
		function.Path{Method: http.MethodPut, Pattern: fulfillmentPath + "/certificate", Serve: asOperator(h.attach)},
		function.Path{Method: http.MethodPost, Pattern: fulfillmentPath + "/certificate/upload", Serve: asOperator(h.upload)},
		function.Path{Method: http.MethodPost, Pattern: orderPath + "/cancel", Serve: asOperator(h.cancel)},
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

// queueParams are the query parameters of the queue.
func queueParam(k string) bool {
	return k == "status" || k == "pagination[pageSize]" || k == "pagination[cursor]"
}

// queue answers a page of the work queue: status (default Pending),
// pagination[pageSize] (default 25, at most 100) and pagination[cursor].
func (h *handler) queue(r *http.Request, _ string) (any, error) {
	q, err := strapiquery.Parse(r.URL.RawQuery, queueParam)
	if err != nil {
		return nil, err
	}
	_, size, err := q.Page("", "pagination[pageSize]")
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
	page, next, err := h.orders.Queue(r.Context(), status, cursor, size)
	if err != nil {
		return nil, err
	}
	var resp queueResponse
	resp.Data, resp.Meta.Pagination.PageSize = page, size
	if next != "" {
		resp.Meta.Pagination.Next = &next
	}
	return resp, nil
}

// get answers with one order as operators see it.
func (h *handler) get(r *http.Request, _ string) (any, error) {
	o, err := h.orders.OpsGet(r.Context(), r.PathValue("documentId"))
	if err != nil {
		return nil, err
	}
	return orderResponse{Data: o, Meta: &struct{}{}}, nil
}

// advance moves a fulfillment as the body asks (fulfillment.Move), for by.
func (h *handler) advance(r *http.Request, by string) (any, error) {
	return written(fulfillment.Move(r, h.orders, by))
}

// attach stores the body, a PDF, as the fulfillment's certificate; a JSON
// body {"upload": "<id>"} attaches the file of that upload instead.
func (h *handler) attach(r *http.Request, _ string) (any, error) {
	return written(fulfillment.Attach(r, h.orders))
}

// upload makes a pre-signed upload of the fulfillment's certificate.
func (h *handler) upload(r *http.Request, _ string) (any, error) {
	return fulfillment.CertificateUpload(r, h.orders)
}

// cancel cancels the order for the reason the body gives ({"reason":
// "…"}, stampduty.CancelReason) and answers with the order as operators
// see it, as the other operator writes do: cancelled now, or as an
// earlier cancel left it.
func (h *handler) cancel(r *http.Request, _ string) (any, error) {
	return written(fulfillment.Cancel(r, h.orders))
}

// written answers a write with the order as operators see it.
func written(o stampduty.OpsOrder, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return orderResponse{Data: o}, nil
}
