package diagnose

import (
	"slices"
	"testing"
)

func TestOffMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		med  float64
		want []int
	}{
		{nil, 0, nil},
		{[]float64{92.57, 97.28}, (92.57 + 97.28) / 2, nil},
		{[]float64{97.28, 92.57, 45.1}, 92.57, []int{2}},
		{[]float64{100, 100, 100, 131}, 100, nil}, // faster is no fault
		{[]float64{100, 100, 100, 129.9, 70.1}, 100, nil},
		{[]float64{100, 100, 70}, 100, nil}, // at the boundary: passes
		{[]float64{100, 100, 69.9}, 100, []int{2}},
		{[]float64{100, 40}, 70, []int{1}},
	} {
		med, out := OffMedian(c.in, OffMedianFraction)
		if med != c.med || !slices.Equal(out, c.want) {
			t.Errorf("%v: median %v outliers %v, want %v %v", c.in, med, out, c.med, c.want)
		}
	}
}
