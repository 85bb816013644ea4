package analyze

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

const topoFileID = "error.topo-file-unreadable"

// topoFileLine is NCCL's line for an NCCL_TOPO_FILE it cannot open, in the
// release's words: a WARN to 2.26 (src/graph/xml.cc v2.7.8-1:306,
// v2.26.2-1:378), an INFO line from 2.27 (v2.27.3-1:391, v2.30.7-1:414).
func topoFileLine(host string, rank, release int, path, errno string) string {
	p := ncclPrefix(host, rank, rank%8)
	if release < 27 {
		return fmt.Sprintf("%s graph/xml.cc:%d NCCL WARN Could not open XML topology file %s : %s", p, 306+rank%80, path, errno)
	}
	return fmt.Sprintf("%s NCCL INFO Could not open XML topology file %s : %s", p, path, errno)
}

// The recorded run (testdata/nccl-faults, NCCL 2.28.9, NCCL_TOPO_FILE set
// to a path that does not exist) ends well but reads as a warning that
// names the file NCCL could not open.
func TestTopoFileUnreadableRecordedRun(t *testing.T) {
	b, err := os.ReadFile("testdata/nccl-faults/topo-file-missing.log")
	if err != nil {
		t.Fatal(err)
	}
	a := analyseText(string(b))
	if a.Status != report.VerdictWarning {
		t.Errorf("status %s, want warning (%s)", a.Status, flagIDs(a))
	}
	f := flagOf(a, topoFileID)
	if f == nil {
		t.Fatalf("%s not raised (%s)", topoFileID, flagIDs(a))
	}
	if f.Severity != report.Warn || !strings.Contains(f.Evidence, "line 18: vm:777:777 [0] NCCL INFO Could not open XML topology file /nonexistent/topo.xml : No such file or directory") {
		t.Errorf("severity %s, evidence %q", f.Severity, f.Evidence)
	}
}

// Any release's words, any rank count, any share of ranks that print it,
// behind any prefix: a warning naming the file; with a failure of the job
// beside it, the failure ranks first.
func TestTopoFileUnreadableAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(414))
	// an empty NCCL_TOPO_FILE names no file: TestSettingAdjustedWarnsAreInfo
	paths := []string{"/opt/microsoft/ncv4/topo.xml", "/etc/nccl/topo.xml", "/azure-nhc/topofiles/ndv5-topo.xml", "./topo.xml", "/home/a user/my topo.xml"}
	errs := []string{"No such file or directory", "Permission denied"}
	for _, pre := range causePrefixes(r) {
		for _, release := range []int{7, 12, 19, 26, 27, 30} {
			hosts := 1 + r.Intn(4)
			n := hosts * (1 + r.Intn(8))
			path := paths[r.Intn(len(paths))]
			var lines []string
			for rank := range n {
				host := fmt.Sprintf("node%03d", rank%hosts)
				lines = append(lines, startup(host, rank, rank%8, rank%hosts, fmt.Sprintf("2.%d.3", release))...)
				if rank == 0 || r.Intn(2) == 0 {
					lines = append(lines, topoFileLine(host, rank, release, path, errs[r.Intn(len(errs))]))
				}
			}
			a := analyseText(prefixed(pre, lines))
			f := flagOf(a, topoFileID)
			if f == nil || f.Severity != report.Warn || !strings.Contains(f.Evidence, "Could not open XML topology file "+path+" : ") {
				t.Fatalf("2.%d, %d ranks behind %q: %+v (%s)", release, n, pre, f, flagIDs(a))
			}
			if a.Status != report.VerdictWarning {
				t.Errorf("2.%d, %d ranks behind %q: status %s (%s)", release, n, pre, a.Status, flagIDs(a))
			}
			// a failure of the job ranks above the warning
			fail := ncclPrefix("node000", 0, 0) + " init.cc:872 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000"
			if got := topCause(analyseText(prefixed(pre, append(lines, fail)))); got != "error.duplicate-gpu" {
				t.Errorf("2.%d behind %q: with a duplicate GPU, first %q", release, pre, got)
			}
		}
	}
}

// What it is not: the topology file read, the variable set, NCCL's graph
// file (its own words), P2P not enabled, a healthy job's lines.
func TestTopoFileUnreadableMustNotFire(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	for name, lines := range map[string][]string{
		"file read":          {p + " NCCL INFO Loading topology file /opt/microsoft/ncv4/topo.xml", p + " NCCL INFO Loading unnamed topology"},
		"variable set":       {p + " NCCL INFO NCCL_TOPO_FILE set by environment to /opt/microsoft/ncv4/topo.xml"},
		"graph file":         {p + " graph/xml.cc:1257 NCCL WARN Could not open XML graph file /etc/graph.xml : No such file or directory"},
		"P2P not enabled":    {p + " NCCL INFO Could not enable P2P between dev 1(=2000) and dev 0(=1000)"},
		"a healthy job":      startup("node001", 0, 0, 0, "2.28.9"),
		"topology dump file": {p + " NCCL INFO NCCL_TOPO_DUMP_FILE set by environment to /tmp/topo.xml"},
	} {
		if a := analyseText(prefixed("", lines)); hasFlag(a, topoFileID) {
			t.Errorf("%s: %s raised (%s)", name, topoFileID, flagIDs(a))
		}
	}
}

// No fixture but the recorded run raises it.
func TestTopoFileUnreadableNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{topoFileID}, map[string]bool{"nccl-faults/topo-file-missing.log": true})
}
