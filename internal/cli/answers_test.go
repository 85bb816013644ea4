package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

const nodesDir = "../../testdata/nodes/"

// An input that could not be read beside inputs that show a warning exits
// UNKNOWN (3): the warning does not speak for what was not read. A fail
// still exits CRITICAL.
func TestBadInputBesideWarningIsUnknown(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.txt")
	if err := os.WriteFile(garbage, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	warnSnap := nodesDir + "spark-mtu-1500.tar.gz"
	code, doc, _ := runMain(t, "doctor", "--format", "json", "--snapshot", warnSnap)
	if code != ExitWarning {
		t.Fatalf("doctor of the warn node alone: exit %d", code)
	}
	warnDoc := filepath.Join(dir, "warn.json")
	if err := os.WriteFile(warnDoc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	warnLog := "../analyze/testdata/nccl-logs/05_p2p-not-possible_shm-direct_net-ib-shared.txt"
	if code, _, _ := runMain(t, "analyze", warnLog); code != ExitWarning {
		t.Fatalf("analyze of the warn log alone: exit %d", code)
	}
	for _, args := range [][]string{
		{"doctor", "--snapshot", warnSnap, filepath.Join(dir, "missing.tar.gz")},
		{"doctor", "--snapshot", warnSnap, garbage},
		{"analyze", warnLog, garbage},
		{"report", warnDoc, garbage},
	} {
		if code, out, errOut := runMain(t, args...); code != ExitUnknown {
			t.Errorf("%v: exit %d, want %d\n%s%s", args, code, ExitUnknown, out, errOut)
		}
	}
	if code, _, _ := runMain(t, "doctor", "--snapshot", nodesDir+"spark-twin-down.tar.gz", garbage); code != ExitCritical {
		t.Errorf("a fail beside a bad input: exit %d, want %d", code, ExitCritical)
	}
}

// fix --plan exits with the doctor's status on the same evidence, and its
// help says so rather than a status of its own for "changes proposed".
func TestFixExitIsTheDoctorsAndItsHelpSaysSo(t *testing.T) {
	for _, pair := range [][]string{
		{"spark-twin-unaddressed.tar.gz", "spark-healthy-peer.tar.gz"},
		{"spark-mtu-1500.tar.gz", "spark-healthy-peer.tar.gz"},
		{"spark-healthy.tar.gz", "spark-healthy-peer.tar.gz"},
	} {
		snaps := []string{"--snapshot", nodesDir + pair[0], "--snapshot", nodesDir + pair[1]}
		dcode, _, _ := runMain(t, append([]string{"doctor"}, snaps...)...)
		fcode, out, errOut := runMain(t, append([]string{"fix", "--plan"}, snaps...)...)
		if fcode != dcode {
			t.Errorf("%v: fix --plan exit %d, doctor %d\n%s%s", pair, fcode, dcode, out, errOut)
		}
	}
	_, help, _ := runMain(t, "fix", "--help")
	help = strings.Join(strings.Fields(help), " ")
	if strings.Contains(help, "changes proposed") || !strings.Contains(help, "--plan exits with the doctor's status") {
		t.Errorf("fix --help's exit status does not match what fix does:\n%s", help)
	}
}

// The ring names fix prints and its help's example are names --topology
// takes: a ring of the wrong size is told by its size, not refused by name.
func TestFixTopologyTakesTheNamesFixPrints(t *testing.T) {
	snaps := []string{"--snapshot", nodesDir + "spark-healthy.tar.gz", "--snapshot", nodesDir + "spark-healthy-peer.tar.gz"}
	for topo, want := range map[string]string{
		"three-node-ring": "fix: topology three-node-ring needs exactly 3 nodes, got 2",
		"four-node-ring":  "fix: topology four-node-ring needs exactly 4 nodes, got 2",
		"ring":            "fix: topology ring needs 3 nodes or more",
	} {
		code, _, errOut := runMain(t, append([]string{"fix", "--plan", "--topology", topo}, snaps...)...)
		if code != ExitUnknown || !strings.Contains(errOut, want) || strings.Contains(errOut, "want one of") {
			t.Errorf("--topology %s: exit %d, stderr %q; want %q", topo, code, errOut, want)
		}
		if topo == "ring" && strings.Contains(errOut, "exactly") {
			t.Errorf("--topology ring: %q", errOut)
		}
	}
	_, help, _ := runMain(t, "fix", "--help")
	if !strings.Contains(help, "--topology three-node-ring") {
		t.Errorf("fix --help no longer shows the three-node-ring example")
	}
}

// The same node given twice: doctor says why there is no cluster section,
// fix that it plans the node once.
func TestSameNodeTwiceIsSaid(t *testing.T) {
	snap := nodesDir + "spark-healthy.tar.gz"
	_, _, errOut := runMain(t, "doctor", "--snapshot", snap, snap)
	if !strings.Contains(errOut, "doctor: spark1 is given twice") || !strings.Contains(errOut, "no cluster section") {
		t.Errorf("doctor: %q", errOut)
	}
	_, _, errOut = runMain(t, "fix", "--plan", "--snapshot", snap, "--snapshot", snap)
	if !strings.Contains(errOut, "fix: spark1 is given twice") || !strings.Contains(errOut, "planned once") {
		t.Errorf("fix: %q", errOut)
	}
	_, _, errOut = runMain(t, "doctor", "--snapshot", snap, nodesDir+"spark-healthy-peer.tar.gz")
	if strings.Contains(errOut, "given twice") {
		t.Errorf("two nodes: %q", errOut)
	}
}

// goInternal matches Go's and cobra's own words in user output: a Go call
// (netip.ParsePrefix(…)), fork/exec and dial prefixes, syscall prefixes
// (stat …:), cobra's arg(s), a slice default, fmt's %!, addresses,
// goroutines and panics.
var goInternal = regexp.MustCompile(`\w+\.\w+\(|fork/exec|dial tcp|arg\(s\)|\(default \[.*\]\)|%!|0x[0-9a-f]{6,}|goroutine|panic|\b(?:l?stat|open) /\S*: |exit \d+: `)

// TestErrorPathsSpeakAUsersWords walks every command's error paths (an
// unknown flag, a missing or extra argument, an unreadable or missing file,
// an unreachable host, a bad value) and its help, and fails on Go-internal
// text on either stream.
func TestErrorPathsSpeakAUsersWords(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.tar.gz")
	unreadable := filepath.Join(dir, "unreadable")
	if err := os.Mkdir(unreadable, 0o700); err != nil {
		t.Fatal(err)
	}
	root := newRootCmd(&Env{Getenv: os.Getenv})
	var runs [][]string
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		runs = append(runs, []string{c.Name(), "--no-such-flag"}, []string{c.Name(), "--help"})
		// Run bare, these do their work on this machine (audit it, write a
		// snapshot, serve, sample a job): only their error paths are walked.
		if !map[string]bool{"doctor": true, "snapshot": true, "exporter": true, "triage": true, "bench": true, "slurm": true}[c.Name()] {
			runs = append(runs, []string{c.Name()}, []string{c.Name(), "a", "b", "c", "d"})
		}
		for _, sub := range c.Commands() {
			runs = append(runs, []string{c.Name(), sub.Name(), "--no-such-flag"}, []string{c.Name(), sub.Name(), "--help"})
		}
	}
	runs = append(runs,
		[]string{"doctor", "--snapshot", missing},
		[]string{"doctor", "--snapshot", unreadable},
		[]string{"doctor", "--hosts", "127.0.0.1:1", "--host-timeout", "30s"},
		[]string{"doctor", "--hosts", "no-such-host.invalid"},
		[]string{"doctor", "--host-timeout", "soon"},
		[]string{"analyze", missing},
		[]string{"analyze", unreadable},
		[]string{"report", missing},
		[]string{"report", unreadable},
		[]string{"plan", missing},
		[]string{"fix", "--plan", "--snapshot", missing},
		[]string{"fix", "--plan", "--subnets", "10.0.0/33", "--snapshot", nodesDir + "spark-healthy.tar.gz"},
		[]string{"fix", "--rollback", "--hosts", "127.0.0.1:1"},
		[]string{"fix", "--plan", "--hosts", "127.0.0.1:1"},
		[]string{"snapshot", "-o", filepath.Join(missing, "x", "y.tar.gz")},
		[]string{"bench", "nccl", "--dry-run", "--hosts", "a,b", "--collective", "nope"},
		[]string{"bench", "tcp", "--hosts", "127.0.0.1:1,127.0.0.1:2"},
		[]string{"qualify", "--hosts", "127.0.0.1:1,127.0.0.1:2"},
		[]string{"triage", "--hosts", "127.0.0.1:1"},
	)
	for _, args := range runs {
		_, out, errOut := runMain(t, args...)
		if strings.Contains(out, "<html") {
			out = "" // a page's own script is not a message
		}
		for name, text := range map[string]string{"stdout": out, "stderr": errOut} {
			if m := goInternal.FindString(text); m != "" {
				line := text[strings.LastIndex(text[:strings.Index(text, m)], "\n")+1:]
				if i := strings.IndexByte(line, '\n'); i >= 0 {
					line = line[:i]
				}
				t.Errorf("sparkrig %s: %s has Go-internal %q: %s", strings.Join(args, " "), name, m, line)
			}
		}
	}
}

// bench's --format help says which formats a --dry-run plan takes, and the
// refusal names --dry-run, so the help and the refusal agree.
func TestBenchDryRunFormatsAgreeWithHelp(t *testing.T) {
	_, help, _ := runMain(t, "bench", "--help")
	if !strings.Contains(strings.Join(strings.Fields(help), " "), "a --dry-run plan: text or json") {
		t.Errorf("bench --help does not say which formats --dry-run takes:\n%s", help)
	}
	code, _, errOut := runMain(t, "bench", "--dry-run", "--format", "markdown", "--from-snapshot", nodesDir+"spark-healthy.tar.gz", "--from-snapshot", nodesDir+"spark-healthy-peer.tar.gz")
	if code != ExitUnknown || errOut != "sparkrig: bench --dry-run: unknown --format \"markdown\" (want one of text, json)\n" {
		t.Errorf("exit %d: %q", code, errOut)
	}
}

// Every change fix proposes names the findings it resolves, or says the
// user asked for it; every warn or fail finding of the doctor is resolved
// by a change or listed for a person.
func TestEveryFixChangeHasAReason(t *testing.T) {
	for _, pair := range [][]string{
		{"spark-twin-unaddressed.tar.gz", "spark-healthy-peer.tar.gz"},
		{"spark-mtu-1500.tar.gz", "spark-healthy-peer.tar.gz"},
		{"spark-twins-same-subnet.tar.gz", "spark-healthy-peer.tar.gz"},
		{"spark-twin-down.tar.gz", "spark-healthy-peer.tar.gz"},
		{"spark-nccl-env-other-node.tar.gz", "spark-healthy-peer.tar.gz"},
	} {
		for _, extra := range [][]string{nil, {"--launcher-env"}} {
			args := append([]string{"fix", "--plan", "--format", "json", "--snapshot", nodesDir + pair[0], "--snapshot", nodesDir + pair[1]}, extra...)
			_, out, errOut := runMain(t, args...)
			var doc report.Report
			if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.FixPlan == nil {
				t.Errorf("%v: %v\n%s", args, err, errOut)
				continue
			}
			handled := map[report.Key]bool{}
			for _, f := range doc.FixPlan.Manual {
				handled[f.Key()] = true
			}
			for _, h := range doc.FixPlan.Hosts {
				for _, c := range h.Files {
					if c.Changed && len(c.Resolves) == 0 && !strings.Contains(c.Why, "asked for with --launcher-env") {
						t.Errorf("%v: %s %s changes for no finding: %s", pair, h.Host, c.Path, c.Why)
					}
					for _, k := range c.Resolves {
						handled[k] = true
					}
				}
				if a := h.Reactivate; a != nil {
					if len(a.Resolves) == 0 {
						t.Errorf("%v: %s activation for no finding: %s", pair, h.Host, a.Why)
					}
					for _, k := range a.Resolves {
						handled[k] = true
					}
				}
			}
			_, dout, _ := runMain(t, "doctor", "--format", "json", "--snapshot", nodesDir+pair[0], "--snapshot", nodesDir+pair[1])
			var d report.Report
			if err := json.Unmarshal([]byte(dout), &d); err != nil {
				t.Fatal(err)
			}
			all := []report.Finding{}
			for _, h := range d.Hosts {
				if h.SameAs == "" {
					all = append(all, h.Findings...)
				}
			}
			if d.Cluster != nil {
				all = append(all, d.Cluster.Findings...)
			}
			for _, f := range all {
				if (f.Severity == report.Warn || f.Severity == report.Fail) && !handled[f.Key()] {
					t.Errorf("%v: the doctor's %s %s %s (%s) is neither resolved nor left to a person", pair, f.Severity, f.ID, f.Host, f.Subject)
				}
			}
		}
	}
}

// The repository's own recorded `bench gpu memory` and `bench gpu info`
// outputs (bare JSON, as those commands wrote it before they wrote report
// documents) and today's documents are read by analyze and report alike.
func TestAnalyzeAndReportReadBenchGPUOutputs(t *testing.T) {
	mem := "../../testdata/gpu/sparkrig.bench-gpu-memory.d2d-peer.h200x2.json"
	info := "../../testdata/gpu/sparkrig.bench-gpu-info.python.h200x2.json"
	doc := &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", Command: "bench gpu memory", Hosts: []report.Host{},
		GPU: &report.GPU{Copies: []report.GPUCopy{{Name: "d2h", Src: 0, Dst: -1, Bytes: 1 << 28, Size: "256M", Iters: 20, GBs: 55.25, Method: "cudaMemcpyAsync"}}}}
	b, _ := json.Marshal(doc)
	cur := filepath.Join(t.TempDir(), "memory.json")
	if err := os.WriteFile(cur, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"analyze", mem}, []string{"d2d_peer gpu0→gpu1\n    copy bandwidth 394.82 GB/s at 256M  NO-EXPECTATION"}},
		{[]string{"analyze", info}, []string{"bench gpu info: driver 580.159.04, CUDA runtime 13.0, NCCL 2.28.9, cuBLAS 13.1.0, 2×"}},
		{[]string{"analyze", cur}, []string{"d2h gpu0→host\n    copy bandwidth 55.25 GB/s at 256M"}},
		{[]string{"report", "--format", "text", mem}, []string{"d2d_peer  gpu1->gpu0     256M     20     394.72"}},
		{[]string{"report", "--format", "text", info}, []string{"gpu 1          NVIDIA H200  sm 9.0 (sm_90)  132 SMs  0000:00:07.0  free 139.3G of 139.8G"}},
	} {
		code, out, errOut := runMain(t, tc.args...)
		if code != ExitOK {
			t.Errorf("%v: exit %d: %s", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: no %q in\n%s", tc.args, w, out)
			}
		}
	}
}

