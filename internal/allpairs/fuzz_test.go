package allpairs

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrig/sparkrig/internal/bench"
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

// FuzzCollectiveResult feeds rank 0's output reader arbitrary stdout and
// stderr, seeded with the recorded ranks: a result has a rate or an
// error, never both, and never a negative rate.
func FuzzCollectiveResult(f *testing.F) {
	files, _ := filepath.Glob("testdata/nccl-pair/*")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b, []byte(nil))
		f.Add([]byte(nil), b)
	}
	f.Fuzz(func(t *testing.T, stdout, stderr []byte) {
		r := collectiveResult(bench.CmdResult{Stdout: string(stdout), Stderr: string(stderr)})
		if r.Err != "" && r.BusGBs != 0 || r.Err == "" && r.Bytes <= 0 || r.BusGBs < 0 && r.Err == "" {
			t.Fatalf("%+v", r)
		}
	})
}
