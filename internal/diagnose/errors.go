package diagnose

import (
	"bytes"
	"hash/maphash"
	"sort"
	"strings"

	"github.com/sparkrig/sparkrig/internal/expect"
)

// ErrorHit is one error signature found in an input: how often, the first
// line that showed it and where.
type ErrorHit struct {
	Signature *expect.Signature
	Count     int
	// First is the first matching line (cut to maxEvidence bytes) and Line its number.
	First string
	Line  int
	// Score ranks the hits: the signature's weight, a little more for
	// repeated evidence.
	Score float64
}

const maxEvidence = 400

// ErrorMatcher finds error signatures line by line, in constant memory.
type ErrorMatcher struct {
	sigs []expect.Signature
	hits map[int]*ErrorHit
	line int
	lits litIndex
	// litOf[i][j] is the index in lits of signature i's pattern j's
	// literal, -1 for a pattern without one
	litOf [][]int
	found []bool
	// allLit: every pattern has a literal, so a line without any cannot match
	allLit bool
	// byLit[id] are the patterns whose literal is lits' id, in catalogue
	// order; foundIDs the literals the line last scanned contains
	byLit    [][]sigPattern
	foundIDs []int
	// seen[i] == m.line: signature i has matched the current line
	seen []int
	// filterOf[i][j][k] is the index in lits of signature i's pattern
	// j's filter literal k, -1 for one too short to index
	filterOf [][][]int
	// memo holds the answers for lines read lately: a log repeats its
	// error lines (every rank, every retry), and a line matches the same
	// signatures every time. recording collects the current line's.
	memo      *[memoSlots]memoSlot
	seed      maphash.Seed
	recording []int
	noMemo    bool // tests: every line matched afresh
}

// memoSlots lines are remembered, each up to maxMemoLine bytes: 256 KiB
// at most, whatever the input.
const (
	memoSlots   = 1024
	maxMemoLine = 256
)

// memoSlot is one line read before and the signatures it matched, in the
// order they matched.
type memoSlot struct {
	line []byte
	hits []int
	ok   bool
}

// minIndexed is the shortest prefilter literal the scan looks for.
const minIndexed = 6

// sigPattern names pattern j of signature i.
type sigPattern struct{ i, j int }

// NewErrorMatcher returns a matcher for the catalogue.
func NewErrorMatcher(sigs []expect.Signature) *ErrorMatcher {
	m := &ErrorMatcher{sigs: sigs, hits: map[int]*ErrorHit{}}
	ids := map[string]int{}
	idOf := func(l []byte) int {
		if len(l) < 2 {
			return -1
		}
		id, ok := ids[string(l)]
		if !ok {
			id = len(m.lits.lits)
			ids[string(l)] = id
			m.lits.add(l)
		}
		return id
	}
	for i := range sigs {
		s := &sigs[i]
		row := make([]int, len(s.Lits))
		for j, l := range s.Lits {
			row[j] = idOf(l)
		}
		m.litOf = append(m.litOf, row)
	}
	// the literals of each pattern's prefilter are found in the same pass
	for i := range sigs {
		s := &sigs[i]
		rows := make([][]int, len(s.Res))
		for j := range s.Res {
			for _, l := range s.FilterLiterals(j) {
				// a short literal ("(5)", " with ") shares its first
				// bytes with much of a line: searched for only when asked
				id := -1
				if len(l) >= minIndexed {
					id = idOf(l)
				}
				rows[j] = append(rows[j], id)
			}
		}
		m.filterOf = append(m.filterOf, rows)
	}
	m.lits.index()
	m.found = make([]bool, len(m.lits.lits))
	m.byLit = make([][]sigPattern, len(m.lits.lits))
	m.seen = make([]int, len(sigs))
	m.allLit = true
	for i, row := range m.litOf {
		for j, id := range row {
			if id < 0 {
				m.allLit = false
				continue
			}
			m.byLit[id] = append(m.byLit[id], sigPattern{i, j})
		}
	}
	return m
}

