package facts

import "strings"

// sysctlName turns a /proc/sys path into the dotted sysctl name
// ("/proc/sys/net/core/rmem_max" → "net.core.rmem_max").
func sysctlName(path string) string {
	return strings.ReplaceAll(strings.TrimPrefix(path, "/proc/sys/"), "/", ".")
}

// normalizeSysctl collapses the tabs and spaces of multi-value sysctls
// ("4096\t131072\t6291456" → "4096 131072 6291456").
func normalizeSysctl(b []byte) string { return strings.Join(strings.Fields(string(b)), " ") }
