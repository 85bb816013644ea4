package plan

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

func runOptions(t *testing.T, model string) Options {
	t.Helper()
	b, err := os.ReadFile("testdata/models/" + model)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Config: Input{Name: model, Bytes: b}, ModelName: model, ModelArg: model, Serve: model, Weights: "nvfp4",
		Workload: Workload{Input: 1024, Output: 128, Concurrency: 1, KVDType: "fp8", GPUMemUtil: 0.9, Engine: "vllm"}}
}

// copies is a bench gpu memory result of n devices at gbs each; spark
// marks the rows as a DGX Spark's (bench gpu memory attaches GB10's peak
// only there).
func copies(n int, gbs float64, spark bool) []byte {
	var rows []string
	for i := range n {
		peak := ""
		if spark {
			peak = `, "peak": {"name": "GB10 LPDDR5X unified memory", "value": 273, "unit": "GB/s"}`
		}
		rows = append(rows, fmt.Sprintf(`{"name": "d2d", "src": %d, "dst": %d, "bytes": 268435456, "iters": 20, "gbs": %g%s}`, i, i, gbs, peak))
	}
	return []byte("[" + strings.Join(rows, ",") + "]")
}

// TestRunRefusesOtherPlatforms: a memory benchmark of any number of GPUs
// above a Spark's one, or of one GPU faster than a Spark's peak, is refused
// for a DGX Spark plan in one line; a Spark's own (its rows carry GB10's
// peak) replaces the platform's bandwidth.
func TestRunRefusesOtherPlatforms(t *testing.T) {
	for n := 2; n <= 8; n++ {
		for _, gbs := range []float64{100, 2085} {
			o := runOptions(t, "llama-3.1-8b.json")
			o.From = []Input{{Name: "mem.json", Bytes: copies(n, gbs, false)}}
			_, err := Run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("measured %d GPUs of one host", n)) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%d devices at %g GB/s: %v", n, gbs, err)
			}
		}
	}
	o := runOptions(t, "llama-3.1-8b.json")
	o.From = []Input{{Name: "mem.json", Bytes: copies(1, 1000, false)}}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "2000 GB/s, above dgx-spark's 273 GB/s peak") {
		t.Errorf("one device at 2000 GB/s: %v", err)
	}
	o.From = []Input{{Name: "spark.json", Bytes: copies(1, 122, true)}}
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.Plans[0].Numbers[1]; n.Name != "memory bandwidth" || n.Value != 244 || !strings.Contains(n.Source, "measured: spark.json") {
		t.Errorf("a Spark's own benchmark: %+v", n)
	}
	// Planned for the platform it names, it is not refused for naming it.
	o.From = []Input{{Name: "spark.json", Bytes: copies(1, 122, true)}}
	o.Platform = "dgx-spark"
	if _, err := Run(context.Background(), o); err != nil {
		t.Errorf("a Spark's own benchmark for --platform dgx-spark: %v", err)
	}
}

// TestRunEngines: every engine plans, and the plan names the engine and
// format whose efficiencies it used, or the engine it took them from.
func TestRunEngines(t *testing.T) {
	for _, c := range []struct{ engine, weights, want string }{
		{"vllm", "nvfp4", "(vllm, nvfp4)"}, {"sglang", "nvfp4", "sglang takes vllm's figure"},
		{"trtllm", "nvfp4", "(trtllm, nvfp4)"}, {"llama.cpp", "q4_k_m", "(llama.cpp, q4_k_m)"},
		{"ollama", "q4_k_m", "ollama takes llama.cpp's figure"}, {"tensorrt-llm", "fp8", "(trtllm, fp8)"},
	} {
		o := runOptions(t, "llama-3.1-8b.json")
		o.Weights, o.Workload.Engine = c.weights, c.engine
		r, err := Run(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: %v", c.engine, err)
		}
		var all []string
		for _, n := range r.Plans[0].Assumed {
			all = append(all, n.Text+" "+n.Source)
		}
		if !strings.Contains(strings.Join(all, "\n"), c.want) {
			t.Errorf("%s %s: no %q in the assumptions:\n%s", c.engine, c.weights, c.want, strings.Join(all, "\n"))
		}
	}
}

