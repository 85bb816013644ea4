package expect

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// A WARN-heavy log asks the catalogue about every line, and Go's regexp
// costs a microsecond or more a try on a line of a few hundred bytes. A
// matchPlan answers the same question for less: a literal alone is a
// substring search; literals joined by ".*" are found in order; any
// other pattern is first screened by the literals every match must hold
// (a prefilter) and then tried anchored where its opening literal stands.

// matchPlan is how one pattern is tried; the zero plan tries the regexp
// on the whole line.
type matchPlan struct {
	// prefix is the literal every match opens with
	prefix []byte
	// literal: the pattern is prefix alone
	literal bool
	// glob: the pattern is these literals with ".*" between them
	glob [][]byte
	// anchored is the pattern with a "^" in front, tried at prefix
	anchored *Regexp
	// filter must hold of a line the pattern matches; lits are its
	// literals, each node's k its index there
	filter prefilter
	lits   [][]byte
}

// planOf is the plan of one pattern; compile says whether its anchored
// form is compiled now or when first tried.
func planOf(pattern string, compile bool) matchPlan {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return matchPlan{}
	}
	re = re.Simplify()
	var plan matchPlan
	if l := literalOf(re); l != nil {
		plan = matchPlan{prefix: l, literal: true, filter: prefilter{op: pfLit, lit: l}}
		plan.number(&plan.filter)
		return plan
	}
	plan.filter = infoOf(re).asFilter()
	plan.number(&plan.filter)
	if re.Op != syntax.OpConcat || len(re.Sub) == 0 {
		return plan
	}
	l := literalOf(re.Sub[0])
	if l == nil {
		return plan
	}
	// the match starts at the literal: no assertion before it can look
	// further back than the slice the anchored pattern is given
	src := `^(?:` + pattern + `)`
	var anchored *regexp.Regexp
	if compile {
		if anchored, err = regexp.Compile(src); err != nil {
			return plan
		}
	}
	plan.prefix, plan.anchored = l, lazyRegexp(src, anchored)
	plan.glob = globOf(re)
	return plan
}

// number gives each literal of the filter its index in lits.
func (p *matchPlan) number(f *prefilter) {
	if f.op == pfLit {
		f.k = len(p.lits)
		p.lits = append(p.lits, f.lit)
	}
	for i := range f.subs {
		p.number(&f.subs[i])
	}
}

// literalOf is the bytes of a case-sensitive literal node, nil otherwise
// (or where it holds U+FFFD, which the regexp also matches on a byte that
// is not UTF-8).
func literalOf(r *syntax.Regexp) []byte {
	if r.Op != syntax.OpLiteral || r.Flags&syntax.FoldCase != 0 || len(r.Rune) == 0 {
		return nil
	}
	for _, c := range r.Rune {
		if c == utf8.RuneError {
			return nil
		}
	}
	return []byte(string(r.Rune))
}

// globOf is the literals of a concatenation of literals and ".*", one
// between each two; nil for any other pattern.
func globOf(re *syntax.Regexp) [][]byte {
	var out [][]byte
	star := false
	for k, sub := range re.Sub {
		if l := literalOf(sub); l != nil && (k == 0 || star) {
			out = append(out, l)
			star = false
			continue
		}
		if sub.Op == syntax.OpStar && sub.Sub[0].Op == syntax.OpAnyCharNotNL && k > 0 && !star {
			star = true
			continue
		}
		return nil
	}
	return out
}

// matches reports whether the pattern matches the line; re is the
// pattern itself.
// has, when not nil, tells whether the line holds lits[k].
func (p *matchPlan) matches(re *Regexp, line []byte, has func(k int) bool) bool {
	if !p.filter.holds(line, has) {
		return false
	}
	if p.literal {
		return true
	}
	if p.prefix == nil {
		return re.Match(line)
	}
	if p.glob != nil && bytes.IndexByte(line, '\n') < 0 {
		// ".*" spans anything but a newline: the literals in order
		rest := line
		for _, l := range p.glob {
			k := bytes.Index(rest, l)
			if k < 0 {
				return false
			}
			rest = rest[k+len(l):]
		}
		return true
	}
	for off := 0; off < len(line); {
		k := bytes.Index(line[off:], p.prefix)
		if k < 0 {
			return false
		}
		if p.anchored.Match(line[off+k:]) {
			return true
		}
		off += k + 1
	}
	return false
}

// Matches reports whether pattern i matches the line: Res[i].Match(line),
// at less cost.
func (s *Signature) Matches(i int, line []byte) bool {
	if i >= len(s.plans) {
		return s.Res[i].Match(line)
	}
	return s.plans[i].matches(s.Res[i], line, nil)
}

// FilterLiterals are literals that decide, with the line, whether
// pattern i can match: a caller that finds them all in one pass over the
// line passes what it found to MatchesKnowing.
func (s *Signature) FilterLiterals(i int) [][]byte {
	if i >= len(s.plans) {
		return nil
	}
	return s.plans[i].lits
}

// MatchesKnowing is Matches where has(k) tells whether the line holds
// FilterLiterals(i)[k].
func (s *Signature) MatchesKnowing(i int, line []byte, has func(k int) bool) bool {
	if i >= len(s.plans) {
		return s.Res[i].Match(line)
	}
	return s.plans[i].matches(s.Res[i], line, has)
}

