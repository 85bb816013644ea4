package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/bench"
	"github.com/sparkrig/sparkrig/internal/gpu"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
)

// TestEveryOutputFitsTheWidth renders every command's text output and help
// at 80 and 100 columns (COLUMNS) and fails on any longer line: the doctor
// on every node tree and on pairs, analyze on every recorded output, plan,
// fix --plan, bench --dry-run, bench compare, a recorded bench run, and
// --help of every command, bench gpu info and memory. Diff lines of fix
// --plan are file contents; the generated files keep theirs within 80
// columns too. bench gpu collective prints nccl-tests' own table (118
// columns), which tools that read nccl-tests output parse: it is not here.
func TestEveryOutputFitsTheWidth(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tree := func(name string) string { return filepath.Join(root, "testdata", "nodes", name+".tar.gz") }
	type run struct {
		dir  string // working directory, "" for this one
		args []string
	}
	var runs []run
	trees, _ := filepath.Glob(filepath.Join(root, "testdata", "nodes", "*.tar.gz"))
	if len(trees) < 10 {
		t.Fatalf("only %d node trees", len(trees))
	}
	for _, tr := range trees {
		runs = append(runs, run{args: []string{"doctor", "-v", "--snapshot", tr}})
	}
	for _, pair := range [][2]string{{"spark-healthy", "spark-healthy-peer"}, {"spark-twin-down", "spark-healthy-peer"}, {"spark-mtu-1500", "spark-healthy-peer"}, {"spark-dhcp-cx7", "spark-healthy-peer"}, {"spark-twins-same-subnet", "spark-healthy-peer"}} {
		a, b := tree(pair[0]), tree(pair[1])
		runs = append(runs,
			run{args: []string{"doctor", "-v", "--snapshot", a, b}},
			run{args: []string{"fix", "--plan", "--snapshot", a, "--snapshot", b}},
			run{args: []string{"bench", "--dry-run", "--from-snapshot", a, "--from-snapshot", b}})
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "internal", "analyze", "testdata", "*"))
	// Field pastes sit one level deeper (field/train); field/holdout is
	// scored once at the end and is left out here, as are the fuzzers'
	// seeds (testdata/fuzz), which are not outputs.
	nested, _ := filepath.Glob(filepath.Join(root, "internal", "analyze", "testdata", "*", "*"))
	for _, d := range nested {
		if st, err := os.Stat(d); err == nil && st.IsDir() && filepath.Base(d) != "holdout" && filepath.Base(filepath.Dir(d)) != "fuzz" {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if filepath.Base(d) == "golden" {
			continue // the recorded analyses, not an output
		}
		files, _ := filepath.Glob(filepath.Join(d, "*"))
		args := []string{"analyze"}
		for _, f := range files {
			if st, err := os.Stat(f); err == nil && st.IsDir() {
				continue
			}
			if !strings.HasSuffix(f, ".md") && !strings.HasSuffix(f, ".SOURCE") {
				args = append(args, filepath.Base(f))
			}
		}
		if len(args) == 1 {
			continue
		}
		runs = append(runs, run{dir: d, args: args})
	}
	models, _ := filepath.Glob(filepath.Join(root, "internal", "plan", "testdata", "models", "*.json"))
	for _, m := range models {
		runs = append(runs, run{args: []string{"plan", m, "--nodes", "4", "--weights", "nvfp4", "--concurrency", "8"}})
	}
	runs = append(runs, run{dir: "testdata/bench", args: []string{"bench", "compare", "no-gpu.json", "h200x2-native.json"}})
	for _, c := range allCommands(newRootCmd(&Env{Getenv: os.Getenv})) {
		runs = append(runs, run{args: append(c, "--help")})
	}
	if len(runs) < 60 {
		t.Fatalf("only %d runs", len(runs))
	}

	for _, w := range []int{80, 100} {
		t.Setenv("COLUMNS", strconv.Itoa(w))
		for _, r := range runs {
			if r.dir != "" {
				t.Chdir(r.dir)
			}
			var out, errb bytes.Buffer
			Main(r.args, strings.NewReader(""), &out, &errb)
			if out.Len() == 0 {
				t.Errorf("%s: no output (stderr %q)", strings.Join(r.args, " "), errb.String())
			}
			tooLong(t, w, strings.Join(r.args, " "), out.String())
			t.Chdir(root + "/internal/cli")
		}
		var info struct {
			gpu.Info
			Python *gpu.PythonEnv `json:"python"`
		}
		b, err := os.ReadFile("../../testdata/gpu/sparkrig.bench-gpu-info.python.h200x2.json")
		if err != nil || json.Unmarshal(b, &info) != nil {
			t.Fatalf("recorded gpu info: %v", err)
		}
		var out bytes.Buffer
		render.GPUInfo(&out, bench.InfoReport(info.Info, info.Python), render.Options{Width: w})
		render.GPUCopies(&out, gpu.CopyReport([]gpu.CopyResult{{Name: "d2d", Bytes: 1 << 30, Iters: 20, GBs: 100}}, func(int) (report.Peak, bool) {
			return bench.MemoryPeak(gpu.Device{Name: "NVIDIA GB10", Integrated: true})
		}), render.Options{Width: w})
		tooLong(t, w, "bench gpu info and memory", out.String())
		for _, rec := range []string{"testdata/bench/h200x2-native.json", "testdata/bench/no-gpu.json"} {
			var out bytes.Buffer
			r := loadBenchRecord(t, rec)
			r.BenchRun = r.Outline()
			render.Text(&out, &r.Report, render.Options{Width: w})
			tooLong(t, w, "bench result "+rec, out.String())
		}
	}
}

