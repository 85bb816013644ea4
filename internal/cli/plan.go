package cli

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/capped"
	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/plan"
	"github.com/sparkrig/sparkrig/internal/render"
	"github.com/sparkrig/sparkrig/internal/report"
)

type planOptions struct {
	format      string
	weights     string
	nodes       int
	platform    string
	from        []string
	input       int
	output      int
	concurrency int
	kvDType     string
	memUtil     float64
	engine      string
	ep          bool
}

// maxConfigBytes bounds a config.json: real ones are a few KiB.
const maxConfigBytes = 4 << 20

func newPlanCmd(env *Env) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan MODEL",
		Short: "say what a model will do on the cluster: fit, time to first token, time per token, the TP that pays",
		Long: `plan reads a model's Hugging Face config.json (MODEL is the file or its directory;
nothing is downloaded) and answers, for tensor-parallel sizes 1, 2, 4, … up to the node
count (and a pipeline over all nodes where TP cannot use them): weights and KV cache per
node and whether they fit, time to first token, time per output token, tokens/s for one
user and at --concurrency, the speedup over the smallest layout that fits, and which term
bounds decode (memory, compute or network). It ends with vLLM and SGLang launch lines.

The cluster's numbers come from sparkrig's own JSON outputs when given with --from
(doctor and bench reports, bench gpu collective|memory|gemm --format json), else from
the platform's expected values; every number is printed with where it came from.
The planner's assumptions (bytes per weight of each format, each engine's efficiencies,
--engine) live in a data file with a source for each.

Exit status: 0 a layout fits, 2 nothing fits, 3 bad input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlan(env, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "text", "output format: "+strings.Join(planFormats, ", "))
	f.StringVar(&o.weights, "weights", "bf16", "weight format: bf16, fp8, int8, int4 (awq, gptq), nvfp4, mxfp4, q8_0 and gguf-mxfp4 (llama.cpp GGUF)")
	f.IntVar(&o.nodes, "nodes", 0, "number of nodes (default: from --from, else 1)")
	f.StringVar(&o.platform, "platform", "", "platform whose expected numbers fill what --from lacks (default: from --from, else dgx-spark)")
	f.StringArrayVar(&o.from, "from", nil, "sparkrig JSON output with measured numbers (repeatable)")
	f.IntVar(&o.input, "input", 1024, "input (prompt) tokens per request")
	f.IntVar(&o.output, "output", 1024, "output tokens per request")
	f.IntVar(&o.concurrency, "concurrency", 1, "concurrent requests")
	f.StringVar(&o.kvDType, "kv-cache-dtype", "bf16", "KV-cache element type: bf16, fp16, fp8")
	f.Float64Var(&o.memUtil, "gpu-memory-utilization", 0.9, "share of each node's memory the engine may use (vLLM's flag)")
	f.StringVar(&o.engine, "engine", "vllm", "serving engine whose measured efficiencies apply: vllm, llama.cpp")
	f.BoolVar(&o.ep, "expert-parallel", false, "place whole experts on the tensor-parallel ranks (vLLM's --enable-expert-parallel)")
	return cmd
}

// planFormats are the formats `sparkrig plan` writes: all render draws.
var planFormats = render.Formats

func runPlan(env *Env, o *planOptions, modelArg string) error {
	var err error
	if o.format, err = checkFormat("plan", o.format, planFormats); err != nil {
		return err
	}
	a, err := plan.DefaultAssumptions()
	if err != nil {
		return exitf(ExitUnknown, "plan: %v", err)
	}
	format, err := a.Format(o.weights)
	if err != nil {
		return exitf(ExitUnknown, "plan: --weights: %v", err)
	}
	path := modelArg
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "config.json")
	}
	b, err := capped.ReadFile(path, maxConfigBytes)
	if err != nil {
		return exitf(ExitUnknown, "plan: %v", err)
	}
	name := filepath.Base(filepath.Dir(path))
	if filepath.Base(path) != "config.json" {
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	m, err := plan.ParseConfig(b, name)
	if err != nil {
		return exitf(ExitUnknown, "plan: %s: %v", path, err)
	}
	var measured plan.Measured
	for _, fn := range o.from {
		fb, err := capped.ReadFile(fn, 64<<20)
		if err != nil {
			return exitf(ExitUnknown, "plan: --from: %v", err)
		}
		if err := measured.ReadMeasured(fn, fb); err != nil {
			return exitf(ExitUnknown, "plan: --from %v", err)
		}
	}
	platform := cmp.Or(o.platform, measured.Platform, "dgx-spark")
	nodes := o.nodes
	if nodes == 0 {
		nodes = max(measured.Nodes, 1)
	}
	if nodes < 1 || nodes > 1024 {
		return exitf(ExitUnknown, "plan: --nodes %d: want 1 to 1024", nodes)
	}
	set, err := expect.Default()
	if err != nil {
		return exitf(ExitUnknown, "plan: %v", err)
	}
	c, err := plan.PlatformCluster(platform, nodes, a, set)
	if err != nil {
		return exitf(ExitUnknown, "plan: %v", err)
	}
	measured.Apply(&c)
	p, err := plan.Estimate(m, format, c, plan.Workload{Input: o.input, Output: o.output, Concurrency: o.concurrency,
		KVDType: strings.ToLower(o.kvDType), GPUMemUtil: o.memUtil, Engine: o.engine, ExpertParallel: o.ep}, a)
	if err != nil {
		return exitf(ExitUnknown, "plan: %v", err)
	}
	serve := modelArg // engines take the model's directory
	if filepath.Base(path) == "config.json" || path == modelArg {
		serve = filepath.Dir(path)
	}
	r := newDocument(env, "plan")
	r.Plans = []report.Plan{p.Report(modelArg, p.Launches(p.Recommended, serve))}
	if err := writeDocument(env, r, o.format); err != nil {
		return exitf(ExitUnknown, "plan: %v", err)
	}
	return statusError(exitFor(r.Status))
}