// prefilter is a condition on the literals a line holds: true (no
// condition), a literal, all of subs, or any of subs.
type prefilter struct {
	op   pfOp
	lit  []byte
	k    int
	subs []prefilter
}

type pfOp uint8

const (
	pfTrue pfOp = iota
	pfLit
	pfAll
	pfAny
)

func (f *prefilter) holds(line []byte, has func(k int) bool) bool {
	switch f.op {
	case pfLit:
		if has != nil {
			return has(f.k)
		}
		return bytes.Contains(line, f.lit)
	case pfAll:
		for i := range f.subs {
			if !f.subs[i].holds(line, has) {
				return false
			}
		}
	case pfAny:
		for i := range f.subs {
			if f.subs[i].holds(line, has) {
				return true
			}
		}
		return false
	}
	return true
}

// maxExact bounds the strings a pattern's exact set may hold.
const maxExact = 16

// reInfo is what every match of a node holds: exactly one of set (when
// exact), or else a text where filter holds.
type reInfo struct {
	exact  bool
	set    []string
	filter prefilter
}

func setFilter(set []string) prefilter {
	var any []prefilter
	for _, s := range set {
		if s == "" {
			return prefilter{}
		}
		any = append(any, prefilter{op: pfLit, lit: []byte(s)})
	}
	if len(any) == 1 {
		return any[0]
	}
	return prefilter{op: pfAny, subs: any}
}

func (in reInfo) asFilter() prefilter {
	if in.exact {
		return setFilter(in.set)
	}
	return in.filter
}

func pfAnd(a, b prefilter) prefilter {
	switch {
	case a.op == pfTrue:
		return b
	case b.op == pfTrue:
		return a
	case a.op == pfAll:
		return prefilter{op: pfAll, subs: append(append([]prefilter(nil), a.subs...), b)}
	}
	return prefilter{op: pfAll, subs: []prefilter{a, b}}
}

func pfOr(fs []prefilter) prefilter {
	for _, f := range fs {
		if f.op == pfTrue {
			return prefilter{}
		}
	}
	if len(fs) == 1 {
		return fs[0]
	}
	return prefilter{op: pfAny, subs: fs}
}

func cross(a, b []string) []string {
	if len(a)*len(b) > maxExact {
		return nil
	}
	var out []string
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
}

func exactInfo(set ...string) reInfo { return reInfo{exact: true, set: set} }

func infoOf(re *syntax.Regexp) reInfo {
	switch re.Op {
	case syntax.OpLiteral:
		if l := literalOf(re); l != nil {
			return exactInfo(string(l))
		}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return exactInfo("")
	case syntax.OpCapture:
		return infoOf(re.Sub[0])
	case syntax.OpQuest:
		if in := infoOf(re.Sub[0]); in.exact && len(in.set) < maxExact {
			return exactInfo(append(in.set, "")...)
		}
	case syntax.OpPlus:
		return reInfo{filter: infoOf(re.Sub[0]).asFilter()}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return reInfo{filter: infoOf(re.Sub[0]).asFilter()}
		}
	case syntax.OpAlternate:
		return alternateInfo(re.Sub)
	case syntax.OpConcat:
		return concatInfo(re.Sub)
	}
	return reInfo{}
}

func alternateInfo(subs []*syntax.Regexp) reInfo {
	var set []string
	exact := true
	var fs []prefilter
	for _, s := range subs {
		in := infoOf(s)
		fs = append(fs, in.asFilter())
		if !in.exact || len(set)+len(in.set) > maxExact {
			exact = false
		} else {
			set = append(set, in.set...)
		}
	}
	if exact {
		return exactInfo(set...)
	}
	return reInfo{filter: pfOr(fs)}
}

func concatInfo(subs []*syntax.Regexp) reInfo {
	acc := []string{""}
	var filter prefilter
	exact := true
	for _, s := range subs {
		for s.Op == syntax.OpCapture {
			s = s.Sub[0]
		}
		in := infoOf(s)
		if in.exact {
			if c := cross(acc, in.set); c != nil {
				acc = c
				continue
			}
			filter, acc, exact = pfAnd(filter, setFilter(acc)), in.set, false
			continue
		}
		exact = false
		if s.Op == syntax.OpAlternate {
			// what came before joins each alternative: "status=" then
			// "5" or ".*(5)" holds "status=5", or "status=" and "(5)"
			var fs []prefilter
			for _, a := range s.Sub {
				ai := infoOf(a)
				if c := cross(acc, ai.set); ai.exact && c != nil {
					fs = append(fs, setFilter(c))
				} else {
					fs = append(fs, pfAnd(setFilter(acc), ai.asFilter()))
				}
			}
			filter, acc = pfAnd(filter, pfOr(fs)), []string{""}
			continue
		}
		filter, acc = pfAnd(pfAnd(filter, setFilter(acc)), in.filter), []string{""}
	}
	if exact {
		return exactInfo(acc...)
	}
	return reInfo{filter: pfAnd(filter, setFilter(acc))}
}
