package expect

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

//go:embed signatures.yaml
var signatureData []byte

// Signature is one error message shape: what it means on DGX Spark and on
// GPU servers, what to do, and where that comes from.
type Signature struct {
	ID            string   `yaml:"id" json:"id"`
	Title         string   `yaml:"title" json:"title"`
	Kind          string   `yaml:"kind" json:"kind"`
	Match         []string `yaml:"match" json:"match"`
	Weight        float64  `yaml:"weight" json:"weight"`
	Severity      string   `yaml:"severity" json:"severity"` // warn or fail
	MeaningSpark  string   `yaml:"meaning_spark" json:"meaning_spark"`
	MeaningServer string   `yaml:"meaning_server" json:"meaning_server"`
	Fix           string   `yaml:"fix" json:"fix"`
	Sources       []string `yaml:"sources" json:"sources"`
	// FixedIn is the NCCL release that fixed the bug behind the message,
	// where an NCCL bug is one of its causes, and FixedBy what that release
	// changed, with its source: the lines naming an older release read as
	// NCCL too old.
	FixedIn string `yaml:"fixed_in,omitempty" json:"fixed_in,omitempty"`
	FixedBy string `yaml:"fixed_by,omitempty" json:"fixed_by,omitempty"`
	// FixedFor names the GPUs the fix concerns ("sm90": Hopper), where it
	// does not concern every GPU: the release is blamed only where the
	// lines show one of them.
	FixedFor string `yaml:"fixed_for,omitempty" json:"fixed_for,omitempty"`
	// Res is Match compiled; Lits[i] is a literal every match of Res[i]
	// contains ("" when none could be told), a cheap test before the regexp.
	Res  []*Regexp `yaml:"-" json:"-"`
	Lits [][]byte  `yaml:"-" json:"-"`
	// AllLits[i] are all the literals of 3 bytes or more every match of
	// Res[i] contains: a line without one of them is not tried.
	AllLits [][][]byte `yaml:"-" json:"-"`
	// plans[i] is how Res[i] is tried cheaply (see Matches).
	plans []matchPlan
}

// requiredLiteral returns the longest run of plain characters that every
// match of the pattern contains: characters outside any group, class or
// escape and not made optional by a quantifier. "" when there is none of
// at least 4 characters.
func requiredLiteral(pattern string) string {
	best := ""
	for _, l := range requiredLiterals(pattern) {
		if len(l) > len(best) {
			best = l
		}
	}
	if len(best) < 4 {
		return ""
	}
	return best
}

// requiredLiterals returns every run of at least 3 plain characters that
// every match of the pattern contains (see requiredLiteral); nil when an
// alternation at the top level makes none required.
func requiredLiterals(pattern string) []string {
	var runs []string
	run := []byte{}
	flush := func() {
		if len(run) >= 3 {
			runs = append(runs, string(run))
		}
		run = run[:0]
	}
	depth := 0
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '(':
			flush()
			depth++
		case c == ')':
			depth--
			flush()
		case c == '|':
			if depth == 0 {
				return nil // an alternation at the top: no literal is required
			}
		// an escape or a class is read whole inside a group too: the
		// parentheses or bar it holds are characters, not syntax
		case c == '\\':
			flush()
			i++
		case c == '[':
			flush()
			i = classEnd(pattern, i)
		case depth > 0:
		case c == '?' || c == '*' || c == '{':
			if len(run) > 0 {
				run = run[:len(run)-1]
			}
			flush()
			if c == '{' {
				// a repeat count ("{1,3}") is syntax, not text
				if j := strings.IndexByte(pattern[i:], '}'); j > 0 {
					i += j
				}
			}
		case c == '.' || c == '^' || c == '$' || c == '+':
			if c == '+' {
				// one or more: the character stays required, the run ends
				flush()
				continue
			}
			flush()
		default:
			run = append(run, c)
		}
	}
	flush()
	return runs
}

