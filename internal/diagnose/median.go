package diagnose

import (
	"slices"
	"sort"
)

// OffMedianFraction is how far below the median a rail, rank, pair or
// direction may fall before it is an outlier: NCCL's own network check
// (diagnostics, NCCL >= 2.31) reports ranks more than 30 % off the median.
// sparkrig uses the same rule, through OffMedian, wherever it judges rails
// or pairs itself (analyze, the all-pairs qualification), so the verdicts
// never disagree.
const OffMedianFraction = 0.30

// OffMedian is the one median rule: it returns the median of values and
// the indices of those more than frac below it (a bandwidth above the
// median is no fault). A value exactly at the boundary passes. With no
// values the median is 0 and nothing is off.
func OffMedian(values []float64, frac float64) (median float64, off []int) {
	median = Median(values)
	if median <= 0 {
		return median, nil
	}
	for i, v := range values {
		if v < (1-frac)*median {
			off = append(off, i)
		}
	}
	return median, off
}

// Median is the middle value (the mean of the two middle ones for an even
// count); 0 for none.
func Median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
