package allpairs

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/sparkrig/sparkrig/internal/diagnose"
)

// Test is one direction of one pair: From sends, To receives.
type Test struct {
	From, To int
}

// Measurement is one direction as measured. Err is set when the test did
// not complete; Retest marks a measurement made against a known-good
// partner after the rounds.
type Measurement struct {
	Test
	Gbps   float64
	Err    string
	Retest bool
	Tool   string // ToolRDMA or ToolTCP
	// Moved are the error counters of the pair's two ends that moved
	// while it was measured ("host dev name +n"): the pair's, as both
	// directions run at once.
	Moved []string
}

// Rules are the thresholds of the verdict.
type Rules struct {
	// Expected is the rate a direction should reach (Gb/s): the operator's
	// --expected-gbps or the platform's for the tool; 0 judges against
	// what the best pairs show the hardware can do
	// (diagnose.MeasuredReference).
	Expected float64
	// ExpectedSource says where Expected comes from.
	ExpectedSource string
	// ToolExpected is each tool's expected rate where the nodes' platform
	// has one (expectations.yaml), used where Expected is 0.
	ToolExpected map[string]Expectation
	// LowRatio is the pass ratio under which a node's sending or receiving
	// side is a suspect (Imbue's host_validation scores hosts by their pass
	// ratio over rounds).
	LowRatio float64
}

// Expectation is a rate a direction should reach and where it comes from.
type Expectation struct {
	Gbps   float64
	Source string
}

// DefaultRules are the thresholds sparkrig uses, with their sources.
var DefaultRules = Rules{LowRatio: 0.5}

// RulesSource says where the thresholds come from.
const RulesSource = diagnose.LinkRuleSource + "; " +
	"per-node pass ratio over rounds: imbue-ai/cluster-health host_validation/p2p_ib_test.py; " +
	"re-test against a known-good partner to tell which side is bad: GoogleCloudPlatform/cluster-toolkit gpu-test health checks; " +
	"a side passing fewer than half its tests with partners whose other side passed elsewhere is a suspect: sparkrig policy"

// OffMedian is diagnose.OffMedian, the one median rule analyze also
// judges rails and NCCL's diagnostics with.
func OffMedian(values []float64, frac float64) (median float64, off []int) {
	return diagnose.OffMedian(values, frac)
}

// Median is diagnose.Median.
func Median(values []float64) float64 { return diagnose.Median(values) }

// Side is one direction of a node's cable to the segment: "tx" carries
// what the node sends, "rx" what it receives.
type Side string

const (
	Tx Side = "tx"
	Rx Side = "rx"
)

// NodeScore is how one node did over the rounds.
type NodeScore struct {
	Node           int
	TxPass, TxTest int // directions it sent
	RxPass, RxTest int // directions it received
	TxMedian       float64
	RxMedian       float64
}

// TxRatio is the share of the node's sending tests that passed (1 with none).
func (s NodeScore) TxRatio() float64 { return ratio(s.TxPass, s.TxTest) }

// RxRatio is the share of the node's receiving tests that passed.
func (s NodeScore) RxRatio() float64 { return ratio(s.RxPass, s.RxTest) }

func ratio(p, n int) float64 {
	if n == 0 {
		return 1
	}
	return float64(p) / float64(n)
}

// Kind of a suspect.
const (
	SuspectNode  = "node"  // both sides of a node's port: the node or its port
	SuspectCable = "cable" // one side of a node's cable: Side says which
	SuspectPair  = "pair"  // one pair's path only (both ends fine elsewhere)
	SuspectLost  = "lost"  // the node stopped answering during the run
)

// Suspect is what the rounds point at, before and after the re-tests.
type Suspect struct {
	Kind string
	Node int  // the node (node and cable suspects); the sender of a pair
	Side Side // cable suspects
	Peer int  // the receiver of a pair suspect
	// Evidence is why, in words, with the numbers.
	Evidence []string
	// Status is "suspect" before any re-test, "confirmed" when a re-test
	// against a known-good partner failed the same way, "cleared" when it
	// passed.
	Status string
}

