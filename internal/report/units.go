package report

import "fmt"

// HumanBytes prints a size the way the sweep flags take it (1M, 256M, 8G),
// or with one decimal in GiB when it is not a whole number of units.
func HumanBytes(b int64) string {
	units := []string{"", "K", "M", "G", "T"}
	v, i := b, 0
	for v >= 1024 && v%1024 == 0 && i < len(units)-1 {
		v /= 1024
		i++
	}
	switch {
	case i < 3 && b >= 1<<30:
		return fmt.Sprintf("%.1fG", float64(b)/(1<<30))
	case i < 2 && b >= 1<<20:
		return fmt.Sprintf("%.1fM", float64(b)/(1<<20))
	case i == 0:
		return fmt.Sprintf("%dB", b)
	}
	return fmt.Sprintf("%d%s", v, units[i])
}

// SMArch is the architecture name PyTorch lists for a compute capability
// ("12.1" → "sm_121").
func SMArch(capability string) string {
	var maj, min int
	fmt.Sscanf(capability, "%d.%d", &maj, &min)
	return fmt.Sprintf("sm_%d%d", maj, min)
}
