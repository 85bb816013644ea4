package facts

import (
	"strconv"
	"strings"
)

// parseProcLimits returns the soft "Max locked memory" limit of
// /proc/<pid>/limits in KiB, -1 for unlimited; nil when absent.
func parseProcLimits(b []byte) *int64 {
	for _, l := range lines(b) {
		if !strings.HasPrefix(l, "Max locked memory") {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(l, "Max locked memory"))
		if len(f) == 0 {
			return nil
		}
		if f[0] == "unlimited" {
			v := int64(-1)
			return &v
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return nil
		}
		n /= 1024
		return &n
	}
	return nil
}

// parseLimitsConfMemlock returns the memlock value that limits.conf(5)
// content sets for all users ("*" or "@group" domains included), preferring
// the soft limit; "" when the file sets none.
func parseLimitsConfMemlock(b []byte) string {
	val := ""
	for _, l := range lines(b) {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		if len(f) != 4 || f[2] != "memlock" {
			continue
		}
		if f[1] == "soft" || f[1] == "-" || val == "" {
			val = f[3]
		}
	}
	return val
}
