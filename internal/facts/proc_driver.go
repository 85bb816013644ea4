package facts

import (
	"regexp"
	"sync"
)

var driverVersionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`Kernel Module(?: for [^ ]+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)`)
})

// DriverVersionFromProc reads the kernel module version from /proc/driver/nvidia/version:
//
//	NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (...)
func DriverVersionFromProc(b []byte) string {
	m := driverVersionRE().FindSubmatch(b)
	if m == nil {
		return ""
	}
	return string(m[1])
}
