package allpairs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// noisyFabric is a switch whose good ports move 1 Gb/s and bad ones a
// tenth of it, every direction the slower of its two ends with ±4 % of
// noise, as a loaded machine measures.
type noisyFabric struct {
	bad []bool
	rng *rand.Rand
}

func (f *noisyFabric) Measure(_ context.Context, tests []Test, _ time.Duration) []Measurement {
	var out []Measurement
	for _, t := range tests {
		g := 1.0
		if f.bad[t.From] || f.bad[t.To] {
			g = 0.1
		}
		out = append(out, Measurement{Test: t, Gbps: g * (0.96 + 0.08*f.rng.Float64())})
	}
	return out
}

// named lists the nodes a run names (suspects not cleared), and those it
// confirms.
func namedNodes(r *Result) (named, confirmed []int) {
	for _, s := range r.Judgement.Suspects {
		if s.Status == "cleared" {
			continue
		}
		nodes := []int{s.Node}
		if s.Kind == SuspectPair {
			nodes = append(nodes, s.Peer)
		}
		for _, n := range nodes {
			if !slices.Contains(named, n) {
				named = append(named, n)
			}
			if s.Status == "confirmed" && !slices.Contains(confirmed, n) {
				confirmed = append(confirmed, n)
			}
		}
	}
	slices.Sort(named)
	slices.Sort(confirmed)
	return named, confirmed
}

// TestJudgeAnyShareOfBadNodes holds the judge to its rule for every node
// count from 2 to 16 and every number of bad nodes, below and above half,
// wherever they sit, with and without an expected rate:
//   - with the expected rate every bad node is named and no good node is
//     confirmed; with two or more good nodes exactly the bad ones are
//     named, confirmed;
//   - from the measurements alone, with two or more good nodes (a pair
//     that shows what the hardware can do) exactly the bad nodes are named
//     and confirmed, however many they are; with fewer, no good node is
//     named (every direction then runs at a bad node's rate, which nothing
//     measured can tell from a healthy one: that is what --expected-gbps
//     is for);
//   - with no bad node nothing is named and there is nothing unjudged.
func TestJudgeAnyShareOfBadNodes(t *testing.T) {
	for n := 2; n <= 16; n++ {
		for k := 0; k <= n; k++ {
			for _, expected := range []float64{0, 1} {
				seed := uint64(n*1000 + k*10 + int(expected))
				rng := rand.New(rand.NewPCG(seed, 7))
				bad := make([]bool, n)
				var want []int
				for _, i := range rng.Perm(n)[:k] {
					bad[i] = true
				}
				for i, b := range bad {
					if b {
						want = append(want, i)
					}
				}
				rules := DefaultRules
				rules.Expected = expected
				r, err := Run(context.Background(), &noisyFabric{bad: bad, rng: rng}, names(n), AllPairs, time.Second, rules)
				if err != nil {
					t.Fatal(err)
				}
				got, confirmed := namedNodes(r)
				name := fmt.Sprintf("%d nodes, bad %v, expected %v", n, want, expected)
				good := n - k
				for _, c := range confirmed {
					if !bad[c] {
						t.Errorf("%s: good node %d confirmed: %q", name, c, summary(r))
					}
				}
				switch {
				case k == 0:
					if len(got) != 0 || len(r.Judgement.Unjudged) != 0 {
						t.Errorf("%s: named %v, unjudged %q", name, got, r.Judgement.Unjudged)
					}
				case good >= 2:
					if !slices.Equal(got, want) || !slices.Equal(confirmed, want) {
						t.Errorf("%s: named %v, confirmed %v: %q", name, got, confirmed, summary(r))
					}
				case expected > 0:
					for _, w := range want {
						if !slices.Contains(got, w) {
							t.Errorf("%s: bad node %d not named: %q", name, w, summary(r))
						}
					}
				default:
					for _, g := range got {
						if !bad[g] {
							t.Errorf("%s: good node %d named: %q", name, g, summary(r))
						}
					}
				}
			}
		}
	}
}

// TestMedianFooledCases are the two clusters the median rule passed: one
// of three nodes slow, two of four. Both are named, confirmed, from the
// measurements alone.
func TestMedianFooledCases(t *testing.T) {
	for _, c := range []struct {
		n   int
		bad []int
	}{{3, []int{2}}, {4, []int{2, 3}}} {
		f := uniform(c.n, 9.4)
		for _, b := range c.bad {
			f.tx[b], f.rx[b] = 0.9, 0.9
		}
		r, err := Run(context.Background(), f, names(c.n), AllPairs, time.Second, DefaultRules)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, b := range c.bad {
			want = append(want, fmt.Sprintf("node n%d confirmed", b+1))
		}
		if got := summary(r); !slices.Equal(got, want) {
			t.Errorf("%d nodes, %v slow: suspects %q, want %q", c.n, c.bad, got, want)
		}
	}
}