// Judgement is the verdict over a set of measurements.
type Judgement struct {
	Names     []string // the nodes, by index
	Reference float64  // Gb/s each direction is judged against (0: none credible)
	RefName   string   // "expected", "best pairs", or "TOOL best pairs" where several tools measured
	Floor     float64  // the rate a direction must reach to pass
	// Unjudged says why some directions could not be judged (no credible
	// reference for their tool): ask for --expected-gbps, never pass.
	Unjudged []string
	Scores   []NodeScore
	Suspects []Suspect
	rules    Rules
	// Ring marks a direct-cabled ring: a node has cables to its two
	// neighbours only, so there is no known-good partner to re-test
	// against, and a failing direction is measured again on its own.
	Ring  bool
	first []Measurement
	// refs is each tool's own reference where the directions were
	// measured with several (ib_write_bw where both ends have RDMA, TCP
	// elsewhere): a direction is judged against its tool's, never
	// another's.
	refs map[string]diagnose.LinkReference
	ref  diagnose.LinkReference
}

// reference is the reference m is judged against.
func (j Judgement) reference(m Measurement) diagnose.LinkReference {
	if r, ok := j.refs[m.Tool]; ok {
		return r
	}
	return j.ref
}

// Verdict is one measurement's verdict in the one link vocabulary
// (diagnose.LinkPass, LinkSlow, LinkFailed, LinkUnjudged).
func (j Judgement) Verdict(m Measurement) string {
	return j.reference(m).Judge(m.Gbps, m.Err == "")
}

// Pass reports whether one measurement passes against its reference.
func (j Judgement) Pass(m Measurement) bool { return j.Verdict(m) == diagnose.LinkPass }

// bad reports whether one measurement was judged and did not pass.
func (j Judgement) bad(m Measurement) bool {
	v := j.Verdict(m)
	return v == diagnose.LinkSlow || v == diagnose.LinkFailed
}

// Judge scores every node from the first-pass measurements (re-tests are
// left to Resolve) and names the suspects. A passing direction shows both
// its sender's sending side and its receiver's receiving side sound; a
// side is a suspect when it passes fewer than LowRatio of its tests with
// partners shown sound that way (a test with a partner that is itself bad
// tells nothing of this side), or when it failed every test and no
// partner of it was shown sound. Both sides suspect make a node suspect,
// one a cable side; a direction that failed while neither of its sides is
// suspect makes a pair suspect.
func Judge(names []string, ms []Measurement, r Rules) Judgement {
	j := Judgement{Names: names, rules: r, first: ms}
	j.references(ms)
	sound := j.score(ms)
	j.suspects(ms, sound)
	return j
}

// references sets each tool's reference (the one link rule) and the
// heading's: the tool measuring the most directions.
func (j *Judgement) references(ms []Measurement) {
	r := j.rules
	byTool := map[string][]float64{}
	var tools []string // in the order first measured
	for _, m := range ms {
		if m.Err == "" && !m.Retest {
			if _, ok := byTool[m.Tool]; !ok {
				tools = append(tools, m.Tool)
			}
			byTool[m.Tool] = append(byTool[m.Tool], m.Gbps)
		}
	}
	j.refs = map[string]diagnose.LinkReference{}
	most := ""
	for i, t := range tools {
		exp, src := r.Expected, r.ExpectedSource
		if e, ok := r.ToolExpected[t]; ok && exp <= 0 {
			exp, src = e.Gbps, e.Source
		}
		j.refs[t] = diagnose.LinkRef(exp, src, byTool[t])
		if i == 0 || len(byTool[t]) > len(byTool[most]) {
			most = t
		}
		if !j.refs[t].Credible() {
			why := j.refs[t].Why
			if len(tools) > 1 {
				why = t + ": " + why
			}
			j.Unjudged = append(j.Unjudged, why)
		}
	}
	j.ref = diagnose.LinkRef(r.Expected, r.ExpectedSource, nil)
	if len(tools) > 0 {
		j.ref = j.refs[most]
	}
	if len(tools) <= 1 {
		j.refs = nil
	}
	j.Reference, j.RefName, j.Floor = j.ref.Gbps, j.ref.Name, j.ref.Floor()
	if len(j.refs) > 0 && j.ref.Name == diagnose.RefBestPairs {
		j.RefName = most + " " + j.ref.Name
	}
}

func (j Judgement) valid(m Measurement) bool {
	n := len(j.Names)
	return !m.Retest && m.From >= 0 && m.From < n && m.To >= 0 && m.To < n
}

