package agentmodel

import "sync"

// recorder keeps the requests an endpoint has seen, oldest first. Its mu also
// guards the endpoint's own script, so that a request reads the script it is
// recorded with.
type recorder[R any] struct {
	mu   sync.Mutex
	reqs []R
}

// Requests returns every request recorded so far, oldest first.
func (c *recorder[R]) Requests() []R {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]R(nil), c.reqs...)
}

// Reset forgets the recorded requests.
func (c *recorder[R]) Reset() {
	c.mu.Lock()
	c.reqs = nil
	c.mu.Unlock()
}

// conversation is the recorded requests that are the agent's own turns, oldest
// first.
func (c *recorder[R]) conversation(turn func(R) bool) []R {
	var out []R
	for _, r := range c.Requests() {
		if turn(r) {
			out = append(out, r)
		}
	}
	return out
}
