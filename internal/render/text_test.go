package render

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWrap(t *testing.T) {
	for _, tt := range []struct {
		in    string
		width int
		want  []string
	}{
		// a line that fits keeps its spacing
		{"TP1    yes  42.7 GB", 40, []string{"TP1    yes  42.7 GB"}},
		{"all_gather_perf -b 16G on two DGX Spark over one cable", 20,
			[]string{"all_gather_perf -b", "16G on two DGX Spark", "over one cable"}},
		// a word longer than the line is cut, not left to overflow
		{"see https://github.com/NVIDIA/dgx-spark-playbooks now", 20,
			[]string{"see", "https://github.com/N", "VIDIA/dgx-spark-play", "books now"}},
		// a line laid out in columns breaks between them
		{"NVIDIA H100 80GB HBM3  sm 9.0 (sm_90)  132 SMs  0000:00:06.0  free 78.7G of 79.2G", 60,
			[]string{"NVIDIA H100 80GB HBM3  sm 9.0 (sm_90)  132 SMs  0000:00:06.0", "free 78.7G of 79.2G"}},
		// colour sequences take no columns
		{esc + "[33mWARN" + esc + "[0m one two three", 14, []string{esc + "[33mWARN" + esc + "[0m one two", "three"}},
	} {
		if got := wrap(tt.in, tt.width); !cmp.Equal(got, tt.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}

func TestVisibleLength(t *testing.T) {
	for s, want := range map[string]int{
		"":                                   0,
		"busbw ≈ 21.97 GB/s":                 18,
		esc + "[33mWARN" + esc + "[0m":       4,
		esc + "[1;31m" + esc + "[0m":         0,
		"a" + esc + "[32mok" + esc + "[0m b": 5,
	} {
		if got := vlen(s); got != want {
			t.Errorf("vlen(%q) = %d, want %d", s, got, want)
		}
	}
	if head, rest := cut("spark"+esc+"[33m-01", 6); head != "spark"+esc+"[33m-" || rest != "01" {
		t.Errorf("cut: %q %q", head, rest)
	}
}

func TestTextTableClosesUpThenFolds(t *testing.T) {
	header := []string{"STEP", "RESULT", "+VALUE"}
	rows := [][]string{{"nccl/all_gather", "all_gather busbw peak", "301.82 GB/s"}, {"rdma/write", "rail0 bw", "96.1 Gb/s"}}
	for _, tt := range []struct {
		width int
		want  string
	}{
		{60, "" +
			"STEP             RESULT                       VALUE\n" +
			"nccl/all_gather  all_gather busbw peak  301.82 GB/s\n" +
			"rdma/write       rail0 bw                 96.1 Gb/s\n"},
		{49, "" +
			"STEP            RESULT                      VALUE\n" +
			"nccl/all_gather all_gather busbw peak 301.82 GB/s\n" +
			"rdma/write      rail0 bw                96.1 Gb/s\n"},
		{40, "" +
			"nccl/all_gather\n" +
			"  RESULT  all_gather busbw peak\n" +
			"  VALUE   301.82 GB/s\n" +
			"rdma/write\n" +
			"  RESULT  rail0 bw\n" +
			"  VALUE   96.1 Gb/s\n"},
	} {
		var b strings.Builder
		textTable(&b, "", tt.width, header, rows)
		if d := cmp.Diff(tt.want, b.String()); d != "" {
			t.Errorf("width %d (-want +got):\n%s", tt.width, d)
		}
	}
}

func TestReflow(t *testing.T) {
	in := "fix changes only what a finding requires.\n\n" +
		"  --plan      (default) print per host a unified diff against what is there now\n" +
		"  --rollback  restore the newest backup\n\n" +
		"Exit status:\n" +
		"  3    UNKNOWN   could not evaluate: usage error, capture failed"
	want := "fix changes only what a finding requires.\n\n" +
		"  --plan      (default) print per host a unified\n" +
		"              diff against what is there now\n" +
		"  --rollback  restore the newest backup\n\n" +
		"Exit status:\n" +
		"  3    UNKNOWN   could not evaluate: usage error,\n" +
		"                 capture failed\n"
	if d := cmp.Diff(want, Reflow(in, 50)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	cmd := "  sparkrig fix --plan --hosts spark-0[1-3] --topology three-node-ring --subnets 10.10.0.0/24"
	want = "  sparkrig fix --plan --hosts spark-0[1-3] \\\n" +
		"      --topology three-node-ring \\\n" +
		"      --subnets 10.10.0.0/24"
	if d := cmp.Diff(want, ReflowShell(cmd, 50)); d != "" {
		t.Errorf("shell (-want +got):\n%s", d)
	}
}

// FuzzWrap: whatever the text and width, no wrapped line is wider than the
// width and no word is lost or reordered.
func FuzzWrap(f *testing.F) {
	f.Add("all_gather_perf -b 16G on two DGX Spark over one cable: busbw ~22 GB/s (Avg 21.9736)", 30)
	f.Add("see https://github.com/NVIDIA/dgx-spark-playbooks/blob/main/nvidia/nccl/README.md", 12)
	f.Add("NCCL ≥ 2.28.3 · 21.97 GB/s — ratio 0.954\nsecond line", 10)
	f.Fuzz(func(t *testing.T, s string, width int) {
		if width < 10 || width > 400 || strings.Contains(s, esc) {
			t.Skip()
		}
		lines := wrap(s, width)
		for _, l := range lines {
			if vlen(l) > width {
				t.Fatalf("line %q is %d columns, width %d", l, vlen(l), width)
			}
		}
		// Cut words rejoin: compare the text without any whitespace.
		squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if squash(strings.Join(lines, " ")) != squash(s) {
			t.Fatalf("words changed: %q -> %q", s, lines)
		}
	})
}

// TestWrapShellTakesAnApostropheForProse: a quote that never closes is an
// apostrophe, not a shell string, so the line still breaks within width;
// a real quoted word still stays whole.
func TestWrapShellTakesAnApostropheForProse(t *testing.T) {
	prose := "check the host's resources: /dev/shm size (containers: --shm-size or --ipc=host), memlock and open-file limits"
	for _, l := range wrapShell(prose, 60) {
		if vlen(l) > 60 {
			t.Errorf("line of %d columns: %q", vlen(l), l)
		}
	}
	// Two apostrophes make no quoted span between them (an AWS remedy's
	// "the instances' security group ... the provider's reason").
	two := "give the instances' security group an inbound and an outbound rule for all traffic whose source and destination is the group itself; rerun with FI_LOG_LEVEL=warn for the provider's reason"
	for _, l := range wrapShell(two, 60) {
		if vlen(l) > 60 {
			t.Errorf("line of %d columns: %q", vlen(l), l)
		}
	}
	if got := wrapShell(`export NCCL_IB_HCA='=mlx5_0,mlx5_1' NCCL_DEBUG=INFO`, 30); got[0] != "export \\" || got[1] != "NCCL_IB_HCA='=mlx5_0,mlx5_1' \\" {
		t.Errorf("an assignment's quoted value was split: %q", got)
	}
	// A double-quoted span wider than the line breaks between its words
	// (a shell joins a backslash-newline inside double quotes).
	py := `check (python -c "import torch; print(torch.version.cuda, torch.cuda.nccl.version())"), then reinstall`
	for _, l := range wrapShell(py, 40) {
		if vlen(l) > 40 {
			t.Errorf("line of %d columns: %q", vlen(l), l)
		}
	}
	// A quote in an option opens a span too: the awk program after it
	// stays whole.
	awk := `awk -F': ' '{print $2}' /proc/driver/nvidia/version`
	if got := wrapShell(awk, 20); !slices.Contains(got, `'{print $2}' \`) {
		t.Errorf("a quoted argument after an option's quote was split: %q", got)
	}
	cmd := `echo 'a b c d e f g h i j k l m n o p q r s t u v w x y z' > /tmp/x`
	got := wrapShell(cmd, 30)
	if got[0] != "echo \\" || got[1] != "'a b c d e f g h i j k l m n o p q r s t u v w x y z' \\" {
		t.Errorf("a quoted word was split: %q", got)
	}
}

// packByJoining is pack as first written: the line rebuilt and measured
// again for every unit. pack counts the columns as it goes; both must lay
// out the same lines.
func packByJoining(units []string, sep string, width int, split func(string) []string) []string {
	var out []string
	line := ""
	for _, u := range units {
		if vlen(u) > width {
			if line != "" {
				out = append(out, line)
			}
			pieces := split(u)
			out, u, line = append(out, pieces[:len(pieces)-1]...), pieces[len(pieces)-1], ""
		}
		switch {
		case line == "":
			line = u
		case vlen(line)+len(sep)+vlen(u) <= width:
			line += sep + u
		default:
			out = append(out, line)
			line = u
		}
	}
	return append(out, line)
}

func TestPackCountsColumnsAsItGoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 2026))
	words := []string{"a", "busbw", "21.99", "GB/s", "ConnectX-7", "µs", "≥", "https://github.com/NVIDIA/nccl/issues/1234",
		colourOpen + "33m" + "warn" + esc + "[0m", "αβγδεζηθικλμνξοπρστυφχψω", strings.Repeat("x", 130), ""}
	for i := 0; i < 2000; i++ {
		var units []string
		for n := rng.IntN(40); n > 0; n-- {
			units = append(units, words[rng.IntN(len(words))])
		}
		width := 10 + rng.IntN(120)
		split := func(w string) []string { return wrapWords(w, width) }
		for _, sep := range []string{" ", "  "} {
			got, want := pack(units, sep, width, split), packByJoining(units, sep, width, split)
			if !slices.Equal(got, want) {
				t.Fatalf("width %d sep %q units %q:\n got %q\nwant %q", width, sep, units, got, want)
			}
		}
	}
}
