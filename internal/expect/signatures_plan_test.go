package expect

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

// sampleOf writes a string the pattern's syntax tree could match, with
// random choices for repeats, alternations and classes (an empty-width
// assertion is left out, so some samples do not match: both answers are
// compared).
func sampleOf(r *syntax.Regexp, rng *rand.Rand, b *strings.Builder) {
	switch r.Op {
	case syntax.OpLiteral:
		b.WriteString(string(r.Rune))
	case syntax.OpCharClass:
		if len(r.Rune) >= 2 {
			k := rng.IntN(len(r.Rune)/2) * 2
			lo, hi := r.Rune[k], r.Rune[k+1]
			if hi > lo+1000 {
				hi = lo + 1000
			}
			b.WriteRune(lo + rune(rng.IntN(int(hi-lo)+1)))
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte("x :(4)"[rng.IntN(6)])
	case syntax.OpCapture:
		sampleOf(r.Sub[0], rng, b)
	case syntax.OpStar, syntax.OpQuest, syntax.OpPlus, syntax.OpRepeat:
		n := rng.IntN(3)
		if r.Op == syntax.OpPlus || r.Op == syntax.OpRepeat && r.Min > 0 {
			n++
		}
		if r.Op == syntax.OpQuest {
			n = rng.IntN(2)
		}
		for range n {
			sampleOf(r.Sub[0], rng, b)
		}
	case syntax.OpConcat:
		for _, s := range r.Sub {
			sampleOf(s, rng, b)
		}
	case syntax.OpAlternate:
		sampleOf(r.Sub[rng.IntN(len(r.Sub))], rng, b)
	}
}

// Matches is the regexp's answer on every line: samples of each pattern,
// cut, doubled and behind real and random prefixes, and the other
// patterns' samples.
func TestMatchesIsTheRegexp(t *testing.T) {
	sigs, err := Signatures()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(36, 1))
	var lines []string
	for _, s := range sigs {
		for _, m := range s.Match {
			re, err := syntax.Parse(m, syntax.Perl)
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				var b strings.Builder
				sampleOf(re, rng, &b)
				lines = append(lines, b.String())
			}
		}
	}
	prefixes := []string{"", "spark-1:123:456 [0] NCCL WARN ", "[rank3]: ", "x", "\xe2", "status=4 ", "Cuda failure"}
	var all []string
	for _, l := range lines {
		p := prefixes[rng.IntN(len(prefixes))]
		all = append(all, l, p+l, l+" "+l, l[:rng.IntN(len(l)+1)], p+l[rng.IntN(len(l)+1):], l+"\n"+p)
	}
	plans, matched := 0, 0
	for _, s := range sigs {
		for j, re := range s.Res {
			if s.plans[j].prefix != nil || s.plans[j].filter.op != pfTrue {
				plans++
			}
			for _, l := range all {
				want := re.MatchString(l)
				if got := s.Matches(j, []byte(l)); got != want {
					t.Errorf("%s %q on %q: %v, the regexp says %v", s.ID, s.Match[j], l, got, want)
				}
				lits := s.FilterLiterals(j)
				has := func(k int) bool { return strings.Contains(l, string(lits[k])) }
				if got := s.MatchesKnowing(j, []byte(l), has); got != want {
					t.Errorf("%s %q on %q knowing its literals: %v, the regexp says %v", s.ID, s.Match[j], l, got, want)
				}
				if want {
					matched++
				}
			}
		}
	}
	// the test means something only if most patterns have a plan and the
	// samples match often
	if plans*2 < len(lines)/20 || matched < len(lines) {
		t.Fatalf("%d patterns with a plan, %d matches over %d samples", plans, matched, len(lines))
	}
}

func TestPlanOf(t *testing.T) {
	for pattern, want := range map[string]struct {
		prefix  string
		literal bool
	}{
		`Connection closed by remote peer`: {"Connection closed by remote peer", true},
		`Cuda failure( \d+)? '`:            {"Cuda failure", false},
		`^Waiving \w+\.`:                   {"", false},
		`(?i)timeout`:                      {"", false},
		`(a|b)c`:                           {"", false},
		`Got completion from peer \S+ with error 4\b`: {"Got completion from peer ", false},
	} {
		p := planOf(pattern, true)
		if string(p.prefix) != want.prefix || p.literal != want.literal {
			t.Errorf("%q: prefix %q literal %v, want %q %v", pattern, p.prefix, p.literal, want.prefix, want.literal)
		}
	}
}

// Plans of hand-made patterns on lines chosen to trip each shortcut:
// overlapping glob literals, a newline under ".*", a literal twice, an
// alternation whose factored prefix the prefilter joins again.
func TestPlanMatchesEdges(t *testing.T) {
	for _, c := range []struct{ pattern, line string }{
		{`ab.*ba`, "aba"}, {`ab.*ba`, "abba"}, {`ab.*ba`, "ab\nba"}, {`ab.*ba`, "xxabyyba"},
		{`Got peer \S+ with (status=5\b|status=[^(]*\(5\)|error 5\b)`, "Got peer a with status=12 (Recv) 5"},
		{`Got peer \S+ with (status=5\b|status=[^(]*\(5\)|error 5\b)`, "Got peer a with status=x (5)"},
		{`Got peer \S+ with (status=5\b|status=[^(]*\(5\)|error 5\b)`, "Got peer Got peer a with error 5"},
		{`ibv_modify_qp failed with (error )?(110|Connection timed out)`, "ibv_modify_qp failed with error 110"},
		{`ibv_modify_qp failed with (error )?(110|Connection timed out)`, "ibv_modify_qp failed with error 11"},
		{`x\bfoo`, "x foo"}, {`foo\b`, "foo_"}, {`foo\b`, "foo."},
		{"caf\u00e9 .*x", "caf\u00e9 yx"}, {`a\x{FFFD}b`, "a\xffb"},
	} {
		re := regexp.MustCompile(c.pattern)
		// compiled now (a file read) or when first tried (compiled in)
		for _, compile := range []bool{true, false} {
			p := planOf(c.pattern, compile)
			if got, want := p.matches(lazyRegexp(c.pattern, nil), []byte(c.line), nil), re.MatchString(c.line); got != want {
				t.Errorf("%q on %q (compiled now: %v): %v, the regexp says %v", c.pattern, c.line, compile, got, want)
			}
		}
	}
}

// FuzzMatches: on any bytes, every pattern's plan answers as its regexp.
func FuzzMatches(f *testing.F) {
	for _, s := range []string{
		"n1:1:2 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=0 len=0 vendor err 129 (Recv)",
		"h:1:2 [7] socket.c:485 NCCL WARN socketStartConnect: Connect to 10.0.0.82<38455> failed : Software caused connection abort",
		"NCCL WARN Cuda failure 2 'out of memory'", "ibv_modify_qp failed with error 110", "\xff\xfe", "",
	} {
		f.Add([]byte(s))
	}
	sigs, err := Signatures()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, s := range sigs {
			for j, re := range s.Res {
				if got, want := s.Matches(j, in), re.Match(in); got != want {
					t.Fatalf("%s %q on %q: %v, the regexp says %v", s.ID, s.Match[j], in, got, want)
				}
			}
		}
	})
}
