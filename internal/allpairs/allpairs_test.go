package allpairs

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestCircleHoldsEveryPairOnceInDisjointRounds(t *testing.T) {
	for n := 2; n <= 33; n++ {
		rounds := Circle(n)
		wantRounds, wantPairs := n-1, n/2
		if n%2 == 1 {
			wantRounds, wantPairs = n, (n-1)/2
		}
		if len(rounds) != wantRounds {
			t.Fatalf("n=%d: %d rounds, want %d", n, len(rounds), wantRounds)
		}
		seen := map[Pair]bool{}
		for r, round := range rounds {
			if len(round) != wantPairs {
				t.Fatalf("n=%d round %d: %d pairs, want %d", n, r, len(round), wantPairs)
			}
			busy := map[int]bool{}
			for _, p := range round {
				if p.A >= p.B || p.B >= n || busy[p.A] || busy[p.B] {
					t.Fatalf("n=%d round %d: pair %v out of range or not disjoint", n, r, p)
				}
				busy[p.A], busy[p.B] = true, true
				if seen[p] {
					t.Fatalf("n=%d: pair %v twice", n, p)
				}
				seen[p] = true
			}
		}
		if len(seen) != n*(n-1)/2 {
			t.Fatalf("n=%d: %d pairs, want %d", n, len(seen), n*(n-1)/2)
		}
	}
	if Circle(1) != nil || Circle(0) != nil {
		t.Fatal("fewer than two nodes have no rounds")
	}
}

func TestCircleOfFour(t *testing.T) {
	want := [][]Pair{{{0, 3}, {1, 2}}, {{0, 1}, {2, 3}}, {{0, 2}, {1, 3}}}
	if got := Circle(4); !reflect.DeepEqual(got, want) {
		t.Fatalf("Circle(4) = %v, want %v", got, want)
	}
	// three nodes: a bye each round
	want = [][]Pair{{{1, 2}}, {{0, 1}}, {{0, 2}}}
	if got := Circle(3); !reflect.DeepEqual(got, want) {
		t.Fatalf("Circle(3) = %v, want %v", got, want)
	}
}