func tooLong(t *testing.T, w int, what, out string) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > w {
			t.Errorf("COLUMNS=%d %s: line %d has %d columns:\n%s", w, what, i+1, n, l)
		}
	}
}

// allCommands lists the path of every command a user can call.
func allCommands(c *cobra.Command) [][]string {
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		out = append(out, path)
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				walk(s, append(append([]string(nil), path...), s.Name()))
			}
		}
	}
	walk(c, []string{})
	return out
}

func loadBenchRecord(t *testing.T, path string) *bench.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec bench.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return &rec
}

// TestWrappedCommandsPasteAsTheyWere: bench --dry-run at 80 columns,
// with its backslash continuations joined, is the same text as on a terminal
// wide enough for every command: breaking a line never changes a command.
func TestWrappedCommandsPasteAsTheyWere(t *testing.T) {
	a, b := filepath.Join("..", "..", "testdata", "nodes", "spark-healthy.tar.gz"), filepath.Join("..", "..", "testdata", "nodes", "spark-healthy-peer.tar.gz")
	dryRun := func(columns string) string {
		t.Setenv("COLUMNS", columns)
		code, out, errOut := runMain(t, "bench", "--dry-run", "--from-snapshot", a, "--from-snapshot", b)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		// The temporary directory's name is random per run.
		return regexp.MustCompile(`sparkrig-bench-[0-9a-z]+`).ReplaceAllString(out, "sparkrig-bench-X")
	}
	wide, narrow := dryRun("1000"), dryRun("80")
	var joined []string
	for _, l := range strings.Split(narrow, "\n") {
		if n := len(joined); n > 0 && strings.HasSuffix(joined[n-1], " \\") {
			joined[n-1] = strings.TrimSuffix(joined[n-1], "\\") + strings.TrimLeft(l, " ")
			continue
		}
		if n := len(joined); n > 0 && strings.HasSuffix(joined[n-1], "):") && strings.HasPrefix(l, "    ") {
			joined[n-1] += " " + strings.TrimLeft(l, " ")
			continue
		}
		joined = append(joined, l)
	}
	var commands int
	for _, l := range strings.Split(wide, "\n") {
		if strings.Contains(l, "): ") {
			commands++
			if !slices.Contains(joined, l) {
				t.Errorf("the wrapped dry run lacks\n%s", l)
			}
		}
	}
	if commands < 10 {
		t.Errorf("only %d commands in the dry run", commands)
	}
	if strings.Count(narrow, " \\\n") < 10 {
		t.Errorf("the 80-column dry run breaks almost no command:\n%s", narrow)
	}
}
