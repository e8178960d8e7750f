package main

// This file holds stampctl metrics: the functions' metrics of the last
// minutes as the dashboard shows them, from the local stack's summary
// (cmd/internal/localmetrics, which reads the functions' log lines as
// CloudWatch Logs does), or, for a deployed stack, where its dashboard is.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"stampduty/cmd/internal/localmetrics"
	"stampduty/shared/metrics"
)

// metricsSummary prints the summary of the last --minutes: one line per
// metric and dimension values, counts summed, timings with their samples,
// percentiles and maximum; --json prints the rows.
func (c *cli) metricsSummary(fs *flag.FlagSet, args []string) error {
	minutes := fs.Int("minutes", 5, "the span, in minutes back from now (1 to 60)")
	asJSON := fs.Bool("json", false, "print JSON (a list of objects) instead of the table")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *minutes < 1 || *minutes > 60 {
		return usagef("metrics summary: --minutes must be from 1 to 60")
	}
	st, err := c.stack()
	if err != nil {
		return err
	}
	if st != nil {
		dash, err := st.output("DashboardUrl")
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "stack %s's metrics are on its CloudWatch dashboard: %s\n", st.name, dash)
		return nil
	}
	base, err := c.apiURL()
	if err != nil {
		return err
	}
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not the local stack: the summary is the local stack's (make local); for a deployed stack give --stack NAME, whose dashboard shows the same metrics", base)
	}
	// The local stack answers from memory: 10 s is a stack that hangs.
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+localmetrics.Path+"?minutes="+strconv.Itoa(*minutes), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("read the local stack's metrics at %s (is make local running?): %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("read the local stack's metrics at %s: %s", base, resp.Status)
	}
	var body struct {
		Data []localmetrics.Row `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("read the local stack's metrics at %s: %w", base, err)
	}
	if *asJSON {
		return c.printJSON(body.Data)
	}
	if len(body.Data) == 0 {
		fmt.Fprintf(c.stdout, "no metric in the last %d minutes: the functions wrote none (send a request, or wait for a scheduled run)\n", *minutes)
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "METRIC\tDIMENSIONS\tSUM\tSAMPLES\tP50\tP90\tP99\tMAX\tNAMESPACE\n")
	for _, r := range body.Data {
		if r.Unit == string(metrics.Count) {
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t-\t-\t-\t-\t%s\n", r.Metric, r.Dims(), num(r.Sum), r.Samples, r.Namespace)
			continue
		}
		unit := map[string]string{string(metrics.Milliseconds): " ms", string(metrics.Seconds): " s"}[r.Unit]
		fmt.Fprintf(w, "%s\t%s\t-\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Metric, r.Dims(), r.Samples,
			num(r.P50)+unit, num(r.P90)+unit, num(r.P99)+unit, num(r.Max)+unit, r.Namespace)
	}
	return w.Flush()
}

// num writes v in the fewest digits that are exact (12, 8.864).
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