func TestRingPhasesEvenThenOdd(t *testing.T) {
	cases := map[int][][]Pair{
		2: {{{0, 1}}},
		3: {{{0, 1}}, {{1, 2}}, {{0, 2}}},
		4: {{{0, 1}, {2, 3}}, {{1, 2}, {0, 3}}},
		5: {{{0, 1}, {2, 3}}, {{1, 2}, {3, 4}}, {{0, 4}}},
		6: {{{0, 1}, {2, 3}, {4, 5}}, {{1, 2}, {3, 4}, {0, 5}}},
	}
	for n, want := range cases {
		if got := RingPhases(n); !reflect.DeepEqual(got, want) {
			t.Errorf("RingPhases(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestOffMedian(t *testing.T) {
	med, off := OffMedian([]float64{10, 9.5, 10.2, 6.9, 7.0, 1}, 0.30)
	// sorted 1 6.9 7.0 9.5 10 10.2: median (7.0+9.5)/2 = 8.25, floor 5.775
	if med != 8.25 || !reflect.DeepEqual(off, []int{5}) {
		t.Fatalf("median %v off %v", med, off)
	}
	// exactly 30 % below passes
	if _, off := OffMedian([]float64{10, 10, 7}, 0.30); off != nil {
		t.Fatalf("7 of 10 is at the boundary and passes, got off %v", off)
	}
	if m, off := OffMedian(nil, 0.3); m != 0 || off != nil {
		t.Fatal("no values: median 0, nothing off")
	}
}

func TestTestDurationFromBudget(t *testing.T) {
	// 8 nodes: 7 rounds + 2 reserved for re-tests
	d, err := TestDuration(18*time.Second, 8)
	if err != nil || d != 2*time.Second {
		t.Fatalf("18 s for 8 nodes: %v %v, want 2s", d, err)
	}
	d, err = TestDuration(100*time.Second, 32) // 31+2 rounds: 3.03 s → 3.0 s
	if err != nil || d != 3*time.Second {
		t.Fatalf("100 s for 32 nodes: %v %v", d, err)
	}
	if _, err := TestDuration(5*time.Second, 8); err == nil || !strings.Contains(err.Error(), "at least 9s") {
		t.Fatalf("a budget too small names the least that works, got %v", err)
	}
	if d, _ := TestDuration(time.Hour, 2); d != MaxTest {
		t.Fatalf("capped at %s, got %s", MaxTest, d)
	}
}

// fabricModel is a test model of a switch: a direction a→b moves at the
// lower of a's sending and b's receiving cap; paths lists pairs slowed on
// their own, and flaky fails a direction the first time only. Where rdma
// is set, a direction between two of its nodes is measured with
// ib_write_bw at rdmaGbps, every other one with the TCP probe.
type fabricModel struct {
	tx, rx   []float64
	paths    map[Test]float64
	flaky    map[Test]bool
	calls    [][]Test
	rdma     map[int]bool
	rdmaGbps float64
}

func (f *fabricModel) Measure(_ context.Context, tests []Test, _ time.Duration) []Measurement {
	f.calls = append(f.calls, tests)
	var out []Measurement
	for _, t := range tests {
		g := min(f.tx[t.From], f.rx[t.To])
		if v, ok := f.paths[t]; ok {
			g = v
		}
		if f.flaky[t] {
			delete(f.flaky, t)
			out = append(out, Measurement{Test: t, Err: "connect: connection refused"})
			continue
		}
		m := Measurement{Test: t, Gbps: g}
		if f.rdma != nil {
			m.Tool = ToolTCP
			if f.rdma[t.From] && f.rdma[t.To] {
				m.Tool, m.Gbps = ToolRDMA, f.rdmaGbps
			}
		}
		out = append(out, m)
	}
	return out
}

func uniform(n int, g float64) *fabricModel {
	f := &fabricModel{paths: map[Test]float64{}, flaky: map[Test]bool{}}
	for i := 0; i < n; i++ {
		f.tx, f.rx = append(f.tx, g), append(f.rx, g)
	}
	return f
}

func names(n int) []string {
	var s []string
	for i := 0; i < n; i++ {
		s = append(s, fmt.Sprintf("n%d", i+1))
	}
	return s
}

func summary(r *Result) []string {
	var out []string
	for _, s := range r.Judgement.Suspects {
		name := r.Names[s.Node]
		switch s.Kind {
		case SuspectCable:
			name += " " + string(s.Side)
		case SuspectPair:
			name += "→" + r.Names[s.Peer]
		}
		out = append(out, s.Kind+" "+name+" "+s.Status)
	}
	return out
}

func TestRunNamesTheSlowNodeAndTheOneWayCable(t *testing.T) {
	f := uniform(8, 9.4)
	f.tx[2], f.rx[2] = 0.9, 0.9 // n3's port slow both ways
	f.tx[5] = 1.1               // n6's cable slow sending only
	r, err := Run(context.Background(), f, names(8), AllPairs, 2*time.Second, DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node n3 confirmed", "cable n6 tx confirmed"}
	if got := summary(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("suspects %q, want %q", got, want)
	}
	if len(r.Measurements) != 56+4 { // 28 pairs both ways, then two re-tests each way
		t.Fatalf("%d measurements", len(r.Measurements))
	}
	// each suspect against its own known-good partner, each direction in
	// a round of its own: two rounds of two tests
	if len(f.calls) != 7+2 || len(f.calls[7]) != 2 || len(f.calls[8]) != 2 {
		t.Fatalf("calls %v", f.calls)
	}
	s := r.Judgement.Scores[2]
	if s.TxPass != 0 || s.TxTest != 7 || s.RxPass != 0 || s.RxTest != 7 {
		t.Fatalf("n3 score %+v", s)
	}
	if s := r.Judgement.Scores[5]; s.TxPass != 0 || s.RxPass != 6 { // received from everyone but n3
		t.Fatalf("n6 score %+v", s)
	}
	if r.Judgement.Reference != 9.4 || r.Judgement.RefName != "best pairs" {
		t.Fatalf("reference %v %s", r.Judgement.Reference, r.Judgement.RefName)
	}
	mx := r.Matrix()
	if mx[2][0] != 0.9 || mx[0][5] != 9.4 || mx[5][0] != 1.1 || mx[0][0] != 0 {
		t.Fatalf("matrix %v", mx)
	}
}

func TestRunClearsAFlakyPairAndKeepsABadPath(t *testing.T) {
	f := uniform(6, 9.4)
	f.flaky[Test{0, 1}] = true // fails once, passes on re-test
	f.paths[Test{3, 4}] = 2.0  // this path alone is slow, every time
	r, err := Run(context.Background(), f, names(6), AllPairs, time.Second, DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pair n1→n2 cleared", "pair n4→n5 confirmed"}
	if got := summary(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("suspects %q, want %q", got, want)
	}
	ev := strings.Join(r.Judgement.Suspects[1].Evidence, "; ")
	if !strings.Contains(ev, "n4→n5 2.00 Gb/s, under 6.58 Gb/s (70 % of the best pairs' 9.40 Gb/s)") || !strings.Contains(ev, "re-test n4→n5: failed again") {
		t.Fatalf("evidence %q", ev)
	}
}

func TestRunPutsAPairOnTheEndThatFailsWithAGoodPartner(t *testing.T) {
	// one slow path out of n2's three: too few failures for its ratio, so
	// a pair suspect; the re-test against a good partner passes, so it
	// stays on the pair
	f := uniform(4, 9.4)
	f.paths[Test{1, 2}] = 1.0
	r, _ := Run(context.Background(), f, names(4), AllPairs, time.Second, DefaultRules)
	if got := summary(r); !reflect.DeepEqual(got, []string{"pair n2→n3 confirmed"}) {
		t.Fatalf("suspects %q", got)
	}
	// two of n2's three sends slow: its sending side is the suspect, and
	// the re-test against the known-good n1 fails the same way
	f = uniform(4, 9.4)
	f.paths[Test{1, 2}] = 1.0
	f.paths[Test{1, 0}] = 1.0
	r, _ = Run(context.Background(), f, names(4), AllPairs, time.Second, DefaultRules)
	if got := summary(r); !reflect.DeepEqual(got, []string{"cable n2 tx confirmed"}) {
		t.Fatalf("suspects %q", got)
	}
}

func TestRunAgainstExpectedRate(t *testing.T) {
	f := uniform(4, 5) // every direction at half the expected rate
	r, _ := Run(context.Background(), f, names(4), AllPairs, time.Second, Rules{Expected: 10, LowRatio: 0.5})
	if len(r.Judgement.Suspects) != 4 {
		t.Fatalf("every node below the expected rate is a suspect: %q", summary(r))
	}
	if r.Judgement.Floor != 7 {
		t.Fatalf("floor %v", r.Judgement.Floor)
	}
}

func TestRunRingOrder(t *testing.T) {
	f := uniform(4, 9.4)
	_, err := Run(context.Background(), f, names(4), Ring, time.Second, DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]Test{{{0, 1}, {1, 0}, {2, 3}, {3, 2}}, {{1, 2}, {2, 1}, {0, 3}, {3, 0}}}
	if !reflect.DeepEqual(f.calls, want) {
		t.Fatalf("calls %v, want %v", f.calls, want)
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := Run(ctx, uniform(4, 1), names(4), AllPairs, time.Second, DefaultRules)
	if err == nil || len(r.Measurements) != 0 {
		t.Fatalf("an interrupted run says so: %v %d", err, len(r.Measurements))
	}
}

func TestRunRingRetestsTheFailingDirection(t *testing.T) {
	// a ring of six: cable n2→n3 slow in that direction, every time; the
	// n5→n6 direction fails once only
	f := uniform(6, 9.4)
	f.paths[Test{1, 2}] = 1.0
	f.flaky[Test{4, 5}] = true
	r, err := Run(context.Background(), f, names(6), Ring, time.Second, DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(r); !reflect.DeepEqual(got, []string{"pair n5→n6 cleared", "pair n2→n3 confirmed"}) {
		t.Fatalf("suspects %q", got)
	}
	// two phases, then the two failing directions again, together
	if len(f.calls) != 3 || !reflect.DeepEqual(f.calls[2], []Test{{4, 5}, {1, 2}}) {
		t.Fatalf("calls %v", f.calls)
	}
}

// Pairs measured with ib_write_bw (both ends RDMA) and pairs measured with
// TCP are each judged against their own tool's median: the TCP pairs of
// the two nodes without RDMA are not slow next to ib_write_bw's, and
// n6's one-way cable is found against TCP's median.
func TestRunJudgesEachToolAgainstItsOwnMedian(t *testing.T) {
	f := uniform(6, 9.4)
	f.rdma, f.rdmaGbps = map[int]bool{0: true, 1: true, 2: true, 3: true}, 92.57
	f.tx[5] = 1.1 // n6's cable slow sending only
	r, err := Run(context.Background(), f, names(6), AllPairs, time.Second, DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(r); !reflect.DeepEqual(got, []string{"cable n6 tx confirmed"}) {
		t.Fatalf("suspects %q", got)
	}
	j := r.Judgement
	if j.Reference != 9.4 || j.RefName != ToolTCP+" best pairs" { // 18 of 30 directions are TCP
		t.Fatalf("reference %v %q", j.Reference, j.RefName)
	}
	ev := strings.Join(j.Suspects[0].Evidence, "; ")
	if !strings.Contains(ev, "sent: 0 of 5 tests passed (median 1.10 Gb/s)") || !strings.Contains(ev, "received: 5 of 5 tests passed") {
		t.Fatalf("evidence %q", ev)
	}
	if !j.Pass(Measurement{Tool: ToolRDMA, Gbps: 64.8}) || j.Pass(Measurement{Tool: ToolRDMA, Gbps: 64.7}) || !j.Pass(Measurement{Tool: ToolTCP, Gbps: 6.58}) {
		t.Fatal("each tool's floor is 70 % of its own median (92.57 → 64.799, 9.4 → 6.58)")
	}
	ap, _ := r.Report(AllPairs, ToolTCP, "")
	if ap.Tool != "ib_write_bw where both ends have RDMA, else sparkrig TCP probe" {
		t.Fatalf("tool %q", ap.Tool)
	}
	tools := map[string]int{}
	for _, p := range ap.Pairs {
		tools[p.Tool]++
	}
	if len(ap.Pairs) != 15 || tools[ToolRDMA] != 6 || tools[ToolTCP] != 9 {
		t.Fatalf("pairs %+v", ap.Pairs)
	}
	if len(ap.Tools) != 2 || ap.Tools[0].Tool != ToolRDMA || ap.Tools[0].Reference != 92.57 || ap.Tools[1].Tool != ToolTCP || ap.Tools[1].Reference != 9.4 {
		t.Fatalf("tools %+v", ap.Tools)
	}
	if ap.FloorAt(0, 1) != ap.Tools[0].Floor || ap.FloorAt(5, 0) != ap.Tools[1].Floor { // n1↔n2 RDMA, n6↔n1 TCP
		t.Fatalf("floors %v %v", ap.FloorAt(0, 1), ap.FloorAt(5, 0))
	}
}

// interruptedFabric is a fabric model where Ctrl-C comes in call cut,
// after its first ran tests finished: the others of that call fail as
// their stopped clients do.
type interruptedFabric struct {
	*fabricModel
	cut, ran int
	cancel   context.CancelFunc
}

func (f *interruptedFabric) Measure(ctx context.Context, tests []Test, d time.Duration) []Measurement {
	out := f.fabricModel.Measure(ctx, tests, d)
	if len(f.calls) == f.cut {
		for i := f.ran; i < len(out); i++ {
			out[i] = Measurement{Test: out[i].Test, Tool: ToolTCP, Err: "signal: terminated"}
		}
		f.cancel()
	}
	return out
}

// The tests an interrupt cut short are not failures: an interrupted run
// names no node, cable or pair for them.
func TestRunInterruptedMidRound(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &interruptedFabric{fabricModel: uniform(6, 9.4), cut: 2, ran: 1, cancel: cancel}
	r, err := Run(ctx, f, names(6), AllPairs, time.Second, DefaultRules)
	if err == nil {
		t.Fatal("an interrupted run says so")
	}
	if len(r.Measurements) != 7 {
		t.Errorf("%d measurements, want round 1's six directions and the one of round 2 that finished", len(r.Measurements))
	}
	if got := summary(r); len(got) != 0 {
		t.Errorf("suspects named for the tests the interrupt stopped: %q", got)
	}
	for _, row := range r.Matrix() {
		for _, v := range row {
			if v < 0 {
				t.Errorf("a stopped test shown as failed: %v", r.Matrix())
				return
			}
		}
	}
}

// A re-test the interrupt stopped confirms nothing: the direction that
// failed once (and would pass again) stays a suspect.
func TestRunInterruptedInRetests(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// 7 rounds, then the re-tests
	f := &interruptedFabric{fabricModel: uniform(8, 9.4), cut: 8, cancel: cancel}
	f.flaky[Test{4, 5}] = true
	r, err := Run(ctx, f, names(8), AllPairs, time.Second, DefaultRules)
	if err == nil {
		t.Fatal("an interrupted run says so")
	}
	if got, want := summary(r), []string{"pair n5→n6 suspect"}; !reflect.DeepEqual(got, want) {
		t.Errorf("suspects %q, want %q", got, want)
	}
}
