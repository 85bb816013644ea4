package facts

import (
	"path"
	"regexp"
	"strings"
	"sync"
)

var ncclSoRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`libnccl\.so\.(\d+\.\d+\.\d+)`) })

// ncclVersionFromNames finds "2.28.9" in a library file name
// ("libnccl.so.2.28.9") or a symlink target.
func ncclVersionFromNames(names ...string) string {
	for _, n := range names {
		if m := ncclSoRe().FindStringSubmatch(path.Base(n)); m != nil {
			return m[1]
		}
	}
	return ""
}

// parseDpkgNCCL reads `dpkg-query -W -f '${Package} ${Version}\n' 'libnccl*'`
// ("libnccl2 2.28.9-1+cuda13.0") and returns the upstream version.
func parseDpkgNCCL(b []byte) string {
	for _, l := range lines(b) {
		f := strings.Fields(l)
		if len(f) != 2 || f[0] != "libnccl2" {
			continue
		}
		v, _, _ := strings.Cut(f[1], "-")
		if _, epochless, ok := strings.Cut(v, ":"); ok {
			v = epochless
		}
		return v
	}
	return ""
}

// parseLdconfigNCCL returns the path of libnccl.so.2 that `ldconfig -p` lists.
func parseLdconfigNCCL(b []byte) string {
	for _, l := range lines(b) {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "libnccl.so.2 ") {
			continue
		}
		if _, p, ok := strings.Cut(t, "=>"); ok {
			return strings.TrimSpace(p)
		}
	}
	return ""
}

// CompareVersions compares dotted numeric versions ("2.27.7" < "2.28.3").
func CompareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			if n := atoiPtr(as[i]); n != nil {
				x = *n
			}
		}
		if i < len(bs) {
			if n := atoiPtr(bs[i]); n != nil {
				y = *n
			}
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
