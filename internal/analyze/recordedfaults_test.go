package analyze

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

// The runs of testdata/nccl-faults (recorded on a GPU host, see its SOURCE)
// and what each must read as: the cause ranked first, or for a run that
// ended well (the settings NCCL does not read on one rank among them) no
// warn or fail; the NCCL_TOPO_FILE NCCL could not open is a warning
// (TestTopoFileUnreadableRecordedRun).
func TestRecordedFaults(t *testing.T) {
	want := map[string]string{
		"healthy.log":               "",
		"socket-ifname-missing.log": "error.socket-ifname-not-found",
		"duplicate-gpu.log":         "error.duplicate-gpu",
		"net-ib-forced.log":         "error.net-named-not-found",
		"net-plugin-missing.log":    "error.net-plugin-load-failed",
		"topo-file-missing.log":     "",
		"algo-invalid.log":          "",
		"buffsize-huge.log":         "",
	}
	files, _ := filepath.Glob("testdata/nccl-faults/*.log")
	if len(files) != len(want) {
		t.Fatalf("%d recorded runs, want %d", len(files), len(want))
	}
	for _, path := range files {
		id, ok := want[filepath.Base(path)]
		if !ok {
			t.Errorf("%s: no expectation", path)
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		a := Reader(path, f, Options{})
		f.Close()
		switch {
		case filepath.Base(path) == "topo-file-missing.log":
		case id == "" && (a.Status == report.VerdictCritical || a.Status == report.VerdictWarning):
			t.Errorf("%s: a run that ended well reads %s: %s", path, a.Status, flagIDs(a))
		case id != "" && topCause(a) != id:
			t.Errorf("%s: first %q, want %q (%s)", path, topCause(a), id, flagIDs(a))
		}
	}
}

// netNamedCase is ncclNetInit's last word when the network NCCL_NET names
// did not start: "Error: network %s not found." (2.18 to 2.26) or "Failed
// to initialize any NET plugin" (2.27 on), after NET/IB found no device.
var netNamedCase = docSignatureCase{"error.net-named-not-found", func(r *rand.Rand, host string, rank, dev int) []string {
	p := ncclPrefix(host, rank, dev)
	lines := []string{p + " NCCL INFO NET/IB : No device found."}
	switch r.Intn(3) {
	case 0:
		lines = append(lines, fmt.Sprintf("%s net.cc:%d NCCL WARN Error: network IB not found.", p, 285+r.Intn(700)))
	case 1:
		lines = append(lines, p+" NCCL INFO Failed to initialize NET plugin IB",
			fmt.Sprintf("[2026-11-29 07:37:40] %s plugin/net.cc:%d NCCL WARN Failed to initialize any NET plugin", p, 278+r.Intn(100)))
	default:
		lines = append(lines, p+" NCCL WARN Error: network AWS Libfabric not found.")
	}
	return append(lines, fmt.Sprintf("%s NCCL INFO init.cc:%d -> 5", p, 400+r.Intn(100)))
}}

func TestNetNamedNotFoundAnyRanksAnyPrefix(t *testing.T) {
	firstAnyRanksAnyPrefix(t, rand.New(rand.NewSource(379)), []docSignatureCase{netNamedCase}, 4)
}

// A host whose IB network found no device but whose socket network
// started (NCCL_NET unset) is not this cause.
func TestNetNamedNotFoundMustNotFire(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	lines := []string{
		p + " NCCL INFO NET/IB : No device found.",
		p + " NCCL INFO Failed to initialize NET plugin IB",
		p + " NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>",
		p + " NCCL INFO Initialized NET plugin Socket",
		p + " NCCL INFO Using network Socket",
	}
	if a := analyseText(prefixed("", lines)); hasFlag(a, netNamedCase.id) {
		t.Errorf("a job on sockets: %s", flagIDs(a))
	}
}
