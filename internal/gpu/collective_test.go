package gpu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/results"
)

func TestCountsMatchNCCLTests(t *testing.T) {
	for _, tt := range []struct {
		op                    string
		size, elem            int64
		n                     int
		wantParam, wantReport int64
	}{
		// nccl-tests, all_gather -b 16G on 2x DGX Spark: count 2147483648 for 17179869184 B.
		{"all_gather", 17179869184, 4, 2, 2147483648, 17179869184},
		// sparkrig on 2x H200 (testdata/gpu): all_reduce 1 MiB float has count 262144.
		{"all_reduce", 1 << 20, 4, 2, 262144, 1 << 20},
		{"reduce_scatter", 1 << 20, 4, 2, 131072, 1 << 20},
		{"alltoall", 1 << 20, 2, 8, 65536, 1 << 20},
		{"broadcast", 1000, 4, 3, 250, 1000},
		// Sizes that do not divide by the rank count round down, as in nccl-tests.
		{"all_gather", 1000, 4, 3, 83, 996},
	} {
		p, b := counts(tt.op, tt.size, tt.elem, tt.n)
		if p != tt.wantParam || b != tt.wantReport {
			t.Errorf("counts(%s, %d, %d, %d) = %d, %d; want %d, %d", tt.op, tt.size, tt.elem, tt.n, p, b, tt.wantParam, tt.wantReport)
		}
	}
}

func TestBandwidthMatchesNCCLTests(t *testing.T) {
	// nccl-tests all_gather 16G on 2x DGX Spark: time 453650 us, algbw 37.87, busbw 18.94.
	alg, bus := Bandwidth(17179869184, 453650, results.BusBWFactor("all_gather", 2))
	if got := fmt.Sprintf("%.2f %.2f", alg, bus); got != "37.87 18.94" {
		t.Fatalf("algbw busbw = %s, want 37.87 18.94", got)
	}
}

// simulate computes every rank's receive buffer from the send patterns by the
// collectives' definitions, independently of expected().
func simulate(op string, n int, param int64) [][]float32 {
	send := func(r int, i int64) float32 { return pattern(r, i) }
	out := make([][]float32, n)
	for r := range n {
		buf := make([]float32, recvElems(op, n, param))
		for i := range int64(len(buf)) {
			switch op {
			case "all_reduce":
				for j := range n {
					buf[i] += send(j, i)
				}
			case "all_gather":
				buf[i] = send(int(i/param), i%param)
			case "reduce_scatter":
				for j := range n {
					buf[i] += send(j, int64(r)*param+i)
				}
			case "broadcast":
				buf[i] = send(0, i)
			case "alltoall":
				buf[i] = send(int(i/param), int64(r)*param+i%param)
			case "sendrecv":
				buf[i] = send((r+n-1)%n, i)
			}
		}
		out[r] = buf
	}
	return out
}

func TestCheckPatternAgreesWithCollectiveDefinitions(t *testing.T) {
	for _, dt := range []DType{Float32, Float16, BFloat16} {
		for _, op := range Collectives {
			for _, n := range []int{2, 3, 8} {
				const param = 40
				for r, want := range simulate(op, n, param) {
					b := make([]byte, int64(len(want))*dt.Size)
					for i, v := range want {
						dt.put(b, int64(i), v)
					}
					if w := countWrong(b, dt, op, n, r, param); w != 0 {
						t.Errorf("%s %s n=%d rank %d: %d wrong in a correct result", dt.Name, op, n, r, w)
					}
					dt.put(b, 7, dt.get(b, 7)+1)
					if w := countWrong(b, dt, op, n, r, param); w != 1 {
						t.Errorf("%s %s n=%d rank %d: one corrupted element counted %d", dt.Name, op, n, r, w)
					}
				}
			}
		}
	}
}

func TestUnwrittenBufferIsAllWrong(t *testing.T) {
	b := bytes.Repeat([]byte{0xff}, 64*4)
	if w := countWrong(b, Float32, "all_reduce", 2, 0, 64); w != 64 {
		t.Fatalf("0xff buffer: %d wrong, want 64", w)
	}
}