// litIndex finds which of many literals a line contains in one pass over
// the line: a position's two bytes are looked up in a table of pairs of
// bytes the literals hold, and only the literals keyed by that pair are
// compared there. Each literal is keyed by step consecutive pairs, so that
// one of them stands at a multiple of step wherever the literal stands in a
// line: the scan looks at every step-th position only. The pairs chosen are
// the literal's least common run (a log line is mostly lower-case letters
// and spaces), so that few positions ask for a comparison.
type litIndex struct {
	lits [][]byte
	// step is how far apart the positions looked at are: the shortest
	// literal's pairs, at most maxStep
	step int
	// first[b0<<8|b1] is 1 + the index in lists of the literals keyed by
	// b0 b1, 0 when none is
	first []uint16
	lists [][]keyedLit
	// pairs has bit b0<<8|b1 set where first is not 0: 8 KiB, which stays
	// in the first-level cache where first's 128 KiB does not
	pairs *[1024]uint64
}

// maxStep bounds the step: each literal adds that many keys, and more keys
// ask for more comparisons.
const maxStep = 2

// keyedLit is literal id, keyed by its bytes at off and off+1.
type keyedLit struct{ id, off int }

// byteCosts is byteCost of every byte, looked up while the index is made:
// the catalogue's literals ask for it tens of thousands of times.
var byteCosts = func() (t [256]uint8) {
	for c := range t {
		t[c] = uint8(byteCost(byte(c)))
	}
	return t
}()

// byteCost is how common a byte is in log text, roughly.
func byteCost(c byte) int {
	switch {
	case c == ' ':
		return 8
	case bytes.IndexByte([]byte("etaoinsrl"), c) >= 0:
		return 5
	case c >= 'a' && c <= 'z':
		return 3
	case c >= '0' && c <= '9', c == ':', c == '.', c == '/':
		return 2
	}
	return 1
}

// add appends literal l (two bytes or more); index must be called after
// the last one.
func (x *litIndex) add(l []byte) { x.lits = append(x.lits, l) }

// index keys every literal.
func (x *litIndex) index() {
	x.first = make([]uint16, 1<<16)
	x.pairs = new([1024]uint64)
	x.lists = x.lists[:0]
	x.step = maxStep
	for _, l := range x.lits {
		x.step = min(x.step, len(l)-1)
	}
	if len(x.lits) == 0 || x.step < 1 {
		x.step = 1
	}
	for id, l := range x.lits {
		off, best := 0, 1<<30
		for o := 0; o+x.step < len(l); o++ {
			cost := 0
			for k := o; k < o+x.step; k++ {
				cost += int(byteCosts[l[k]]) + int(byteCosts[l[k+1]])
				if e := x.first[pairKey(l, k)]; e != 0 {
					cost += len(x.lists[e-1]) // a pair other literals are keyed by already
				}
			}
			if cost < best {
				off, best = o, cost
			}
		}
		for k := off; k < off+x.step; k++ {
			key := pairKey(l, k)
			x.pairs[key>>6] |= 1 << (key & 63)
			if x.first[key] == 0 {
				x.lists = append(x.lists, nil)
				x.first[key] = uint16(len(x.lists))
			}
			x.lists[x.first[key]-1] = append(x.lists[x.first[key]-1], keyedLit{id, k})
		}
	}
}

// pairKey is the key of l's bytes at o and o+1.
func pairKey(l []byte, o int) int { return int(l[o])<<8 | int(l[o+1]) }