// score counts each node's passes by side, and says which sides a passing
// direction showed sound: [0] sending, [1] receiving.
func (j *Judgement) score(ms []Measurement) [2][]bool {
	n := len(j.Names)
	j.Scores = make([]NodeScore, n)
	tx := make([][]float64, n)
	rx := make([][]float64, n)
	soundTx, soundRx := make([]bool, n), make([]bool, n)
	for i := range j.Scores {
		j.Scores[i].Node = i
	}
	for _, m := range ms {
		if !j.valid(m) {
			continue
		}
		s, d := &j.Scores[m.From], &j.Scores[m.To]
		if j.Verdict(m) == diagnose.LinkUnjudged {
			continue
		}
		s.TxTest++
		d.RxTest++
		if j.Pass(m) {
			s.TxPass++
			d.RxPass++
			soundTx[m.From], soundRx[m.To] = true, true
		}
		if m.Err == "" {
			tx[m.From] = append(tx[m.From], m.Gbps)
			rx[m.To] = append(rx[m.To], m.Gbps)
		}
	}
	for i := range j.Scores {
		j.Scores[i].TxMedian, j.Scores[i].RxMedian = Median(tx[i]), Median(rx[i])
	}
	return [2][]bool{soundTx, soundRx}
}

// suspects names the sides that fail with partners shown sound (or fail
// everything with none), and the failing directions no such side explains.
func (j *Judgement) suspects(ms []Measurement, sound [2][]bool) {
	n, r := len(j.Names), j.rules
	soundTx, soundRx := sound[0], sound[1]
	// each side's tests with partners whose other side is sound
	txPass, txTest, rxPass, rxTest := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	for _, m := range ms {
		if !j.valid(m) || !j.Pass(m) && !j.bad(m) {
			continue
		}
		p := 0
		if j.Pass(m) {
			p = 1
		}
		if soundRx[m.To] {
			txPass[m.From] += p
			txTest[m.From]++
		}
		if soundTx[m.From] {
			rxPass[m.To] += p
			rxTest[m.To]++
		}
	}
	low := func(p, t, pAll, tAll int) bool {
		if t == 0 {
			return tAll > 0 && pAll == 0 // failed every test, no partner shown sound
		}
		return ratio(p, t) < r.LowRatio
	}
	flagged := make([][2]bool, n)
	for i, s := range j.Scores {
		txBad, rxBad := low(txPass[i], txTest[i], s.TxPass, s.TxTest), low(rxPass[i], rxTest[i], s.RxPass, s.RxTest)
		flagged[i] = [2]bool{txBad, rxBad}
		ev := []string{
			fmt.Sprintf("sent: %d of %d tests passed (median %s Gb/s)", s.TxPass, s.TxTest, Rate(s.TxMedian)),
			fmt.Sprintf("received: %d of %d tests passed (median %s Gb/s)", s.RxPass, s.RxTest, Rate(s.RxMedian)),
		}
		switch {
		case txBad && rxBad:
			j.Suspects = append(j.Suspects, Suspect{Kind: SuspectNode, Node: i, Evidence: ev, Status: "suspect"})
		case txBad:
			j.Suspects = append(j.Suspects, Suspect{Kind: SuspectCable, Node: i, Side: Tx, Evidence: ev, Status: "suspect"})
		case rxBad:
			j.Suspects = append(j.Suspects, Suspect{Kind: SuspectCable, Node: i, Side: Rx, Evidence: ev, Status: "suspect"})
		}
	}
	for _, m := range ms {
		if !j.valid(m) || !j.bad(m) {
			continue
		}
		if flagged[m.From][0] || flagged[m.To][1] {
			continue // explained by a side already suspect
		}
		j.Suspects = append(j.Suspects, Suspect{Kind: SuspectPair, Node: m.From, Peer: m.To, Status: "suspect",
			Evidence: []string{j.describe(m)}})
	}
}

// MarkLost names each node that stopped answering during the run (node →
// why) as such, confirmed, in place of what its failed tests made of it
// and of its partners: its tests after it went are not rates.
func (j *Judgement) MarkLost(lost map[int]string) {
	if len(lost) == 0 {
		return
	}
	var out []Suspect
	for _, s := range j.Suspects {
		if _, ok := lost[s.Node]; ok {
			continue
		}
		if _, ok := lost[s.Peer]; ok && s.Kind == SuspectPair {
			continue
		}
		out = append(out, s)
	}
	for _, n := range slices.Sorted(maps.Keys(lost)) {
		done, failed := 0, 0
		for _, m := range j.first {
			if !m.Retest && (m.From == n || m.To == n) {
				if m.Err != "" {
					failed++
				} else {
					done++
				}
			}
		}
		out = append(out, Suspect{Kind: SuspectLost, Node: n, Status: "confirmed", Evidence: []string{
			fmt.Sprintf("%d of its tests completed, then %d did not", done, failed),
			"it no longer answers: " + lost[n]}})
	}
	j.Suspects = out
}

