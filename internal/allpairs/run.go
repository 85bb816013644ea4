package allpairs

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// MinTest is the shortest test worth running: TCP needs about a second to
// reach its rate.
const MinTest = time.Second

// MaxTest bounds a test however large the budget.
const MaxTest = 60 * time.Second

// RetestReserve is how many rounds of the budget are kept for re-tests.
const RetestReserve = 2

// TestDuration is the per-test duration a total time budget allows for n
// nodes: the budget shared over the circle's rounds plus RetestReserve
// rounds of re-tests, each round taking one test time (every pair and both
// directions of a round run at once), rounded down to a tenth of a second.
// A budget too small for MinTest per round is an error naming the least
// budget that works.
func TestDuration(budget time.Duration, n int) (time.Duration, error) {
	rounds := len(Circle(n)) + RetestReserve
	if n < 2 {
		return 0, fmt.Errorf("all-pairs needs two or more nodes, got %d", n)
	}
	d := (budget / time.Duration(rounds)).Truncate(100 * time.Millisecond)
	if d < MinTest {
		return 0, fmt.Errorf("a budget of %s is too small for %d nodes (%d rounds): at least %s", budget, n, rounds, MinTest*time.Duration(rounds))
	}
	return min(d, MaxTest), nil
}

// Measurer runs the tests of one round at once, each for d, and returns one
// measurement per test in the same order. Its tests never share a node
// except as the two directions of one pair.
type Measurer interface {
	Measure(ctx context.Context, tests []Test, d time.Duration) []Measurement
}

// Result is a whole all-pairs run.
type Result struct {
	Names        []string
	TestDuration time.Duration
	Rounds       [][]Pair
	Measurements []Measurement // the rounds' and the re-tests'
	Judgement    Judgement
	Wall         time.Duration // the rounds and re-tests, not the set-up
	RoundsWall   time.Duration // the rounds alone
	RoundsRun    int           // the rounds started (fewer than Rounds when interrupted)
	// Interrupted marks a run its context ended: what it did not measure
	// is said, and it is never an all-clear.
	Interrupted bool
	// Unreachable are the nodes left out of the run because they could not
	// be reached before it (name → why): a finding each.
	Unreachable map[string]string
}

// Prober says whether a node still answers (nil) or why not: a node whose
// tests failed is asked, so that one that stopped answering is named as
// such rather than as slow.
type Prober interface {
	Alive(ctx context.Context, node int) error
}

// scheduled is how many directions the rounds hold.
func (r *Result) scheduled() int {
	n := 0
	for _, round := range r.Rounds {
		n += 2 * len(round)
	}
	return n
}

// NotMeasured are the directions of the rounds with no first-pass
// measurement (an interrupt stopped them, or their rounds never ran), in
// the rounds' order.
func (r *Result) NotMeasured() []Test {
	got := map[Test]bool{}
	for _, m := range r.Measurements {
		if !m.Retest {
			got[m.Test] = true
		}
	}
	var out []Test
	for _, round := range r.Rounds {
		for _, p := range round {
			for _, t := range []Test{{p.A, p.B}, {p.B, p.A}} {
				if !got[t] {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// Schedule names which pairing a run uses.
type Schedule int

const (
	// AllPairs is the circle method, for nodes on one switch.
	AllPairs Schedule = iota
	// Ring qualifies the cables of a direct-cabled ring in NCCL's even/odd
	// order, nodes in the order given.
	Ring
)

// Run measures every round of the schedule, judges, re-tests the suspects
// against known-good partners and resolves them. An interrupted run
// returns what it measured, judged, with ctx's error: the tests the
// interrupt stopped are left out, not failed.
func Run(ctx context.Context, m Measurer, names []string, s Schedule, d time.Duration, r Rules) (*Result, error) {
	res := &Result{Names: names, TestDuration: d}
	if s == Ring {
		res.Rounds = RingPhases(len(names))
	} else {
		res.Rounds = Circle(len(names))
	}
	start := time.Now()
	for _, round := range res.Rounds {
		if ctx.Err() != nil {
			break
		}
		res.RoundsRun++
		var tests []Test
		for _, p := range round {
			tests = append(tests, Test{p.A, p.B}, Test{p.B, p.A})
		}
		res.Measurements = append(res.Measurements, finished(ctx, measure(ctx, m, tests, d, false))...)
	}
	res.RoundsWall = time.Since(start)
	res.Judgement = Judge(names, res.Measurements, r)
	res.Judgement.Ring = s == Ring
	if p, ok := m.(Prober); ok && ctx.Err() == nil {
		res.Judgement.MarkLost(lost(ctx, p, res.Measurements))
	}
	if ctx.Err() == nil {
		var again []Measurement
		for _, tests := range res.Judgement.Retests() {
			if ctx.Err() != nil {
				break
			}
			again = append(again, finished(ctx, measure(ctx, m, tests, d, true))...)
		}
		res.Measurements = append(res.Measurements, again...)
		res.Judgement.Resolve(again)
	}
	res.Wall = time.Since(start)
	res.Interrupted = ctx.Err() != nil
	return res, ctx.Err()
}

// lost asks every node with a test that did not complete whether it still
// answers, all at once: those that do not, with why.
func lost(ctx context.Context, p Prober, ms []Measurement) map[int]string {
	ask := map[int]bool{}
	for _, m := range ms {
		if m.Err != "" && !m.Retest {
			ask[m.From], ask[m.To] = true, true
		}
	}
	out := map[int]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for n := range ask {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Alive(ctx, n); err != nil {
				mu.Lock()
				out[n] = err.Error()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

// finished keeps, once ctx has ended, the tests of a round that completed:
// the others were stopped by the interrupt, and their errors say nothing
// of the nodes.
func finished(ctx context.Context, ms []Measurement) []Measurement {
	if ctx.Err() == nil {
		return ms
	}
	var out []Measurement
	for _, m := range ms {
		if m.Err == "" {
			out = append(out, m)
		}
	}
	return out
}

func measure(ctx context.Context, m Measurer, tests []Test, d time.Duration, retest bool) []Measurement {
	got := m.Measure(ctx, tests, d)
	out := make([]Measurement, len(tests))
	for i, t := range tests {
		if i < len(got) {
			out[i] = got[i]
		} else {
			out[i].Err = "no measurement"
		}
		out[i].Test = t
		out[i].Retest = retest
	}
	return out
}

// Matrix is the first-pass rate of every direction: row sends, column
// receives; -1 where a test did not complete, NaN-free 0 on the diagonal.
func (r *Result) Matrix() [][]float64 {
	n := len(r.Names)
	mx := make([][]float64, n)
	for i := range mx {
		mx[i] = make([]float64, n)
	}
	for _, m := range r.Measurements {
		if m.Retest || m.From >= n || m.To >= n {
			continue
		}
		if m.Err != "" {
			mx[m.From][m.To] = -1
		} else {
			mx[m.From][m.To] = m.Gbps
		}
	}
	return mx
}
