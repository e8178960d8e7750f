package webhooks

// Poller names one of the dispatcher's pollers: poller Index of Count
// (0 ≤ Index < Count). The zero value is the only poller. The pollers
// share the outbox and the due jobs out between them so that no item is
// read by two of them (see DECISIONS.md, "Scaling past one poller").
type Poller struct{ Index, Count int }