// scan sets found[i] for each literal i the line contains and appends the
// ids found to ids; found is cleared of the ids given first.
func (x *litIndex) scan(line []byte, found []bool, ids []int) []int {
	for _, id := range ids {
		found[id] = false
	}
	ids = ids[:0]
	if x.first == nil {
		return ids
	}
	pairs := x.pairs
	for i := 0; i+1 < len(line); i += x.step {
		k := int(line[i])<<8 | int(line[i+1])
		if pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, kl := range x.lists[x.first[k]-1] {
			start := i - kl.off
			if start < 0 || found[kl.id] {
				continue
			}
			// literals keyed alike often share their first bytes and
			// differ at the end: the last byte first, without a call
			lit := x.lits[kl.id]
			if end := start + len(lit); end <= len(line) && line[end-1] == lit[len(lit)-1] && string(line[start:end]) == string(lit) {
				found[kl.id] = true
				ids = append(ids, kl.id)
			}
		}
	}
	return ids
}

// candidate is a cheap test that a line may be an error: most lines of a
// large log are NCCL INFO lines and table rows, which carry none.
// With literals (every pattern has one, which the matcher looks for in
// one pass), the keys are not needed: the shapes that carry no error are
// still passed over.
func candidate(line []byte, literals bool) bool {
	if i := bytes.Index(line, []byte("NCCL ")); i >= 0 {
		rest := line[i+5:]
		if bytes.HasPrefix(rest, []byte("INFO ")) {
			// the INFO lines that carry an error start so: "Failed to open
			// libibverbs.so", "Call to connect returned Connection refused";
			// NCCL 2.25 tells kernels that do not fit the GPU in an INFO line
			// ("ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856");
			// from 2.27 a retried connect names its address ("socketPollConnect:
			// connect to 169.254.170.23<41837> returned Connection refused,
			// retrying", src/misc/socket.cc v2.27.3-1); 2.30.7 tells a peer of
			// the other transport's socket type in an INFO line
			// ("socketFinalizeAccept from %s: wrong socket type ...",
			// src/misc/socket.cc v2.30.7-1:378-381); from 2.27 a
			// NCCL_TOPO_FILE that cannot be opened is an INFO line ("Could
			// not open XML topology file %s : %s", src/graph/xml.cc
			// v2.27.3-1:391)
			rest = rest[5:]
			return bytes.HasPrefix(rest, []byte("Failed")) || bytes.HasPrefix(rest, []byte("Could not open XML")) || bytes.HasPrefix(rest, []byte("Call to")) || bytes.HasPrefix(rest, []byte("NET/Plugin")) ||
				bytes.HasPrefix(rest, []byte("ncclMaxSharedMem")) || bytes.HasPrefix(rest, []byte("socketFinalizeAccept")) || bytes.Contains(rest[:min(len(rest), 48)], []byte(": connect to "))
		}
		if bytes.HasPrefix(rest, []byte("WARN ")) || bytes.HasPrefix(rest, []byte("ATTN ")) || bytes.HasPrefix(rest, []byte("error")) {
			return true
		}
	}
	t := line
	for len(t) > 0 && (t[0] == ' ' || t[0] == '\t') {
		t = t[1:]
	}
	// table rows (two numbers first) and header lines are no error; the
	// lines reach here without their timestamps
	if len(t) == 0 || t[0] == '#' || numberRow(t) {
		return false
	}
	if literals {
		return true
	}
	for _, k := range candidateKeys {
		if bytes.Contains(line, k) {
			return true
		}
	}
	return false
}

func numberRow(t []byte) bool {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i == len(t) || t[i] != ' ' && t[i] != '\t' {
		return false
	}
	for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
		i++
	}
	return i < len(t) && t[i] >= '0' && t[i] <= '9'
}

var candidateKeys = [][]byte{[]byte("WARN"), []byte("ATTN"), []byte("rror"), []byte("ailed"), []byte("imed out"), []byte("imeout"),
	[]byte("imeout"), []byte("refused"), []byte("peer"), []byte("vent"), []byte("GID"), []byte("issing"), []byte("dead"),
	[]byte("Segmentation"), []byte("SIGSEGV"), []byte("libibverbs"), []byte("UNDELIVERABLE"), []byte("ranks have different"),
	[]byte("onnect")}

// Observe matches the next line against every signature; its number is
// one more than the line observed before.
func (m *ErrorMatcher) Observe(line []byte) { m.ObserveAt(m.line+1, line) }

