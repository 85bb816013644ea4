package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// weightDebugEnv ranks a hand-set debugging variable above the failures
// that follow another (a socket abort, 1.0; an unhandled CUDA error, 0.8;
// a remote error, 0.6) and below messages that name a cause of their own
// (1.1 and up).
const weightDebugEnv = 1.05

// debugEnvDefaults are variables of the "Debugging" section of NCCL's
// environment documentation that change how NCCL moves data, with the
// default value it documents ("" where it documents none: any value is
// set by hand). Left out: those with a reading of their own
// (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_IB_DISABLE, NCCL_ALGO and
// NCCL_PROTO's no-algorithm WARN) and those users set as the documented
// workaround of a known failure (NCCL_NVLS_ENABLE, NCCL_DMABUF_ENABLE,
// NCCL_CUMEM_ENABLE, the registration switches), whose defaults also
// changed between releases.
var debugEnvDefaults = map[string][]string{
	"NCCL_P2P_LEVEL":             nil,
	"NCCL_P2P_DIRECT_DISABLE":    {"0"},
	"NCCL_BUFFSIZE":              {"4194304"},
	"NCCL_NTHREADS":              {"512", "256"},
	"NCCL_MAX_NCHANNELS":         nil,
	"NCCL_MIN_NCHANNELS":         nil,
	"NCCL_CHECKS_DISABLE":        {"0"},
	"NCCL_IB_AR_THRESHOLD":       {"8192"},
	"NCCL_IB_QPS_PER_CONNECTION": {"1"},
	"NCCL_NET_SHARED_BUFFERS":    {"1"},
	"NCCL_NET_SHARED_COMMS":      {"1"},
	"NCCL_SINGLE_RING_THRESHOLD": nil,
	"NCCL_LL_THRESHOLD":          nil,
	"NCCL_TREE_THRESHOLD":        nil,
	"NCCL_PXN_DISABLE":           {"0"},
	"NCCL_P2P_PXN_LEVEL":         {"2"},
	"NCCL_RUNTIME_CONNECT":       {"1"},
	"NCCL_P2P_NET_CHUNKSIZE":     {"131072"},
	"NCCL_P2P_LL_THRESHOLD":      {"16384"},
	"NCCL_MIN_CTAS":              nil,
	"NCCL_MAX_CTAS":              nil,
	"NCCL_CGA_CLUSTER_SIZE":      nil,
}

// debugEnvSet: the lines show a debugging variable set by hand to a value
// other than its default ("NCCL_BUFFSIZE set by environment to 8388608",
// or a command line's NCCL_P2P_NET_CHUNKSIZE=524288) in a job that
// failed. NCCL's documentation says of them: use with caution, forcing a
// value keeps NCCL from choosing the best one and can break some
// functionality; not for production, and keeping them set may cause
// crashes or hangs. For: the variable and a fail-level error line.
// Against: no failure in the lines (a tuned run that works), the default
// value, a variable with its own reading (above).
func (a *analysis) debugEnvSet(o *results.NCCLOutput, hits []diagnose.ErrorHit) {
	var fail *diagnose.ErrorHit
	for i := range hits {
		if hits[i].Signature.Severity != "warn" {
			fail = &hits[i]
			break
		}
	}
	if fail == nil {
		return
	}
	var set []string
	for k, v := range o.Log.Env {
		defaults, ok := debugEnvDefaults[k]
		v = strings.TrimSuffix(strings.TrimSpace(v), ".")
		if !ok || v == "" || slices.Contains(defaults, v) {
			continue
		}
		s := k + "=" + v
		if len(defaults) > 0 {
			s += " (default " + defaults[0] + ")"
		}
		set = append(set, s)
	}
	if len(set) == 0 {
		return
	}
	slices.Sort(set)
	a.cause(weightDebugEnv, report.Fail, "nccl.debug-env-set",
		fmt.Sprintf("the job sets %s by hand, NCCL tuning %s its documentation lists for debugging only: a forced value keeps NCCL from choosing its own and can break some functionality, crash or hang; the job failed with %s set", strings.Join(set, ", "), map[bool]string{true: "variables", false: "a variable"}[len(set) > 1], map[bool]string{true: "them", false: "it"}[len(set) > 1]),
		strings.Join(set, "; ")+fmt.Sprintf("; line %d: %s", fail.Line, strings.TrimSpace(fail.First)),
		"unset "+map[bool]string{true: "them", false: "it"}[len(set) > 1]+" (the job's environment, the launcher's -x/--env, a container image, /etc/nccl.conf or ~/.nccl.conf) and run again: if the failure goes, the setting was its cause",
		"NVIDIA/nccl docs/userguide/source/env.rst v2.30.7-1 (the Debugging section: \"should be used with caution ... forcing them to a particular value will prevent NCCL from selecting the best setting automatically ... or even break some functionality\"; parameters of that section \"should not be used in production nor retained in scripts ... Keeping them set may result in sub-optimal behavior, crashes, or hangs\"; the defaults of each); https://github.com/aws/aws-k8s-tester/pull/645 (a static NCCL_P2P_NET_CHUNKSIZE failed alltoall, removing it fixed it); https://github.com/vllm-project/vllm/issues/19613 (NCCL_BUFFSIZE too large, the default fixed it)")
}
