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
		{[]float64{92.57, 97.28}, 94.925, nil}, // two values: neither is the odd one out
		{[]float64{97.28, 92.57, 45.1}, 92.57, []int{2}},
		{[]float64{100, 100, 100, 131}, 100, []int{3}},
		{[]float64{100, 100, 100, 129.9, 70.1}, 100, nil}, // within 30 %
		{[]float64{100, 100, 69.9}, 100, []int{2}},
	} {
		med, out := OffMedian(c.in)
		if med != c.med || !slices.Equal(out, c.want) {
			t.Errorf("%v: median %v outliers %v, want %v %v", c.in, med, out, c.med, c.want)
		}
	}
}
