package analyze

import (
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

func flagIDs(a report.AnalysisResult) string {
	var ids []string
	for _, f := range a.Flags {
		ids = append(ids, string(f.Severity)+":"+f.ID)
	}
	return strings.Join(ids, ",")
}

// TestSocketOnlyOnSparkManagementPort: a two-node log whose only network
// line is "NET/Socket : Using [0]enP7s7:..." (no "Using network" line) is
// NCCL on TCP over DGX Spark's management port. No public sample of that
// shape was found: this is fixture 07's real log with its two ranks put on
// two hosts, the "Using network" line dropped and eno1 renamed enP7s7.
func TestSocketOnlyOnSparkManagementPort(t *testing.T) {
	var lines []string
	for _, l := range strings.Split(string(verbatim(t, "nccl-logs/07_nccl2.25_info-prefixed-version_no-ib-device_socket.txt")), "\n") {
		if strings.Contains(l, "Using network") {
			continue
		}
		l = strings.ReplaceAll(l, "eno1", "enP7s7")
		l = strings.Replace(l, "localhost:11326:", "spark-a:11326:", 1)
		l = strings.Replace(l, "localhost:11344:", "spark-b:11344:", 1)
		lines = append(lines, l)
	}
	a := Reader("x", strings.NewReader(strings.Join(lines, "\n")), Options{})
	if a.Platform != "dgx-spark" || !strings.Contains(a.PlatformEvidence, "enP7s7") {
		t.Errorf("platform %q from %q", a.Platform, a.PlatformEvidence)
	}
	if got := flagIDs(a); !strings.Contains(got, "fail:nccl.net-socket,fail:spark.socket-on-management-port") || a.Status != report.VerdictCritical {
		t.Errorf("flags %s status %s", got, a.Status)
	}
}

// TestNodeCountsReconciled: when the device lines name fewer hosts than
// NCCL's own lines come from, the larger count is used and said once.
func TestNodeCountsReconciled(t *testing.T) {
	a := analyseFixture(t, "pasted/33_two_hosts_irdma_device_line.txt", Options{})
	// one device line (rank 1 on ai-worker03), hosts ai-worker01 and ai-worker03: no table, so the log's count stands
	if l := a.Data.NCCLLog; l == nil || len(l.Hosts) != 2 || l.NRanks != 2 {
		t.Fatalf("log %+v", l)
	}
	// a real 2-node run whose second device line is lost (as a PDF
	// extraction loses lines); its NCCL lines still come from both hosts
	var kept []string
	for _, l := range strings.Split(string(verbatim(t, "nccl-tests/01_all_reduce_2node_efa_mpirun-tagged_nccl2.12.txt")), "\n") {
		if !strings.Contains(l, "#  Rank  1 Group") {
			kept = append(kept, l)
		}
	}
	a = Reader("x", strings.NewReader(strings.Join(kept, "\n")), Options{})
	if len(a.Data.NCCLTables) != 1 || a.Data.NCCLTables[0].Nodes != 2 ||
		!strings.Contains(strings.Join(a.Notes, "\n"), "the device lines name 1 host but NCCL's lines come from 2 (test-nccl-efa-worker-0, test-nccl-efa-worker-1): 2 nodes are used") {
		t.Errorf("nodes %d notes %q", a.Data.NCCLTables[0].Nodes, a.Notes)
	}
	if strings.Contains(a.Measured, "1 node") {
		t.Errorf("measured %q", a.Measured)
	}
}

// TestNCCLDiagMerged: NCCL's diagnostics lines join the verdict. No public
// output of NCCL >= 2.31's diagnostics was found; the lines are in the form
// NCCL's troubleshooting guide documents ("<host>:<pid> NCCL DIAG [LEVEL]
// ...") with placeholder messages, not NCCL's wording.
func TestNCCLDiagMerged(t *testing.T) {
	in := strings.Join([]string{
		"=== RAS Diagnostics ===",
		"node1:4242 NCCL DIAG [OK] placeholder check passed",
		"node2:4343 NCCL DIAG [INFO] placeholder rank 3 off the median",
		"node2:4343 NCCL DIAG [INFO] placeholder same NIC min 40 median 96 max 98 Gbit/s",
	}, "\n")
	a := Reader("diag", strings.NewReader(in), Options{})
	if a.Error != "" || a.Format != FormatNCCLLog || a.Status != report.VerdictWarning {
		t.Fatalf("%s %s %q", a.Format, a.Status, a.Error)
	}
	if got := flagIDs(a); got != "warn:nccl.diag,warn:nccl.diag,warn:nccl.diag-spread" {
		t.Errorf("flags %s", got)
	}
	if !strings.Contains(strings.Join(a.Notes, "\n"), "NCCL diagnostics: 1 OK, 2 INFO") {
		t.Errorf("notes %q", a.Notes)
	}
}