// deadFabric is a uniform fabric whose node dead stops answering after
// the first round: its tests fail and it no longer answers.
type deadFabric struct {
	*fabricModel
	dead   int
	rounds int
}

func (f *deadFabric) Measure(ctx context.Context, tests []Test, d time.Duration) []Measurement {
	f.rounds++
	out := f.fabricModel.Measure(ctx, tests, d)
	for i, m := range out {
		if f.rounds > 1 && (m.From == f.dead || m.To == f.dead) {
			out[i].Gbps, out[i].Err = 0, "ssh: connection timed out"
		}
	}
	return out
}

func (f *deadFabric) Alive(_ context.Context, node int) error {
	if node == f.dead && f.rounds > 1 {
		return fmt.Errorf("ssh: connect to host n%d port 22: Connection timed out", node+1)
	}
	return nil
}

// A node lost mid-run is named as lost, confirmed, with what answered
// before; no other node or pair is named, and no re-test waits on it.
func TestRunNamesANodeLostMidRun(t *testing.T) {
	f := &deadFabric{fabricModel: uniform(6, 9.4), dead: 3}
	r, err := Run(context.Background(), f, names(6), AllPairs, time.Second, DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(r); !slices.Equal(got, []string{"lost n4 confirmed"}) {
		t.Fatalf("suspects %q", got)
	}
	if ev := r.Judgement.Suspects[0].Evidence; len(ev) != 2 || ev[0] != "2 of its tests completed, then 8 did not" ||
		ev[1] != "it no longer answers: ssh: connect to host n4 port 22: Connection timed out" {
		t.Errorf("evidence %q", ev)
	}
	if len(f.calls) != 5 {
		t.Errorf("%d rounds measured, want the 5 rounds and no re-test", len(f.calls))
	}
	_, fs := r.Report(AllPairs, ToolTCP, "")
	if len(fs) != 1 || fs[0].ID != "allpairs.lost" || fs[0].Host != "n4" || fs[0].Remedy == nil {
		t.Errorf("findings %+v", fs)
	}
}

// An interrupted run says which directions it did not measure, and its
// report is never an all-clear.
func TestInterruptedRunSaysWhatWasNotMeasured(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &interruptedFabric{fabricModel: uniform(4, 9.4), cut: 2, cancel: cancel}
	r, err := Run(ctx, f, names(4), AllPairs, time.Second, DefaultRules)
	if err == nil || !r.Interrupted {
		t.Fatal("an interrupted run says so")
	}
	ap, fs := r.Report(AllPairs, ToolTCP, "")
	if len(ap.Unjudged) != 1 || ap.Unjudged[0] != "interrupted: 8 of 12 directions were not measured (n1→n2, n2→n1, n3→n4, n4→n3, n1→n3, n3→n1, and 2 more)" {
		t.Errorf("unjudged %q", ap.Unjudged)
	}
	if len(fs) != 1 || fs[0].ID != "allpairs.not-measured" || fs[0].Severity.Verdict() != "unknown" {
		t.Errorf("findings %+v", fs)
	}
}

// Two nodes, one direction ten times the other and no expected rate:
// nothing tells which is normal, so nothing passes and the report asks for
// --expected-gbps; with it, the slow direction is named.
func TestNoCredibleReference(t *testing.T) {
	f := uniform(2, 9.4)
	f.paths[Test{1, 0}] = 0.9
	r, _ := Run(context.Background(), f, names(2), AllPairs, time.Second, DefaultRules)
	ap, fs := r.Report(AllPairs, ToolTCP, "")
	if len(r.Judgement.Suspects) != 0 || r.Judgement.Reference != 0 || len(ap.Unjudged) != 1 || len(fs) != 1 || fs[0].ID != "allpairs.no-reference" {
		t.Fatalf("suspects %q, unjudged %q, findings %+v", summary(r), ap.Unjudged, fs)
	}
	if want := "no credible reference: no two of the 2 directions measured agree within 30 % on a rate: what the links can do is not known; give the rate each direction should reach with --expected-gbps"; ap.Unjudged[0] != want {
		t.Errorf("unjudged %q", ap.Unjudged[0])
	}
	rules := DefaultRules
	rules.Expected = 9.4
	r, _ = Run(context.Background(), f, names(2), AllPairs, time.Second, rules)
	if got := summary(r); len(got) == 0 {
		t.Errorf("with --expected-gbps: suspects %q", got)
	}
}
