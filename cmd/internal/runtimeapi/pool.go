package runtimeapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// deliveryAttempts bounds how often a Pool retries an event that never reached
// a function because its instance died while idle.
const deliveryAttempts = 3

// Pool runs invocations of one Function on warm instances, starting new ones
// (cold starts) while all are busy, up to Function.MaxInstances. Instances
// that crashed, timed out or failed their init are discarded, never reused.
type Pool struct {
	fn       Function
	err      error          // the Function is invalid
	slots    chan struct{}  // a token per live instance
	idle     chan *Instance // warm instances waiting for an event
	closed   context.Context
	closeAll context.CancelFunc // called by Close, under mu

	mu      sync.Mutex
	live    map[*Instance]struct{}
	started int
}

// NewPool returns a pool for fn. It starts no process: the first Invoke does.
func NewPool(fn Function) *Pool {
	fn, err := fn.withDefaults()
	closed, closeAll := context.WithCancel(context.Background())
	return &Pool{fn: fn, err: err, slots: make(chan struct{}, max(fn.MaxInstances, 1)), idle: make(chan *Instance, max(fn.MaxInstances, 1)),
		closed: closed, closeAll: closeAll, live: make(map[*Instance]struct{})}
}

// Invoke runs one invocation like Instance.Invoke, on an idle warm instance if
// there is one, else on a new instance while there are fewer than
// MaxInstances, else on the first instance to become free. An event that
// never reached its instance (it died while idle) is retried on another one.
func (p *Pool) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if p.err != nil {
		return nil, fmt.Errorf("invoke: %w", p.err)
	}
	for attempt := 1; ; attempt++ {
		inst, err := p.acquire(ctx)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, ErrClosed) { // its instance failed its init: a function error
				p.fn.record(true, time.Now())
			}
			return nil, fmt.Errorf("invoke %s: %w", p.fn.Name, err)
		}
		out, err := inst.invoke(ctx, payload, func() { p.put(inst) })
		if errors.Is(err, errNotDelivered) && attempt < deliveryAttempts {
			continue
		}
		return out, inst.wrap(err)
	}
}

// acquire returns an instance for the caller's exclusive use: a warm one, or a
// new one when there is room, waiting for either when there is neither.
func (p *Pool) acquire(ctx context.Context) (*Instance, error) {
	for p.closed.Err() == nil {
		var inst *Instance
		select { // prefer a warm instance to a cold start
		case inst = <-p.idle:
		default:
			select {
			case inst = <-p.idle:
			case p.slots <- struct{}{}:
				return p.start(ctx)
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-p.closed.Done():
			}
		}
		if inst != nil {
			if inst.dead.Err() == nil {
				return inst, nil
			}
			p.discard(inst)
		}
	}
	return nil, ErrClosed
}

// start starts a new instance in the slot the caller took.
func (p *Pool) start(ctx context.Context) (*Instance, error) {
	inst, err := Start(ctx, p.fn)
	if err != nil {
		<-p.slots
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Err() != nil {
		_ = inst.Close()
		<-p.slots
		return nil, ErrClosed
	}
	p.live[inst] = struct{}{}
	p.started++
	return inst, nil
}

// put makes inst available again once its invocation is over, or discards it
// when it is dead or the pool closed.
func (p *Pool) put(inst *Instance) {
	if p.closed.Err() != nil || inst.dead.Err() != nil {
		p.discard(inst)
		return
	}
	p.idle <- inst // never blocks: there are at most cap(p.idle) instances
}

// discard closes inst and frees its slot.
func (p *Pool) discard(inst *Instance) {
	_ = inst.Close() // its processes are gone whatever Close reports
	p.mu.Lock()
	_, ok := p.live[inst]
	delete(p.live, inst)
	p.mu.Unlock()
	if ok {
		<-p.slots
	}
}

// Started returns how many instances the pool has started (its cold starts).
func (p *Pool) Started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// Live returns how many instances the pool currently holds, busy or idle.
func (p *Pool) Live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.live)
}

// Close kills all instances. Invocations in flight fail, later ones fail with
// ErrClosed. Close is idempotent.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed.Err() != nil {
		p.mu.Unlock()
		return nil
	}
	p.closeAll()
	insts := slices.Collect(maps.Keys(p.live))
	clear(p.live)
	p.mu.Unlock()

	var errs []error
	for _, inst := range insts {
		errs = append(errs, inst.Close())
	}
	return errors.Join(errs...)
}