func TestHalfConversion(t *testing.T) {
	for _, tt := range []struct {
		v    float32
		half uint16
	}{{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {1e6, 0x7c00}, {0.5, 0x3800}, {13, 0x4a80}} {
		if got := float32ToHalf(tt.v); got != tt.half {
			t.Errorf("float32ToHalf(%g) = %#04x, want %#04x", tt.v, got, tt.half)
		}
	}
	for h := uint16(0); h < 0x7c00; h++ { // every finite positive half round-trips
		if got := float32ToHalf(halfToFloat32(h)); got != h && h >= 0x0400 {
			t.Fatalf("half %#04x round-trips to %#04x", h, got)
		}
	}
	if got := BFloat16.to16(1.5); got != 0x3fc0 {
		t.Errorf("bf16(1.5) = %#04x, want 0x3fc0", got)
	}
	if !math.IsNaN(float64(BFloat16.from16(0xffff))) {
		t.Error("bf16 0xffff must be NaN")
	}
}

func TestSizes(t *testing.T) {
	o := CollectiveOptions{MinBytes: 1 << 20, MaxBytes: 8 << 30, Factor: 2}
	s := o.Sizes()
	if len(s) != 14 || s[0] != 1<<20 || s[13] != 8<<30 {
		t.Fatalf("1M..8G by 2: %d sizes %v", len(s), s)
	}
	if got := (CollectiveOptions{MinBytes: 5, MaxBytes: 500, Factor: 1}).Sizes(); !cmp.Equal(got, []int64{5}) {
		t.Fatalf("factor 1: %v, want one size", got)
	}
}

func TestValidate(t *testing.T) {
	ok := CollectiveOptions{Ops: []string{"all_reduce"}, MinBytes: 1, MaxBytes: 2, Factor: 2, Iters: 1}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*CollectiveOptions){
		"unknown op":  func(o *CollectiveOptions) { o.Ops = []string{"allreduce"} },
		"no op":       func(o *CollectiveOptions) { o.Ops = nil },
		"min > max":   func(o *CollectiveOptions) { o.MinBytes = 3 },
		"zero iters":  func(o *CollectiveOptions) { o.Iters = 0 },
		"zero factor": func(o *CollectiveOptions) { o.Factor = 0 },
	} {
		o := ok
		mut(&o)
		if o.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

const (
	h200Table   = "../../testdata/gpu/sparkrig.bench-gpu-collective.all_reduce.h200x2"
	h200AllOps  = "../../testdata/gpu/sparkrig.bench-gpu-collective.all-ops.h200x2"
	h200TwoProc = "../../testdata/gpu/sparkrig.bench-gpu-collective.2proc"
)

func loadTables(t *testing.T, path string) []results.NCCLTable {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tables []results.NCCLTable
	if err := json.Unmarshal(b, &tables); err != nil {
		t.Fatal(err)
	}
	return tables
}

func loadH200Tables(t *testing.T) []results.NCCLTable { return loadTables(t, h200Table+".json") }

// Each recorded run was written twice, as text and with --json-file: the text
// printer must reproduce the recorded text byte for byte from the model.
func TestRecordedH200RunsRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		json, text string
		opts       CollectiveOptions
	}{
		{h200Table + ".json", h200Table + ".txt",
			CollectiveOptions{MinBytes: 1 << 20, MaxBytes: 8 << 30, Factor: 2, Warmup: 10, Iters: 50, CheckBytes: 64 << 20}},
		{h200AllOps + ".json", h200AllOps + ".txt",
			CollectiveOptions{MinBytes: 1 << 20, MaxBytes: 256 << 20, Factor: 4, Warmup: 5, Iters: 20, CheckBytes: 64 << 20}},
		{h200TwoProc + ".h200x2.json", h200TwoProc + "-rank0.h200x2.txt",
			CollectiveOptions{MinBytes: 1 << 20, MaxBytes: 64 << 20, Factor: 8, Warmup: 5, Iters: 20, CheckBytes: 64 << 20}},
	} {
		var got bytes.Buffer
		for _, tb := range loadTables(t, tt.json) {
			WriteTable(&got, tb, tt.opts)
		}
		want := readVerbatim(t, tt.text)
		if diff := cmp.Diff(string(want), got.String()); diff != "" {
			t.Errorf("%s from the recorded model (-recorded +printed):\n%s", tt.text, diff)
		}
	}
}