// FuzzReadMeasured feeds the --from reader any bytes: an error or a
// reading, never a panic; seeded with a real two-H200 memory benchmark
// (internal/cli/testdata/script/plan.txtar's mem.json) and its envelope.
func FuzzReadMeasured(f *testing.F) {
	f.Add([]byte(`[{"name": "d2d", "src": 0, "dst": 0, "bytes": 268435456, "iters": 20, "gbs": 2085.1363266884673, "method": "cudaMemcpyAsync"},
  {"name": "d2d", "src": 1, "dst": 1, "bytes": 268435456, "iters": 20, "gbs": 2084.9031111475733, "method": "cudaMemcpyAsync"},
  {"name": "d2d_peer", "src": 0, "dst": 1, "bytes": 268435456, "iters": 20, "gbs": 394.8221335933958, "method": "cudaMemcpyPeerAsync"}]`))
	f.Add([]byte(`{"schema_version": 3, "command": "bench gpu memory", "gpu": {"copies": [{"name": "d2d", "src": 0, "dst": 0, "gbs": 122, "peak": {"name": "GB10 LPDDR5X unified memory"}}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Measured
		if m.ReadMeasured("fuzz", b) != nil {
			return
		}
		_ = m.CheckPlatform("dgx-spark", 273, 1)
		_ = m.OriginPlatform()
	})
}

// TestRunRefusesOtherDoctors: a doctor report of GPU servers does not make a
// DGX Spark plan; one of Sparks gives the node count.
func TestRunRefusesOtherDoctors(t *testing.T) {
	doc := func(profile string, n int) []byte {
		var hosts []string
		for i := range n {
			hosts = append(hosts, fmt.Sprintf(`{"host": "n%d", "profile": %q, "status": "audited"}`, i, profile))
		}
		return []byte(`{"command": "doctor", "hosts": [` + strings.Join(hosts, ",") + `]}`)
	}
	o := runOptions(t, "llama-3.3-70b.json")
	o.From = []Input{{Name: "doctor.json", Bytes: doc("gpu-server", 2)}}
	if _, err := Run(context.Background(), o); err == nil || err.Error() != "--from doctor.json audited gpu-server nodes, not DGX Spark: give --platform for their platform, or a report from the Sparks" {
		t.Errorf("a GPU servers' doctor report: %v", err)
	}
	o.From = []Input{{Name: "doctor.json", Bytes: doc("dgx-spark", 2)}}
	r, err := Run(context.Background(), o)
	if err != nil || r.Plans[0].Nodes != 2 || r.Plans[0].Platform != "dgx-spark" {
		t.Errorf("two Sparks' doctor report: %v %+v", err, r)
	}
}

// TestRunReadsHFQuantConfig: a checkpoint's hf_quant_config.json beside a
// config.json without a quantization_config prices its layers as stored;
// config.json's own, where it has one, is read instead; a broken one is
// refused in one line naming the file.
func TestRunReadsHFQuantConfig(t *testing.T) {
	q, err := os.ReadFile("testdata/quant/nemotron-3-super-120b-a12b-nvfp4.hf_quant_config.json")
	if err != nil {
		t.Fatal(err)
	}
	stored := func(o Options) float64 {
		t.Helper()
		r, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range r.Plans[0].Assumed {
			if strings.Contains(n.Unit, "as the checkpoint stores them") {
				return n.Value
			}
		}
		return 0
	}
	o := runOptions(t, "nemotron-3-super-120b-a12b.json")
	if got := stored(o); got != 0 {
		t.Errorf("without hf_quant_config.json the plan names %.2f GB as stored", got)
	}
	o.QuantConfig = Input{Name: "hf_quant_config.json", Bytes: q}
	if got := stored(o); got != 74.41 {
		t.Errorf("with hf_quant_config.json: %.2f GB as stored, want 74.41", got)
	}
	own := runOptions(t, nemotronSuperNVFP4)
	own.QuantConfig = Input{Name: "hf_quant_config.json", Bytes: []byte(`{"quantization": {"quant_algo": "MIXED_PRECISION", "quantized_layers": {}}}`)}
	if got := stored(own); got != 74.41 {
		t.Errorf("config.json's own quantization_config: %.2f GB as stored, want 74.41", got)
	}
	o.QuantConfig.Bytes = []byte(`{"producer": {}}`)
	if _, err := Run(context.Background(), o); err == nil || !strings.HasPrefix(err.Error(), "hf_quant_config.json: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a config without its quantization object: %v", err)
	}
}
