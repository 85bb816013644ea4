package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sparkrig/sparkrig/internal/capped"
	"github.com/sparkrig/sparkrig/internal/plan"
	"github.com/sparkrig/sparkrig/internal/render"
)

type planOptions struct {
	format       string
	weights      string
	requantize   string
	nodes        int
	platform     string
	from         []string
	input        int
	output       int
	concurrency  int
	kvDType      string
	memUtil      float64
	engine       string
	ep           bool
	prefillChunk int
	draft        int
	perStep      float64
	marlin       bool
}

// maxConfigBytes bounds a config.json: real ones are a few KiB.
const maxConfigBytes = 4 << 20

// maxQuantConfigBytes bounds an hf_quant_config.json, which may list every
// expert of every layer (a few MiB).
const maxQuantConfigBytes = 64 << 20

func newPlanCmd(env *Env) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan MODEL",
		Short: "say what a model will do on the cluster: fit, time to first token, time per token, the TP that pays",
		Long: `plan reads a model's Hugging Face config.json (MODEL is the file or its directory;
nothing is downloaded), and the hf_quant_config.json beside it where a ModelOpt checkpoint
has one (each layer priced at the format it is stored in), and answers, for tensor-parallel sizes 1, 2, 4, … up to the node
count (and a pipeline over all nodes where TP cannot use them): weights and KV cache per
node and whether they fit, time to first token, time per output token, tokens/s for one
user and at --concurrency, the speedup over the smallest layout that fits, and which term
bounds decode (memory, compute or network). It ends with vLLM and SGLang launch lines.

The cluster's numbers come from sparkrig's own JSON outputs when given with --from
(doctor and bench reports, bench gpu collective|memory|gemm --format json), else from
the platform's expected values; every number is printed with where it came from. A
measurement from another platform than the one planned for (a multi-GPU server's memory
benchmark for a DGX Spark) is refused: plan for its platform with --platform.
The planner's assumptions (bytes per weight of each format, each engine's efficiency per
weight format in decode and prefill) live in a data file with a source for each.

Exit status: 0 a layout fits, 2 nothing fits, 3 bad input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlan(cmd, env, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "text", "output format: "+strings.Join(planFormats, ", "))
	f.StringVar(&o.weights, "weights", "bf16", "weight format: bf16, fp8, int8, int4 (awq, gptq), nvfp4, mxfp4; GGUF q4_0, q4_k_m, q5_k_m, q6_k, q8_0, gguf-mxfp4")
	f.StringVar(&o.requantize, "requantize", "", "layers the serving recipe re-quantises at load, LAYERS=FORMAT (e.g. attention,lm_head=mxfp4 for --mxfp4-layers moe,qkv,o,lm_head)")
	f.IntVar(&o.nodes, "nodes", 0, "number of nodes (default: from --from, else 1)")
	f.StringVar(&o.platform, "platform", "", "platform whose expected numbers fill what --from lacks (default: from --from, else dgx-spark)")
	f.StringArrayVar(&o.from, "from", nil, "sparkrig JSON output with measured numbers (repeatable)")
	f.IntVar(&o.input, "input", 1024, "input (prompt) tokens per request")
	f.IntVar(&o.output, "output", 1024, "output tokens per request")
	f.IntVar(&o.concurrency, "concurrency", 1, "concurrent requests")
	f.StringVar(&o.kvDType, "kv-cache-dtype", "bf16", "KV-cache element type: bf16, fp16, fp8")
	f.Float64Var(&o.memUtil, "gpu-memory-utilization", 0.9, "share of each node's memory the engine may use (vLLM's flag)")
	f.StringVar(&o.engine, "engine", "vllm", "serving engine whose efficiencies apply: vllm, sglang, trtllm (TensorRT-LLM), llama.cpp, ollama")
	f.IntVar(&o.prefillChunk, "prefill-chunk", 0, "prompt tokens per prefill pass (vLLM's --max-num-batched-tokens, llama.cpp's -ub; default: the engine's)")
	f.BoolVar(&o.ep, "expert-parallel", false, "place whole experts on the tensor-parallel ranks (vLLM's --enable-expert-parallel)")
	f.IntVar(&o.draft, "mtp-draft", 0, "tokens the model's own multi-token-prediction head drafts each decode step (vLLM's --speculative-config num_speculative_tokens)")
	f.BoolVar(&o.marlin, "weight-only-experts", false, "multiply the routed experts with weight-only kernels at the 16-bit rate (vLLM's --moe-backend marlin)")
	f.Float64Var(&o.perStep, "mtp-tokens-per-step", 0, "mean tokens a drafting decode step emits, 1 to --mtp-draft + 1 (a streamed run's inter-token latency over its TPOT)")
	return cmd
}

// planFormats are the formats `sparkrig plan` writes: all render draws.
var planFormats = render.Formats

func runPlan(cmd *cobra.Command, env *Env, o *planOptions, modelArg string) error {
	var err error
	if o.format, err = checkFormat("plan", o.format, planFormats); err != nil {
		return err
	}
	opts, err := planInputs(o, modelArg)
	if err != nil {
		return exitf(ExitUnknown, "plan: %v", err)
	}
	r, err := plan.Run(cmd.Context(), opts)
	if err != nil {
		return exitf(ExitUnknown, "plan: %v", err)
	}
	r.GeneratedAt = env.Now().UTC()
	if err := writeDocument(env, r, o.format); err != nil {
		return exitf(ExitUnknown, "plan: %v", err)
	}
	return statusError(exitFor(r.Status))
}

// quantConfig reads the hf_quant_config.json beside a config.json, where
// there is one: ModelOpt checkpoints describe their layers' formats there.
func quantConfig(configPath string) (plan.Input, error) {
	if filepath.Base(configPath) != "config.json" {
		return plan.Input{}, nil
	}
	p := filepath.Join(filepath.Dir(configPath), "hf_quant_config.json")
	b, err := capped.ReadFile(p, maxQuantConfigBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return plan.Input{}, nil
	case err != nil:
		return plan.Input{}, err
	}
	return plan.Input{Name: p, Bytes: b}, nil
}

// planInputs reads the model's config and the --from files (bounded) into
// plan.Options.
func planInputs(o *planOptions, modelArg string) (plan.Options, error) {
	path := modelArg
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "config.json")
	}
	b, err := capped.ReadFile(path, maxConfigBytes)
	if err != nil {
		return plan.Options{}, err
	}
	name := filepath.Base(filepath.Dir(path))
	if filepath.Base(path) != "config.json" {
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	serve := modelArg // engines take the model's directory
	if filepath.Base(path) == "config.json" || path == modelArg {
		serve = filepath.Dir(path)
	}
	quant, err := quantConfig(path)
	if err != nil {
		return plan.Options{}, err
	}
	opts := plan.Options{Config: plan.Input{Name: path, Bytes: b}, QuantConfig: quant, ModelName: name, ModelArg: modelArg, Serve: serve,
		Weights: o.weights, Requantize: o.requantize, Nodes: o.nodes, Platform: o.platform, ToolVersion: Version,
		Workload: plan.Workload{Input: o.input, Output: o.output, Concurrency: o.concurrency, KVDType: o.kvDType,
			GPUMemUtil: o.memUtil, Engine: o.engine, ExpertParallel: o.ep, PrefillChunk: o.prefillChunk,
			Draft: o.draft, TokensPerStep: o.perStep, WeightOnlyExperts: o.marlin}}
	for _, fn := range o.from {
		fb, err := capped.ReadFile(fn, 64<<20)
		if err != nil {
			return plan.Options{}, fmt.Errorf("--from: %w", err)
		}
		opts.From = append(opts.From, plan.Input{Name: fn, Bytes: fb})
	}
	return opts, nil
}
