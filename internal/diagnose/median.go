package diagnose

import "sort"

// OffMedianFraction is how far from the median a rail, rank or pair may
// fall before it is an outlier: NCCL's own network check (diagnostics,
// NCCL >= 2.31) reports ranks more than 30 % off the median, and sparkrig
// uses the same rule wherever it judges rails itself, so the two never
// disagree.
const OffMedianFraction = 0.30

// OffMedian returns the median of values and the indices of those more
// than OffMedianFraction off it (above or below). Fewer than three values
// have no outliers: with two, neither is the odd one out.
func OffMedian(values []float64) (median float64, outliers []int) {
	if len(values) == 0 {
		return 0, nil
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		median = s[n/2]
	} else {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	if len(values) < 3 || median <= 0 {
		return median, nil
	}
	for i, v := range values {
		if v < median*(1-OffMedianFraction) || v > median*(1+OffMedianFraction) {
			outliers = append(outliers, i)
		}
	}
	return median, outliers
}
