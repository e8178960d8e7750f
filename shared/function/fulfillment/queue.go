package fulfillment

import (
	"net/http"
	"slices"

	"stampduty/shared/stampduty"
	"stampduty/shared/strapiquery"
)

// QueueResponse is a page of the operators' work queue, as the operators'
// API and the console answer it: {"data": [<OpsOrder>...], "meta":
// {"pagination": {"pageSize", "next"}}}, next null on the last page.
type QueueResponse struct {
	Data []stampduty.OpsOrder `json:"data"`
	Meta struct {
		Pagination struct {
			PageSize int     `json:"pageSize"`
			Next     *string `json:"next"`
		} `json:"pagination"`
	} `json:"meta"`
}

// queueParams are the query parameters of every page of the operators'
// queue: its status, the mode (ReadMode), the page size and the cursor.
var queueParams = []string{"status", ModeParam, "pagination[pageSize]", "pagination[cursor]"}

// ReadQueue reads a request for a page of the operators' queue, as the
// operators' API and the console take it: its query, which may hold the
// queue's parameters and the extra ones (any other is EINVALID), and the
// page size, pagination[pageSize] (strapiquery's default and most). The
// status, the cursor, the mode and the extra parameters are the caller's
// to read from the query.
func ReadQueue(r *http.Request, extra ...string) (strapiquery.Query, int, error) {
	q, err := strapiquery.Parse(r.URL.RawQuery, func(k string) bool {
		return slices.Contains(queueParams, k) || slices.Contains(extra, k)
	})
	if err != nil {
		return strapiquery.Query{}, 0, err
	}
	_, size, err := q.Page("", "pagination[pageSize]")
	return q, size, err
}
