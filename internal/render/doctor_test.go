package render

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// treesReport audits every snapshot tree of testdata/nodes into one report.
func treesReport(t *testing.T) *report.Report {
	t.Helper()
	dirs, _ := filepath.Glob("../../testdata/nodes/*.tar.gz")
	if len(dirs) < 10 {
		t.Fatalf("found %d snapshot trees", len(dirs))
	}
	r := &report.Report{Schema: report.SchemaVersion, Tool: "sparkrig", Command: "doctor", Hosts: []report.Host{}}
	for _, m := range dirs {
		s, err := snapshot.Read(m)
		if err != nil {
			t.Fatal(err)
		}
		n := facts.FromSnapshot(s)
		p := check.DetectProfile(n)
		fs, sk := check.Run(n, p)
		r.Hosts = append(r.Hosts, report.Host{Host: n.Host, Profile: string(p), Status: report.HostAudited, Source: strings.TrimSuffix(filepath.Base(m), ".tar.gz"), Findings: fs, Skipped: sk})
	}
	r.Hosts = append(r.Hosts, report.Host{Host: "bad.tar.gz", Source: "bad.tar.gz", Status: report.HostBadSnapshot, Error: "bad snapshot: not a gzip archive (gzip: invalid header)"})
	return r
}

func TestTextFits100Columns(t *testing.T) {
	r := treesReport(t)
	for _, verbose := range []bool{false, true} {
		var b bytes.Buffer
		if err := Text(&b, r, Options{Verbose: verbose, Width: 100}); err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > 100 {
				t.Errorf("verbose=%v line %d has %d columns: %q", verbose, i+1, n, l)
			}
		}
		if strings.Contains(b.String(), "\x1b[") {
			t.Error("colour codes without Options.Color")
		}
	}
}

func TestTextColourAndSummary(t *testing.T) {
	r := &report.Report{Hosts: []report.Host{{Host: "n1", Profile: "dgx-spark", Status: report.HostAudited, Findings: []report.Finding{
		{ID: "spark.mtu", Severity: report.Warn, Subject: "enp1s0f1np1", Title: "jumbo MTU", Observed: "MTU 1500", Expected: "MTU 9000", Remedy: report.Manual(report.ActionRun, "sudo ip link set enp1s0f1np1 mtu 9000")},
		{ID: "spark.pcie-width", Severity: report.Fail, Subject: "0002:01:00.1", Title: "PCIe x4", Observed: "32GT/s x2"},
		{ID: "spark.mtu", Severity: report.OK, Subject: "enP2p1s0f1np1", Title: "jumbo MTU", Observed: "MTU 9000"},
	}}}}
	var plain, colour bytes.Buffer
	Text(&plain, r, Options{Width: 100})
	Text(&colour, r, Options{Width: 100, Color: true})
	want := "n1 · dgx-spark\n" +
		"  0002:01:00.1\n" +
		"    FAIL  spark.pcie-width — PCIe x4\n" +
		"          seen:     32GT/s x2\n" +
		"  enp1s0f1np1\n" +
		"    WARN  spark.mtu — jumbo MTU\n" +
		"          seen:     MTU 1500\n" +
		"          expected: MTU 9000\n" +
		"          fix:      sudo ip link set enp1s0f1np1 mtu 9000\n" +
		"  1 fail · 1 warn · 0 not evaluated · 0 info · 1 ok\n\n" +
		"summary 1 of 1 host(s) audited: 1 fail · 1 warn · 0 not evaluated · 0 info · 1 ok\n"
	if plain.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", plain.String(), want)
	}
	if !strings.Contains(colour.String(), "\x1b[1;31mFAIL\x1b[0m") || !strings.Contains(colour.String(), "\x1b[33mWARN\x1b[0m") {
		t.Errorf("no colour badges in %q", colour.String())
	}
}

func TestMarkdownHosts(t *testing.T) {
	r := treesReport(t)
	var b bytes.Buffer
	if err := Markdown(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"### spark1 (dgx-spark)\n",
		"| severity | check | subject | observed | expected | fix |\n",
		"| ⚠️ warn | `spark.link-speed` | enp1s0f1np1 | 100000 Mb/s | 200000 Mb/s |",
		"Not audited (bad-snapshot): bad snapshot: not a gzip archive",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// TestFixLinesStayShellSafe wraps fix blocks as the text renderer does and
// checks every piece is still what a shell would run: comments stay
// comments, commands break only with a continuation outside quotes, and a
// here-document is never broken.
func TestFixLinesStayShellSafe(t *testing.T) {
	fix := "sudo sed -i 's/^GRUB_CMDLINE_LINUX_DEFAULT=\"/&kho=off /' /etc/default/grub && sudo update-grub && sudo reboot\n" +
		"# keep other interfaces the file configured; the peer node takes addresses in the same two subnets, as the cluster doctor says\n" +
		"sudo tee /etc/x.yaml >/dev/null <<'YAML'\n" +
		"a very long line inside a here document that must stay exactly as it is, whatever the width of the terminal\n" +
		"YAML"
	var b strings.Builder
	writeField(&b, "    ", "fix", fix, 60, true)
	got := b.String()
	for _, want := range []string{
		"    fix:      sudo sed -i \\\n",
		"                's/^GRUB_CMDLINE_LINUX_DEFAULT=\"/&kho=off /' \\\n",
		"                sudo reboot\n",
		"              # keep other interfaces the file configured;\n",
		"              # the peer node takes addresses in the same\n",
		"              a very long line inside a here document that must stay exactly as it is, whatever the width of the terminal\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("wrapped fix lacks %q:\n%s", want, got)
		}
	}
}

// A manual remedy is prose: wrapped as words under its label, never with
// a shell's backslash continuation (which only a change's commands get).
func TestManualRemedyWrapsAsProse(t *testing.T) {
	r := readReport(t, "testdata/allpairs-rig.json")
	r.AllPairs = nil // the cluster's findings as the doctor's text shows them
	var b bytes.Buffer
	if err := Text(&b, r, Options{Width: 100}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, " \\\n") {
		t.Errorf("a manual remedy wrapped as a command:\n%s", out)
	}
	if want := "fix:      check the node's port (ethtool, its error counters), reseat or replace its\n"; !strings.Contains(out, want) {
		t.Errorf("no %q in\n%s", want, out)
	}
}
