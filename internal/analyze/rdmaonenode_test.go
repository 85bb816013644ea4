package analyze

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/expect"
)

// A missing verbs library is not read as a cause on a job whose ranks are
// all on one host (field case 109, NVIDIA/nccl #257: four GPUs of one
// host, the hang was the IOMMU): for any rank count, behind any prefix,
// the line becomes a note. The same line on a job over two hosts, or with
// NCCL's nranks above the device lines (a cut list), stays a failure.
func TestIbverbsMissingNotACauseOnOneHost(t *testing.T) {
	const id = "error.ibverbs-missing"
	r := rand.New(rand.NewSource(257))
	for _, pre := range causePrefixes(r) {
		for range 4 {
			n := 1 + r.Intn(16)
			host := fmt.Sprintf("node-%d", r.Intn(1000))
			warn := func(h string) string {
				return h + ":15833:15833 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]"
			}
			nranks := func(h string, k int) string {
				return fmt.Sprintf("%s:15833:15833 [0] NCCL INFO comm 0x5600 rank 0 nranks %d cudaDev 0 busId 1b000 - Init START", h, k)
			}
			one := append(testsHeader(n, []string{host}, false)[:3+n], warn(host), nranks(host, n))
			a := analyseText(prefixed(pre, one))
			if hasFlag(a, id) || !slices.ContainsFunc(a.Notes, func(s string) bool {
				return strings.Contains(s, fmt.Sprintf("nccl-tests lists all %d rank", n)) && strings.Contains(s, host)
			}) {
				t.Fatalf("%d ranks on %s behind %q: flags %+v notes %q", n, host, pre, a.Flags, a.Notes)
			}
			for name, lines := range map[string][]string{
				"two hosts":    append(testsHeader(2*n, []string{host, host + "b"}, false)[:3+2*n], warn(host)),
				"a cut list":   append(testsHeader(n, []string{host}, false)[:3+n], warn(host), nranks(host, n+1)),
				"a host alone": {warn(host)},
			} {
				if a := analyseText(prefixed(pre, lines)); !hasFlag(a, id) {
					t.Errorf("%s, %d ranks, behind %q: not flagged (%+v)", name, n, pre, a.Flags)
				}
			}
		}
	}
}

// A catalogue format matched mostly through its conversions does not
// class a WARN that names another subsystem: GDRCopy's "Failed to open %s"
// (class cuda) over the old verbs wrapper's "Failed to open
// libibverbs.so[.1]" is net-ib; a format whose class agrees keeps its
// match.
func TestLooseCatalogueMatchYieldsToTheSubsystemNamed(t *testing.T) {
	cat, err := expect.NCCLWarns()
	if err != nil {
		t.Fatal(err)
	}
	for msg, want := range map[string]bool{
		"Failed to open libibverbs.so[.1]":                               true,
		"Failed to open libgdrapi.so":                                    false,
		"Call to ibv_create_cq failed with error Cannot allocate memory": false,
		"socketStartConnect: Connect to fe80::966d:ae03:a2:8cf0%ib1<17943> failed : Software caused connection abort": false,
	} {
		f, ok := cat.Match(msg)
		if !ok {
			t.Fatalf("%q: no catalogue match", msg)
		}
		if got := looseOtherClass(f, msg); got != want {
			t.Errorf("%q (format %q, class %s): loose and of another class = %v, want %v", msg, f.Format, f.Class, got, want)
		}
	}
}