// ObserveAt matches line number n of the input against every signature: a
// caller that hands on only some lines says where each stands, so that a
// hit's Line is the input's. n must grow from call to call.
func (m *ErrorMatcher) ObserveAt(n int, line []byte) {
	m.line = n
	if len(line) < 8 || !candidate(line, m.allLit) {
		return
	}
	// the hits of this line alone
	m.recording = m.recording[:0]
	if len(line) > maxMemoLine || m.noMemo {
		m.observe(line)
		return
	}
	if m.memo == nil {
		m.memo = new([memoSlots]memoSlot)
		m.seed = maphash.MakeSeed()
	}
	slot := &m.memo[maphash.Bytes(m.seed, line)&(memoSlots-1)]
	if slot.ok && string(slot.line) == string(line) {
		for _, i := range slot.hits {
			m.hit(i, line)
		}
		return
	}
	m.observe(line)
	slot.line = append(slot.line[:0], line...)
	slot.hits = append(slot.hits[:0], m.recording...)
	slot.ok = true
}

// observe matches a line that passed candidate.
func (m *ErrorMatcher) observe(line []byte) {
	m.foundIDs = m.lits.scan(line, m.found, m.foundIDs)
	if !m.allLit {
		m.observeAll(line)
		return
	}
	// every pattern has a literal: only the patterns of the literals the
	// line holds can match
	for _, id := range m.foundIDs {
		for _, sp := range m.byLit[id] {
			if m.seen[sp.i] == m.line {
				continue // the signature matched this line already
			}
			if m.matches(sp.i, sp.j, line) {
				m.hit(sp.i, line)
			}
		}
	}
}

// observeAll tries every signature: some pattern has no literal.
func (m *ErrorMatcher) observeAll(line []byte) {
	for i := range m.sigs {
		s := &m.sigs[i]
		for j := range s.Res {
			if id := m.litOf[i][j]; id >= 0 && !m.found[id] || !containsAll(line, s.AllLits[j]) {
				continue
			}
			if m.matches(i, j, line) {
				m.hit(i, line)
				break
			}
		}
	}
}

// matches tries signature i's pattern j on the line, its filter's
// literals told by the scan.
func (m *ErrorMatcher) matches(i, j int, line []byte) bool {
	s := &m.sigs[i]
	ids := m.filterOf[i][j]
	lits := s.FilterLiterals(j)
	return s.MatchesKnowing(j, line, func(k int) bool {
		if id := ids[k]; id >= 0 {
			return m.found[id]
		}
		return bytes.Contains(line, lits[k])
	})
}

// hit counts signature i on the current line, once.
func (m *ErrorMatcher) hit(i int, line []byte) {
	m.seen[i] = m.line
	m.recording = append(m.recording, i)
	h := m.hits[i]
	if h == nil {
		first := line
		if len(first) > maxEvidence {
			first = first[:maxEvidence]
		}
		h = &ErrorHit{Signature: &m.sigs[i], First: strings.ToValidUTF8(string(bytes.TrimSpace(first)), "?"), Line: m.line}
		m.hits[i] = h
	}
	h.Count++
}

// Hits returns the signatures found, most telling first: by weight, then
// by how often they showed, then by the first line.
func (m *ErrorMatcher) Hits() []ErrorHit {
	out := make([]ErrorHit, 0, len(m.hits))
	for _, h := range m.hits {
		c := *h
		c.Score = c.Signature.Weight + 0.05*float64(min(c.Count, 10))/10
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Signature.ID < out[j].Signature.ID
	})
	return out
}

// Found reports whether any signature has matched so far.
func (m *ErrorMatcher) Found() bool { return len(m.hits) > 0 }

// containsAll: the line contains every literal.
func containsAll(line []byte, lits [][]byte) bool {
	for _, l := range lits {
		if !bytes.Contains(line, l) {
			return false
		}
	}
	return true
}
