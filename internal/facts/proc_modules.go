package facts

import "strings"

// parseModules reads /proc/modules: the first field of each line.
func parseModules(b []byte) []string {
	out := []string{}
	for _, l := range lines(b) {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// parseCPUInfo reads /proc/cpuinfo: the model and the number of processors.
// arm64 kernels print no "model name"; the model then stays empty.
func parseCPUInfo(b []byte) (model string, cores int) {
	for _, l := range lines(b) {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "processor":
			cores++
		case "model name":
			if model == "" {
				model = strings.TrimSpace(v)
			}
		}
	}
	return model, cores
}
