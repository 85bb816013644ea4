package diagnose

import (
	"fmt"
	"slices"
)

// Link verdicts: the one vocabulary of every command that qualifies links
// (doctor --qualify, qualify --all-pairs, qualify --ring) for one direction
// of one link or pair.
const (
	// LinkPass: the direction moved at least PassFraction of the reference.
	LinkPass = "pass"
	// LinkSlow: it completed below PassFraction of the reference.
	LinkSlow = "slow"
	// LinkFailed: the test did not complete.
	LinkFailed = "failed"
	// LinkUnjudged: it completed but there is no credible reference to
	// judge it against (never a pass).
	LinkUnjudged = "unjudged"
)

// PassFraction is the share of the reference a direction must reach to
// pass: NCCL's own network check flags ranks more than 30 % off
// (OffMedianFraction), and sparkrig keeps the one threshold for links.
const PassFraction = 1 - OffMedianFraction

// NoiseMargin is how far apart two directions may measure and still
// confirm one rate: as far as a direction may fall short of the reference
// and pass. A busy node moves a TCP test's rate by a tenth or more (17 %
// between the two good directions of a pair on a loaded test machine), and
// two directions that would each pass against the other agree on what the
// hardware does.
const NoiseMargin = OffMedianFraction

// Reference names of a LinkReference.
const (
	RefExpected  = "expected"
	RefBestPairs = "best pairs"
)

// LinkRuleSource says where the link rule's numbers come from.
const LinkRuleSource = "a direction passes at 70 % of the reference or more: NVIDIA/nccl docs diagnostics.rst (ranks more than 30 % off are flagged); " +
	"the reference is the expected rate where the platform or --expected-gbps gives one, else the best rate two directions confirm within 30 %: sparkrig policy " +
	"(no direction beats the hardware, so the best pairs show what it can do; the median of a cluster with many bad nodes is a bad rate)"

// LinkReference is the rate the directions of a qualification are judged
// against. A zero Gbps is no credible reference: Why says why, and no
// direction passes against it.
type LinkReference struct {
	Gbps   float64
	Name   string // RefExpected or RefBestPairs; "" with no credible reference
	Source string // where an expected rate comes from
	Why    string // why there is no credible reference
}

// Credible reports whether there is a reference to judge against.
func (r LinkReference) Credible() bool { return r.Gbps > 0 }

// Floor is the least rate that passes (0 with no credible reference).
func (r LinkReference) Floor() float64 { return PassFraction * r.Gbps }

// Judge is the verdict of one direction: failed when its test did not
// complete, unjudged with no credible reference, else pass or slow. A
// rate exactly at the floor passes.
func (r LinkReference) Judge(gbps float64, completed bool) string {
	switch {
	case !completed:
		return LinkFailed
	case !r.Credible():
		return LinkUnjudged
	case gbps >= r.Floor():
		return LinkPass
	}
	return LinkSlow
}

// LinkRef is the one reference rule: the expected rate where one is known
// (expected > 0: the platform's rate for the tool, or the operator's),
// else what the best pairs show the hardware can do (MeasuredReference of
// the completed directions' rates). Never the median: with many bad nodes
// the median is a bad rate and would pass them.
func LinkRef(expected float64, source string, rates []float64) LinkReference {
	if expected > 0 {
		return LinkReference{Gbps: expected, Name: RefExpected, Source: source}
	}
	return MeasuredReference(rates)
}

// MeasuredReference is the best rate two directions confirm: the rates
// from the highest down, the first that another direction measures within
// NoiseMargin of, taken at the lower of the two. A direction cannot beat
// the hardware, so the best pairs are what it can do; a lone fast
// direction is not enough (no second measurement says the rate is real,
// and with two nodes one direction alone cannot tell which is normal).
// With no two directions agreeing there is no credible reference.
func MeasuredReference(rates []float64) LinkReference {
	var rs []float64
	for _, v := range rates {
		if v > 0 {
			rs = append(rs, v)
		}
	}
	if len(rs) < 2 {
		return LinkReference{Why: fmt.Sprintf("%d direction(s) completed with a rate: too few to tell what the links can do", len(rs))}
	}
	slices.Sort(rs)
	slices.Reverse(rs)
	for i := 0; i+1 < len(rs); i++ {
		if rs[i+1] >= (1-NoiseMargin)*rs[i] {
			return LinkReference{Gbps: rs[i+1], Name: RefBestPairs}
		}
	}
	return LinkReference{Why: fmt.Sprintf("no two of the %d directions measured agree within %.0f %% on a rate: what the links can do is not known", len(rs), 100*NoiseMargin)}
}