func TestRecordedAllOpsModel(t *testing.T) {
	tables := loadTables(t, h200AllOps+".json")
	var ops []string
	for _, tb := range tables {
		ops = append(ops, tb.Collective)
		if !tb.Complete || tb.OutOfBounds == nil || *tb.OutOfBounds != 0 || tb.WrongResults != 0 || len(tb.Rows) != 5 {
			t.Errorf("%s: complete %v, out of bounds %v, %d rows", tb.Collective, tb.Complete, tb.OutOfBounds, len(tb.Rows))
		}
		for _, r := range tb.Rows {
			if hasInPlace(tb.Collective) != (r.IP.TimeUS != nil) {
				t.Errorf("%s %d B: in-place column present = %v", tb.Collective, r.SizeBytes, r.IP.TimeUS != nil)
			}
			if _, alg := Bandwidth(r.SizeBytes, *r.OOP.TimeUS, 1); math.Abs(alg-*r.OOP.AlgBWGBs) > 1e-9 {
				t.Errorf("%s %d B: algbw %v, recomputed %v", tb.Collective, r.SizeBytes, *r.OOP.AlgBWGBs, alg)
			}
			_, bus := Bandwidth(r.SizeBytes, *r.OOP.TimeUS, results.BusBWFactor(tb.Collective, 2))
			if math.Abs(bus-*r.OOP.BusBWGBs) > 1e-9 {
				t.Errorf("%s %d B: busbw %v, recomputed %v", tb.Collective, r.SizeBytes, *r.OOP.BusBWGBs, bus)
			}
		}
	}
	if !cmp.Equal(ops, Collectives) {
		t.Errorf("collectives %v, want %v", ops, Collectives)
	}
}

func TestRecordedTwoProcessRun(t *testing.T) {
	for _, tb := range loadTables(t, h200TwoProc+".h200x2.json") {
		if tb.Ranks != 2 || tb.Nodes != 1 || len(tb.Devices) != 2 {
			t.Fatalf("%s: %d ranks, %d nodes, %d devices", tb.Collective, tb.Ranks, tb.Nodes, len(tb.Devices))
		}
		d0, d1 := tb.Devices[0], tb.Devices[1]
		if d0.Rank != 0 || d1.Rank != 1 || d0.PID == d1.PID || d0.Device != 0 || d1.Device != 1 || d1.PCIBus != "0000:00:07.0" {
			t.Errorf("%s devices: %+v", tb.Collective, tb.Devices)
		}
	}
}

// Every recorded text output reads through the nccl-tests parser with no
// unreadable rows and every #wrong zero.
func TestRecordedTextsParse(t *testing.T) {
	for path, want := range map[string][]string{
		h200Table + ".txt":                {"all_reduce"},
		h200AllOps + ".txt":               Collectives,
		h200TwoProc + "-rank0.h200x2.txt": {"all_reduce", "all_gather"},
		"../../testdata/gpu/sparkrig.bench-gpu-collective.all_reduce.wheelnccl.h200x2.txt": {"all_reduce"},
		"../../testdata/gpu/sparkrig.bench-gpu-collective.all_reduce.2proc.h200x2.txt":     {"all_reduce"},
		"../../testdata/gpu/sparkrig.bench-gpu-collective.bf16.h200x2.txt":                 {"all_reduce", "reduce_scatter"},
		"../../testdata/gpu/sparkrig.bench-gpu-collective.one-rank.h100.txt":               {"all_reduce"},
	} {
		out, err := results.ParseNCCLTests(bytes.NewReader(readVerbatim(t, path)))
		if err != nil || out.Unparsed != 0 {
			t.Errorf("%s: %v, %d unparsed", path, err, out.Unparsed)
			continue
		}
		var got []string
		for _, tb := range out.Tables {
			got = append(got, tb.Collective)
			if tb.WrongResults != 0 || !tb.Complete {
				t.Errorf("%s %s: %d wrong, complete %v", path, tb.Collective, tb.WrongResults, tb.Complete)
			}
		}
		if !cmp.Equal(got, want) {
			t.Errorf("%s: collectives %v, want %v", path, got, want)
		}
	}
}