func (j Judgement) isLost(n int) bool {
	for _, s := range j.Suspects {
		if s.Kind == SuspectLost && s.Node == n {
			return true
		}
	}
	return false
}

func (j Judgement) describe(m Measurement) string {
	if m.Err != "" {
		return fmt.Sprintf("%s→%s did not complete: %s", j.Names[m.From], j.Names[m.To], m.Err)
	}
	ref := j.reference(m)
	name := ref.Name
	if name == diagnose.RefBestPairs {
		name += "'"
	}
	if _, ok := j.refs[m.Tool]; ok {
		name = m.Tool + " " + name
	}
	return fmt.Sprintf("%s→%s %s Gb/s, under %s Gb/s (%.0f %% of the %s %s Gb/s)", j.Names[m.From], j.Names[m.To], Rate(m.Gbps), Rate(ref.Floor()),
		100*diagnose.PassFraction, name, Rate(ref.Gbps))
}

// Good lists the nodes no suspect names, best first (by the lower of
// their sending and receiving medians): the known-good partners for
// re-tests. Every failure of such a node is explained by a suspect at the
// other end, since a failure nothing explains makes a pair suspect.
func (j Judgement) Good() []int {
	suspect := map[int]bool{}
	for _, s := range j.Suspects {
		suspect[s.Node] = true
		if s.Kind == SuspectPair {
			suspect[s.Peer] = true
		}
	}
	var good []int
	for _, s := range j.Scores {
		if !suspect[s.Node] && s.TxTest+s.RxTest > 0 {
			good = append(good, s.Node)
		}
	}
	sort.SliceStable(good, func(a, b int) bool {
		sa, sb := j.Scores[good[a]], j.Scores[good[b]]
		return min(sa.TxMedian, sa.RxMedian) > min(sb.TxMedian, sb.RxMedian)
	})
	return good
}

// Retests are the tests that tell each suspect's side: a node or cable
// suspect against a known-good partner in each direction; a pair suspect
// once more, and each of its ends against a known-good partner. Suspects
// get different partners while there are enough, and each direction runs
// on its own, never with its reverse: a direction slow on one side delays
// the acknowledgements of the reverse direction's traffic, which would
// make a one-way fault look two-way. Tests are grouped into rounds in
// which no node is in two tests. With no known-good node there is nothing
// to re-test against and no rounds.
func (j Judgement) Retests() [][]Test {
	if j.Ring {
		var again []Test
		for _, m := range j.first {
			if !m.Retest && j.bad(m) && !j.isLost(m.From) && !j.isLost(m.To) {
				again = append(again, m.Test)
			}
		}
		return pack(again)
	}
	good := j.Good()
	if len(good) == 0 {
		return nil
	}
	var want []Test
	add := func(t Test) {
		if t.From != t.To && !slices.Contains(want, t) {
			want = append(want, t)
		}
	}
	partners := j.partners(good)
	for i, s := range j.Suspects {
		g := partners[i]
		switch s.Kind {
		case SuspectNode, SuspectCable:
			if g >= 0 {
				add(Test{s.Node, g})
				add(Test{g, s.Node})
			}
		case SuspectPair:
			add(Test{s.Node, s.Peer})
			if g >= 0 {
				add(Test{s.Node, g})
				add(Test{g, s.Peer})
			}
		}
	}
	return pack(want)
}

// partners gives each suspect its known-good partner (-1: none): the good
// nodes in turn, skipping the nodes under test.
func (j Judgement) partners(good []int) []int {
	out := make([]int, len(j.Suspects))
	next := 0
	for i, s := range j.Suspects {
		out[i] = -1
		not := []int{s.Node}
		if s.Kind == SuspectPair {
			not = append(not, s.Peer)
		}
		for k := range good {
			g := good[(next+k)%len(good)]
			if !slices.Contains(not, g) {
				out[i] = g
				next++
				break
			}
		}
	}
	return out
}

// pack groups tests into rounds in which no node is in two tests.
func pack(tests []Test) [][]Test {
	var rounds [][]Test
	busy := []map[int]bool{}
	for _, t := range tests {
		placed := false
		for i := range rounds {
			if !busy[i][t.From] && !busy[i][t.To] {
				rounds[i] = append(rounds[i], t)
				busy[i][t.From], busy[i][t.To] = true, true
				placed = true
				break
			}
		}
		if !placed {
			rounds = append(rounds, []Test{t})
			busy = append(busy, map[int]bool{t.From: true, t.To: true})
		}
	}
	return rounds
}

