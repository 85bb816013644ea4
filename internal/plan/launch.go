package plan

import (
	"fmt"

	"github.com/sparkrig/sparkrig/internal/shell"
)

// Launch is a recommended command line for a serving engine.
type Launch struct {
	Engine string   `json:"engine"`
	Lines  []string `json:"lines"`
}

// ClusterEnv is where `sparkrig fix` writes the NCCL, UCX and Gloo settings
// the cluster model derives; launch lines source it on every node.
const ClusterEnv = "/etc/sparkrig/cluster.env"

// Launches gives vLLM and SGLang command lines for option i of the plan.
// model is what the user named (a directory or a Hugging Face id).
func (p *Plan) Launches(i int, model string) []Launch {
	if i < 0 || i >= len(p.Options) {
		return nil
	}
	o := p.Options[i]
	w := p.Workload
	nodes := o.TP * o.PP
	ctx := w.Input + w.Output
	q := shell.QuoteIfNeeded(model)
	vllm := []string{}
	if nodes > 1 {
		vllm = append(vllm,
			"# every node: [ -r "+ClusterEnv+" ] && { set -a; . "+ClusterEnv+"; set +a; }",
			"#   (sparkrig fix --apply writes it where a node needs a change; the",
			"#   environment it holds is the one sparkrig fix --plan and bench --dry-run print)",
			"# node 1:      ray start --head --port 6379",
			"# nodes 2..:   ray start --address <node-1-address>:6379")
	}
	args := []string{fmt.Sprintf("--tensor-parallel-size %d", o.TP), fmt.Sprintf("--pipeline-parallel-size %d", o.PP),
		fmt.Sprintf("--max-model-len %d", ctx), fmt.Sprintf("--max-num-seqs %d", w.Concurrency),
		fmt.Sprintf("--gpu-memory-utilization %.2f", w.GPUMemUtil)}
	if w.KVDType == "fp8" || w.KVDType == "fp8_e4m3" {
		args = append(args, "--kv-cache-dtype fp8")
	}
	ep := w.ExpertParallel && o.TP > 1 && p.Model.Experts > 0
	if ep {
		args = append(args, "--enable-expert-parallel")
	}
	if w.WeightOnlyExperts && p.Model.Experts > 0 {
		args = append(args, "--moe-backend marlin")
	}
	if w.Draft > 0 {
		args = append(args, fmt.Sprintf(`--speculative-config '{"method": "mtp", "num_speculative_tokens": %d}'`, w.Draft))
	}
	if nodes > 1 {
		args = append(args, "--distributed-executor-backend ray")
	}
	vllm = append(vllm, continued("vllm serve "+q, args)...)
	out := []Launch{{Engine: "vllm", Lines: vllm}}
	if o.PP == 1 {
		var sg []string
		args := []string{fmt.Sprintf("--tp %d", o.TP), fmt.Sprintf("--context-length %d", ctx),
			fmt.Sprintf("--max-running-requests %d", w.Concurrency), fmt.Sprintf("--mem-fraction-static %.2f", w.GPUMemUtil)}
		if w.KVDType == "fp8" || w.KVDType == "fp8_e4m3" {
			args = append(args, "--kv-cache-dtype fp8_e4m3")
		}
		if ep {
			args = append(args, fmt.Sprintf("--ep-size %d", o.TP))
		}
		if w.Draft > 0 {
			// The model's own prediction head, one draft chain of w.Draft
			// tokens (SGLang's NEXTN speculative algorithm).
			args = append(args, fmt.Sprintf("--speculative-algorithm NEXTN --speculative-num-steps %d", w.Draft),
				fmt.Sprintf("--speculative-eagle-topk 1 --speculative-num-draft-tokens %d", w.Draft+1))
		}
		if nodes > 1 {
			sg = append(sg, "# every node: set -a; . "+ClusterEnv+"; set +a; then on node k (0-based):")
			args = append(args, fmt.Sprintf("--nnodes %d --node-rank <k>", nodes), "--dist-init-addr <node-1-address>:20000")
		}
		out = append(out, Launch{Engine: "sglang", Lines: append(sg, continued("python3 -m sglang.launch_server --model-path "+q, args)...)})
	}
	return out
}

// continued writes a command one argument group per line, joined by
// backslash continuations, so it fits a terminal and still pastes as one
// command.
func continued(head string, args []string) []string {
	out := []string{head + " \\"}
	for i, a := range args {
		if i == len(args)-1 {
			out = append(out, "    "+a)
			break
		}
		out = append(out, "    "+a+" \\")
	}
	return out
}