func TestRecordedH200RunModel(t *testing.T) {
	tb := loadH200Tables(t)[0]
	if tb.Tool != "sparkrig" || tb.Collective != "all_reduce" || tb.Ranks != 2 || tb.NCCLVersion != "2.28.3" || len(tb.Rows) != 14 {
		t.Fatalf("header: %+v", tb)
	}
	peak, size := tb.PeakBusBWGBs, tb.PeakSize
	tb.FinishPeak()
	if tb.PeakBusBWGBs != peak || tb.PeakSize != size || tb.WrongResults != 0 {
		t.Fatalf("FinishPeak: %v at %d, recorded %v at %d", tb.PeakBusBWGBs, tb.PeakSize, peak, size)
	}
	if fmt.Sprintf("%.2f %d", peak, size) != "348.51 8589934592" {
		t.Fatalf("peak %.2f at %d, want 348.51 at 8 GiB", peak, size)
	}
	checked := 0
	for _, r := range tb.Rows {
		alg, bus := Bandwidth(r.SizeBytes, *r.IP.TimeUS, results.BusBWFactor("all_reduce", 2))
		if math.Abs(alg-*r.IP.AlgBWGBs) > 1e-9 || bus != alg {
			t.Errorf("%d B: recorded algbw %v, recomputed %v", r.SizeBytes, *r.IP.AlgBWGBs, alg)
		}
		if r.IP.WrongErrs != nil {
			checked++
		}
	}
	if checked != 7 { // 1 MiB … 64 MiB
		t.Errorf("%d sizes checked, want 7 (up to --check-max 64M)", checked)
	}
}

// The recorded text output reads back through the nccl-tests parser of
// internal/results into the same rows as the recorded model (to the printed
// precision), so analyze treats sparkrig's tables like nccl-tests'.
func TestRecordedH200TextParsesAsNCCLTests(t *testing.T) {
	model := loadH200Tables(t)[0]
	out, err := results.ParseNCCLTests(bytes.NewReader(readVerbatim(t, h200Table+".txt")))
	if err != nil || len(out.Tables) != 1 || out.Unparsed != 0 {
		t.Fatalf("parse: %v, %d tables, %d unparsed rows", err, len(out.Tables), out.Unparsed)
	}
	got := out.Tables[0]
	if got.Tool != "sparkrig" || got.ToolVersion != "dev" || got.NCCLVersion != "2.28.3" {
		t.Errorf("tool %q %q, NCCL %q; want sparkrig dev, NCCL 2.28.3", got.Tool, got.ToolVersion, got.NCCLVersion)
	}
	if got.Collective != "all_reduce" || got.Ranks != 2 || !cmp.Equal(got.Devices, model.Devices) {
		t.Fatalf("header: %s, %d ranks, devices %+v", got.Collective, got.Ranks, got.Devices)
	}
	round := func(p *float64, digits float64) float64 { return math.Round(*p*digits) / digits }
	if len(got.Rows) != len(model.Rows) {
		t.Fatalf("%d rows, want %d", len(got.Rows), len(model.Rows))
	}
	for i, r := range got.Rows {
		m := model.Rows[i]
		for _, pair := range [][2]results.Timing{{r.OOP, m.OOP}, {r.IP, m.IP}} {
			p, w := pair[0], pair[1]
			if round(p.BusBWGBs, 100) != round(w.BusBWGBs, 100) || round(p.AlgBWGBs, 100) != round(w.AlgBWGBs, 100) {
				t.Errorf("%d B: busbw %v, model %v", r.SizeBytes, *p.BusBWGBs, *w.BusBWGBs)
			}
			if (p.WrongErrs == nil) != (w.WrongErrs == nil) {
				t.Errorf("%d B: #wrong presence differs", r.SizeBytes)
			}
		}
		if r.SizeBytes != m.SizeBytes || r.Count != m.Count || r.Type != m.Type || r.RedOp != m.RedOp || r.Root != m.Root {
			t.Errorf("row %d: %+v, model %+v", i, r, m)
		}
	}
	if round(got.AvgBusBWGBs, 1000) != round(model.AvgBusBWGBs, 1000) || got.PeakSize != model.PeakSize {
		t.Errorf("footer: avg %v peak at %d; model %v at %d", *got.AvgBusBWGBs, got.PeakSize, *model.AvgBusBWGBs, model.PeakSize)
	}
}