// Resolve turns each suspect into a confirmed or cleared one from the
// re-tests: a node or cable suspect is what its re-tests against the
// known-good partner show (both directions failing: the node; one: that
// side of its cable; neither: cleared); a pair suspect that fails again is
// put on the end that also fails against a known-good partner, or stays on
// the pair when neither end does.
func (j *Judgement) Resolve(ms []Measurement) {
	failed := map[Test]*bool{}
	for _, m := range ms {
		if !m.Retest {
			continue
		}
		f := j.bad(m)
		if prev, ok := failed[m.Test]; ok && !*prev {
			continue // any passing re-test clears the direction
		}
		failed[m.Test] = &f
	}
	if j.Ring {
		j.resolveRing(failed)
		return
	}
	good := j.Good()
	var out []Suspect
	seen := map[string]bool{}
	keep := func(s Suspect) {
		key := fmt.Sprint(s.Kind, s.Node, s.Side, s.Peer)
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, s)
	}
	dirFailed := func(a, b int) (bool, bool) {
		f, ok := failed[Test{a, b}]
		if !ok {
			return false, false
		}
		return *f, true
	}
	partners := j.partners(good)
	for i, s := range j.Suspects {
		g := partners[i]
		switch s.Kind {
		case SuspectLost:
			keep(s)
		case SuspectNode, SuspectCable:
			txF, txOK := dirFailed(s.Node, g)
			rxF, rxOK := dirFailed(g, s.Node)
			if g < 0 || !txOK || !rxOK {
				keep(s) // nothing to re-test against: stays a suspect
				continue
			}
			s.Evidence = append(s.Evidence, j.retestLine(s.Node, g, txF), j.retestLine(g, s.Node, rxF))
			switch {
			case txF && rxF:
				s.Kind, s.Side, s.Status = SuspectNode, "", "confirmed"
			case txF:
				s.Kind, s.Side, s.Status = SuspectCable, Tx, "confirmed"
			case rxF:
				s.Kind, s.Side, s.Status = SuspectCable, Rx, "confirmed"
			default:
				s.Status = "cleared"
			}
			keep(s)
		case SuspectPair:
			again, ok := dirFailed(s.Node, s.Peer)
			if !ok {
				keep(s)
				continue
			}
			s.Evidence = append(s.Evidence, j.retestLine(s.Node, s.Peer, again))
			if !again {
				s.Status = "cleared"
				keep(s)
				continue
			}
			txF, _ := dirFailed(s.Node, g)
			rxF, _ := dirFailed(g, s.Peer)
			switch {
			case g >= 0 && txF:
				s.Evidence = append(s.Evidence, j.retestLine(s.Node, g, true))
				keep(Suspect{Kind: SuspectCable, Node: s.Node, Side: Tx, Evidence: s.Evidence, Status: "confirmed"})
			case g >= 0 && rxF:
				s.Evidence = append(s.Evidence, j.retestLine(g, s.Peer, true))
				keep(Suspect{Kind: SuspectCable, Node: s.Peer, Side: Rx, Evidence: s.Evidence, Status: "confirmed"})
			default:
				s.Status = "confirmed"
				keep(s)
			}
		}
	}
	j.Suspects = out
}

func (j Judgement) retestLine(from, to int, failed bool) string {
	if failed {
		return fmt.Sprintf("re-test %s→%s: failed again", j.Names[from], j.Names[to])
	}
	return fmt.Sprintf("re-test %s→%s: passed", j.Names[from], j.Names[to])
}

// Rate writes a rate in Gb/s with three significant digits or so.
func Rate(v float64) string {
	switch {
	case v < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// resolveRing judges a ring's suspects by their failing directions alone:
// a suspect whose every failing direction failed again is confirmed, one
// whose failing directions all passed is cleared, and one that did both
// stays a suspect.
func (j *Judgement) resolveRing(failed map[Test]*bool) {
	for i, s := range j.Suspects {
		again, cleared := 0, 0
		for _, m := range j.first {
			if m.Retest || !j.bad(m) {
				continue
			}
			involved := m.From == s.Node || m.To == s.Node
			if s.Kind == SuspectPair {
				involved = m.From == s.Node && m.To == s.Peer
			}
			f, ok := failed[m.Test]
			if !involved || !ok {
				continue
			}
			s.Evidence = append(s.Evidence, j.retestLine(m.From, m.To, *f))
			if *f {
				again++
			} else {
				cleared++
			}
		}
		switch {
		case again > 0 && cleared == 0:
			s.Status = "confirmed"
		case cleared > 0 && again == 0:
			s.Status = "cleared"
		}
		j.Suspects[i] = s
	}
}