// report says when it merges a document about other nodes than the rest
// (another cluster's qualify run beside a doctor audit); documents about
// the same nodes get no such note.
func TestReportNamesAnotherClustersDocument(t *testing.T) {
	dir := t.TempDir()
	_, doc, _ := runMain(t, "doctor", "--format", "json", "--snapshot", nodesDir+"spark-healthy.tar.gz", "--snapshot", nodesDir+"spark-healthy-peer.tar.gz")
	audit := filepath.Join(dir, "doctor.json")
	if err := os.WriteFile(audit, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	other := "../render/testdata/allpairs-rig.json"
	_, out, errOut := runMain(t, "report", "--format", "json", audit, other)
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Cluster == nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	var notes []string
	for _, f := range r.Cluster.Findings {
		if f.ID == "report.other-cluster" {
			notes = append(notes, f.Subject+": "+f.Observed)
		}
	}
	want := []string{
		audit + ": " + audit + " names spark1, spark2, none of which the other inputs name (node-1, node-2, node-3, node-4 and 4 more)",
		other + ": " + other + " names node-1, node-2, node-3, node-4 and 4 more, none of which the other inputs name (spark1, spark2)",
	}
	if strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
	_, out, _ = runMain(t, "report", "--format", "json", audit, audit)
	if strings.Contains(out, "report.other-cluster") {
		t.Error("the same cluster's documents noted as another cluster's")
	}
}
