package allpairs

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseAddrs feeds ip -br addr's parser and the segment and cable
// choices arbitrary bytes, seeded with the recorded samples.
func FuzzParseAddrs(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		as := ParseAddrs(b)
		for _, a := range as {
			if !a.Prefix.Addr().Is4() {
				t.Fatalf("not IPv4: %v", a)
			}
		}
		all := [][]Addr{as, as[:len(as)/2]}
		FindSegment([]string{"a", "b"}, all, netip.Prefix{})
		CableAddrs(all, 0, 1)
	})
}
