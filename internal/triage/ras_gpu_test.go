package triage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/report"
)

// gpuCase is one recorded hang of testdata/ras-gpu (its meta.json).
type gpuCase struct {
	Case   string `json:"case"`
	World  int    `json:"world"`
	PIDs   []int  `json:"pids"`
	Behind *int   `json:"behind"`
	Mode   string `json:"mode"`
}

var replyHeader = regexp.MustCompile(`(?m)^<<< reply to [A-Z ]+ until EOF \((\d+) bytes\)\n`)

// transcript is the reply a recorded client session got to its status
// command (the framing of scripts/ras-record: "<<< reply to CMD until EOF
// (N bytes)" and the N bytes), or nil when it got none.
func transcript(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	m := replyHeader.FindSubmatchIndex(b)
	if m == nil {
		return nil
	}
	n, _ := strconv.Atoi(string(b[m[2]:m[3]]))
	body := b[m[1]:]
	if n > len(body) {
		t.Fatalf("%s: reply cut short", path)
	}
	return body[:n]
}

// gpuSample is one node's sample made of a recorded sample: the RAS
// answers of the forms asked for (json, text, ncclras), each with the exit
// the sample script gives it (0, or no answer within the deadline).
func gpuSample(t *testing.T, dir, tag string, c gpuCase, forms []string) Sample {
	s := Sample{Host: "gpu-host", Addrs: []string{"192.0.2.2/24"}}
	for _, p := range c.PIDs {
		s.Procs = append(s.Procs, Process{PID: p, Rank: -1, Libs: []string{"/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2"}})
	}
	for _, f := range forms {
		var raw []byte
		client, format := "protocol", f
		switch f {
		case "json":
			raw = transcript(t, filepath.Join(dir, tag+".json.txt"))
		case "text":
			raw = transcript(t, filepath.Join(dir, tag+".verbose.txt"))
		case "ncclras":
			client, format = "ncclras", "text"
			b, err := os.ReadFile(filepath.Join(dir, tag+".ncclras-v.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if i := bytes.Index(b, []byte("\n# stderr:")); i >= 0 && bytes.Contains(b, []byte("\n# exit 0\n")) {
				raw = b[:i]
			}
		}
		a := RASAnswer{Client: client, Format: format, Raw: raw}
		if raw == nil {
			a.Exit = rasExitTimeout
		}
		s.RAS = append(s.RAS, a)
	}
	return s
}

// TestRealGPUHangs replays the recordings of real hangs (one rank per GPU,
// independent processes, NCCL 2.28.9 on H100s): for every case and every
// form of RAS answer, triage names exactly the rank the recording made
// fall behind (stalled host thread, SIGSTOP, SIGKILL) and nobody for the
// healthy job.
func TestRealGPUHangs(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/ras-gpu/*/*/meta.json")
	if len(dirs) == 0 {
		t.Fatal("no recording under testdata/ras-gpu")
	}
	for _, meta := range dirs {
		dir := filepath.Dir(meta)
		b, err := os.ReadFile(meta)
		if err != nil {
			t.Fatal(err)
		}
		var c gpuCase
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", meta, err)
		}
		for _, forms := range [][]string{{"json", "text"}, {"json"}, {"text"}, {"ncclras"}} {
			name := fmt.Sprintf("%s/%v", filepath.Base(dir), forms)
			s1 := gpuSample(t, dir, "s1", c, forms)
			s2 := gpuSample(t, dir, "s2", c, forms)
			if st1, _ := s1.Status(); st1 == nil {
				if st2, _ := s2.Status(); st2 == nil {
					continue // this form got no answer in either sample (the stopped rank held the port)
				}
			}
			d := Diagnose([]Sample{s1}, []Sample{s2}, 8*time.Second)
			if c.Behind == nil {
				if d.FirstRank != -1 || d.Verdict == VerdictOutOfSync || d.Verdict == VerdictRankMissing || d.Verdict == VerdictStuck {
					t.Errorf("%s: a healthy job named %s rank %d: %q", name, d.Verdict, d.FirstRank, d.Evidence)
				}
				continue
			}
			want := VerdictOutOfSync
			if c.Mode != "stall" {
				want = VerdictRankMissing
			}
			if d.FirstRank != *c.Behind || d.Verdict != want || d.FirstNode != "gpu-host" {
				t.Errorf("%s: %s rank %d on %q, want %s rank %d: %q", name, d.Verdict, d.FirstRank, d.FirstNode, want, *c.Behind, d.Evidence)
			}
			for _, r := range d.Ranks {
				if r.Rank == *c.Behind && r.PID != c.PIDs[*c.Behind] {
					t.Errorf("%s: rank %d has pid %d, want %d", name, r.Rank, r.PID, c.PIDs[*c.Behind])
				}
			}
		}
	}
}

// sampleText writes a sample back as the script prints it.
func sampleText(s Sample) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s host\n%s\n%s addrs\n", marker, s.Host, marker)
	for _, a := range s.Addrs {
		b.WriteString(a + "\n")
	}
	fmt.Fprintf(&b, "%s procs\n", marker)
	for _, p := range s.Procs {
		fmt.Fprintf(&b, "pid %d\ncmd python3 job.py\n", p.PID)
		for _, l := range p.Libs {
			b.WriteString("lib " + l + "\n")
		}
	}
	for _, a := range s.RAS {
		fmt.Fprintf(&b, "%s ras %s %s\n", marker, a.Client, a.Format)
		b.Write(a.Raw)
		fmt.Fprintf(&b, "%s ras-exit %d\n", marker, a.Exit)
	}
	fmt.Fprintf(&b, "%s end\n", marker)
	return b.String()
}

// The same recordings through Run, as a node's script output would bring
// them: the report names the rank behind, its status is critical, and a
// healthy job is never critical.
func TestRealGPUHangsThroughRun(t *testing.T) {
	metas, _ := filepath.Glob("testdata/ras-gpu/*/*/meta.json")
	for _, meta := range metas {
		dir := filepath.Dir(meta)
		b, _ := os.ReadFile(meta)
		var c gpuCase
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		forms := []string{"json", "text"}
		fr := &fakeRunner{nodes: map[string]*fakeNode{"gpu-host": {outputs: []string{
			sampleText(gpuSample(t, dir, "s1", c, forms)), sampleText(gpuSample(t, dir, "s2", c, forms))}}}, calls: map[string]int{}}
		rep, err := Run(t.Context(), Options{Runner: fr, Hosts: []string{"gpu-host"}, Interval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		tr := rep.Triage
		name := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
		if c.Behind == nil {
			if tr.FirstRank != -1 || rep.Status == report.VerdictCritical || fr.calls["gpu-host"] != 2 {
				t.Errorf("%s: %s rank %d status %s", name, tr.Verdict, tr.FirstRank, rep.Status)
			}
			continue
		}
		if tr.FirstRank != *c.Behind || tr.FirstNode != "gpu-host" || rep.Status != report.VerdictCritical {
			t.Errorf("%s: %s rank %d on %q status %s, want rank %d: %q", name, tr.Verdict, tr.FirstRank, tr.FirstNode, rep.Status, *c.Behind, tr.Evidence)
		}
	}
}