// classEnd is the index of the ']' that closes the character class
// opened at pattern[open] (RE2 syntax: a ']' first, after an optional
// '^', is a member; a backslash escapes the next byte), len(pattern) when
// none does.
func classEnd(pattern string, open int) int {
	i := open + 1
	if i < len(pattern) && pattern[i] == '^' {
		i++
	}
	if i < len(pattern) && pattern[i] == ']' {
		i++
	}
	for ; i < len(pattern) && pattern[i] != ']'; i++ {
		if pattern[i] == '\\' {
			i++
		}
	}
	return i
}

// Meaning is what the message means on the platform ("dgx-spark" or any
// other, including unknown).
func (s *Signature) Meaning(platform string) string {
	if platform == "dgx-spark" {
		return s.MeaningSpark
	}
	return s.MeaningServer
}

var signatures = sync.OnceValues(func() ([]Signature, error) {
	if fresh(signatureData, signaturesGenLen, signaturesGenCRC) {
		// the compiled-in entries themselves, taken once
		return checkSignatures(generatedSignatures)
	}
	return ParseSignatures(signatureData)
})

// Signatures returns the embedded error signatures (an error is a defect of
// the data file, which the tests read).
func Signatures() ([]Signature, error) { return signatures() }

// ParseSignatures reads a signature catalogue and checks every entry.
func ParseSignatures(data []byte) ([]Signature, error) {
	sigs, err := decodeSignatures(data)
	if err != nil {
		return nil, err
	}
	return checkSignatures(sigs)
}

// decodeSignatures reads a signature catalogue's entries as written.
func decodeSignatures(data []byte) ([]Signature, error) {
	var doc struct {
		Signatures []Signature `yaml:"signatures"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("signatures.yaml: %w", err)
	}
	return doc.Signatures, nil
}

// checkSignatures checks every entry as written, and compiles and plans
// its patterns (each is an error when it does not compile); an entry
// planned already (compiled in, where the patterns were compiled and
// planned when the values were written) has them compiled when first
// tried.
func checkSignatures(sigs []Signature) ([]Signature, error) {
	seen := map[string]bool{}
	for i := range sigs {
		s := &sigs[i]
		if s.ID == "" || s.Title == "" || len(s.Match) == 0 || s.MeaningSpark == "" || s.MeaningServer == "" || s.Fix == "" ||
			len(s.Sources) == 0 || s.Weight <= 0 || (s.Severity != "warn" && s.Severity != "fail") {
			return nil, fmt.Errorf("signatures.yaml: entry %d (%q) lacks an id, title, match, meaning, fix, source, weight or severity", i, s.ID)
		}
		if (s.FixedIn == "") != (s.FixedBy == "") || s.FixedIn != "" && !dottedRelease(s.FixedIn) {
			return nil, fmt.Errorf("signatures.yaml: %s: fixed_in needs fixed_by and a release such as 2.15.1", s.ID)
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("signatures.yaml: %s: duplicate id", s.ID)
		}
		seen[s.ID] = true
		if s.plans != nil {
			for _, m := range s.Match {
				s.Res = append(s.Res, lazyRegexp(m, nil))
			}
			continue
		}
		for _, m := range s.Match {
			re, err := regexp.Compile(m)
			if err != nil {
				return nil, fmt.Errorf("signatures.yaml: %s: %w", s.ID, err)
			}
			s.Res = append(s.Res, lazyRegexp(m, re))
			s.plans = append(s.plans, planOf(m, true))
			var lit []byte
			if l := requiredLiteral(m); l != "" {
				lit = []byte(l)
			}
			s.Lits = append(s.Lits, lit)
			var all [][]byte
			for _, l := range requiredLiterals(m) {
				all = append(all, []byte(l))
			}
			s.AllLits = append(s.AllLits, all)
		}
	}
	return sigs, nil
}

// dottedRelease: v is a release of dotted numbers ("2.15.1").
func dottedRelease(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}
