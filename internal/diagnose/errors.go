package diagnose

import (
	"bytes"
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
}

// NewErrorMatcher returns a matcher for the catalogue.
func NewErrorMatcher(sigs []expect.Signature) *ErrorMatcher {
	return &ErrorMatcher{sigs: sigs, hits: map[int]*ErrorHit{}}
}

// candidate is a cheap test that a line may be an error: most lines of a
// large log are NCCL INFO lines, which carry errors only in a few words.
func candidate(line []byte) bool {
	if i := bytes.Index(line, []byte("NCCL INFO ")); i >= 0 {
		rest := line[i+10:]
		return bytes.Contains(rest, []byte("ailed")) || bytes.Contains(rest, []byte("refused"))
	}
	for _, k := range candidateKeys {
		if bytes.Contains(line, k) {
			return true
		}
	}
	return false
}

var candidateKeys = [][]byte{[]byte("WARN"), []byte("ATTN"), []byte("rror"), []byte("ailed"), []byte("imed out"), []byte("imeout"),
	[]byte("imeout"), []byte("refused"), []byte("peer"), []byte("vent"), []byte("GID"), []byte("issing"), []byte("dead"),
	[]byte("Segmentation"), []byte("SIGSEGV"), []byte("libibverbs"), []byte("UNDELIVERABLE"), []byte("ranks have different"),
	[]byte("onnect")}

// Observe matches one line against every signature.
func (m *ErrorMatcher) Observe(line []byte) {
	m.line++
	if len(line) < 8 || !candidate(line) {
		return
	}
	for i := range m.sigs {
		s := &m.sigs[i]
		for _, re := range s.Res {
			if !re.Match(line) {
				continue
			}
			h := m.hits[i]
			if h == nil {
				first := line
				if len(first) > maxEvidence {
					first = first[:maxEvidence]
				}
				h = &ErrorHit{Signature: s, First: strings.ToValidUTF8(string(bytes.TrimSpace(first)), "?"), Line: m.line}
				m.hits[i] = h
			}
			h.Count++
			break
		}
	}
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
		return out[i].Line < out[j].Line
	})
	return out
}

// Found reports whether any signature has matched so far.
func (m *ErrorMatcher) Found() bool { return len(m.hits) > 0 }
