package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/report"
	"github.com/sparkrig/sparkrig/internal/results"
)

// weightEnvDiffers ranks NCCL settings that differ between the processes
// of one job above the failures that follow them (a socket abort, 1.0; an
// internal or system error, 0.5 to 0.8) and a hand-set debugging variable
// (1.05), below messages that name a cause of their own (1.2 and up).
const weightEnvDiffers = 1.15

// jobWideEnv are the variables of the "Debugging" section of NCCL's
// environment documentation: how NCCL moves data (transports, protocols,
// algorithms, buffers, channels, GPUDirect), settings of the job rather
// than of a node's hardware, which the "System configuration" section
// holds (interfaces, HCAs, GID index, topology files: those may differ
// from node to node). Left out of the section: the variables that name a
// node's own address or NVLink domain (NCCL_RAS_ADDR, NCCL_MNNVL_UUID,
// NCCL_MNNVL_CLIQUE_ID). Source: NVIDIA/nccl docs/userguide/source/env.rst
// v2.30.7-1, lines 786 to the end.
var jobWideEnv = map[string]bool{
	"NCCL_P2P_DISABLE": true, "NCCL_P2P_LEVEL": true, "NCCL_P2P_DIRECT_DISABLE": true, "NCCL_SHM_DISABLE": true,
	"NCCL_BUFFSIZE": true, "NCCL_NTHREADS": true, "NCCL_MAX_NCHANNELS": true, "NCCL_MIN_NCHANNELS": true,
	"NCCL_CHECKS_DISABLE": true, "NCCL_CHECK_POINTERS": true, "NCCL_CHECK_MODE": true, "NCCL_LAUNCH_MODE": true,
	"NCCL_IB_DISABLE": true, "NCCL_IB_AR_THRESHOLD": true, "NCCL_IB_OOO_RQ": true, "NCCL_IB_QPS_PER_CONNECTION": true,
	"NCCL_IB_SPLIT_DATA_ON_QPS": true, "NCCL_IB_CUDA_SUPPORT": true, "NCCL_IB_PCI_RELAXED_ORDERING": true,
	"NCCL_IB_ADAPTIVE_ROUTING": true, "NCCL_IB_ECE_ENABLE": true, "NCCL_MEM_SYNC_DOMAIN": true, "NCCL_CUMEM_ENABLE": true,
	"NCCL_CUMEM_HOST_ENABLE": true, "NCCL_NET_GDR_LEVEL": true, "NCCL_IB_GDR_LEVEL": true, "NCCL_NET_GDR_C2C": true,
	"NCCL_NET_GDR_READ": true, "NCCL_NET_SHARED_BUFFERS": true, "NCCL_NET_SHARED_COMMS": true,
	"NCCL_IGNORE_NET_MISMATCH": true, "NCCL_IGNORE_COLLNET_MISMATCH": true, "NCCL_SINGLE_RING_THRESHOLD": true,
	"NCCL_LL_THRESHOLD": true, "NCCL_TREE_THRESHOLD": true, "NCCL_ALGO": true, "NCCL_PROTO": true, "NCCL_NVB_DISABLE": true,
	"NCCL_PXN_DISABLE": true, "NCCL_P2P_PXN_LEVEL": true, "NCCL_PXN_C2C": true, "NCCL_RUNTIME_CONNECT": true,
	"NCCL_GRAPH_REGISTER": true, "NCCL_LOCAL_REGISTER": true, "NCCL_LEGACY_CUDA_REGISTER": true, "NCCL_WIN_ENABLE": true,
	"NCCL_SET_STACK_SIZE": true, "NCCL_GRAPH_MIXING_SUPPORT": true, "NCCL_GRAPH_STREAM_ORDERING": true,
	"NCCL_DMABUF_ENABLE": true, "NCCL_P2P_NET_CHUNKSIZE": true, "NCCL_P2P_LL_THRESHOLD": true,
	"NCCL_ALLOC_P2P_NET_LL_BUFFERS": true, "NCCL_COMM_BLOCKING": true, "NCCL_CGA_CLUSTER_SIZE": true, "NCCL_MAX_CTAS": true,
	"NCCL_MIN_CTAS": true, "NCCL_NVLS_ENABLE": true, "NCCL_IB_MERGE_NICS": true, "NCCL_NET_MERGE_POLICY": true,
	"NCCL_MNNVL_ENABLE": true, "NCCL_RAS_ENABLE": true, "NCCL_RAS_TIMEOUT_FACTOR": true, "NCCL_LAUNCH_ORDER_IMPLICIT": true,
	"NCCL_LAUNCH_RACE_FATAL": true, "NCCL_IPC_USE_ABSTRACT_SOCKET": true, "NCCL_SYM_GIN_KERNELS_ENABLE": true,
}

// initReadEnv are the job-wide variables every process reads while it
// initializes its communicator, before "Init COMPLETE": a process that
// completed init and printed its other variables but not one of these ran
// without it. The rest are read later, when a connection is made or a
// buffer registered (NCCL_IB_QPS_PER_CONNECTION when the NET/IB connection
// is made, NCCL_NET_SHARED_BUFFERS, NCCL_LOCAL_REGISTER and
// NCCL_GRAPH_REGISTER per collective; with NCCL_RUNTIME_CONNECT, the
// default from 2.22, most transports connect at the first collective), so
// their absence says nothing. Source: NVIDIA/nccl v2.30.7-1, the calls of
// initTransportsRank in src/init.cc: ncclNetInit (line 475; NCCL_IB_DISABLE
// in transport/net_ib/init.cc:291), ncclTopoComputePaths (line 1143;
// NCCL_P2P_DISABLE and NCCL_P2P_LEVEL in graph/paths.cc:289, and
// NCCL_NET_GDR_LEVEL in graph/paths.cc:512 through ncclTopoCheckGdr at
// :847), ncclNvlsInit (line 1169; NCCL_NVLS_ENABLE in transport/nvls.cc:262),
// ncclTopoPostset (line 1480; NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS in
// graph/connect.cc:334-351), computeBuffSizes (line 1499; NCCL_BUFFSIZE) and
// ncclTopoTuneModel (line 1644; NCCL_PROTO and NCCL_ALGO in
// graph/tuning.cc:453-458, NCCL_NTHREADS in :247).
var initReadEnv = map[string]bool{
	"NCCL_IB_DISABLE": true, "NCCL_P2P_DISABLE": true, "NCCL_P2P_LEVEL": true, "NCCL_NET_GDR_LEVEL": true,
	"NCCL_NVLS_ENABLE": true, "NCCL_MIN_NCHANNELS": true, "NCCL_MAX_NCHANNELS": true, "NCCL_BUFFSIZE": true,
	"NCCL_PROTO": true, "NCCL_ALGO": true, "NCCL_NTHREADS": true,
}

const envDiffersSource = "NVIDIA/nccl docs/userguide/source/env.rst v2.30.7-1 (the \"Debugging\" variables, which change how NCCL moves data; the \"System configuration\" ones, which may differ per node, are not compared) and src/misc/param.cc (each process prints \"<NAME> set by environment to <value>\" once, when it first reads the variable); https://github.com/NVIDIA/nccl-tests/issues/360 and https://github.com/NVIDIA/nccl-tests/issues/350 (variables exported on the launching node only: mpirun passes only those -x names)"

// envDiffers: the processes of one job show different NCCL settings.
// For: a job-wide variable (jobWideEnv) whose values differ between the
// hosts whose processes print it; one that some processes print and another does
// not, though that one printed its other variables and finished its init
// (NCCL reads these during init, so it would have printed it); or the
// nccl-tests device lines placing ranks on hosts that printed no NCCL
// line at all while the hosts that did run with NCCL_DEBUG=INFO and a
// job-wide variable set (the launcher passed the variables to some nodes
// only). Against: a node-specific variable (interfaces, HCAs, GID index),
// a process whose lines stop before its init completed, a process that
// prints none of its variables (NCCL_DEBUG_SUBSYS without ENV), a log of
// one process, the processes of one host disagreeing among themselves
// (several runs pasted together, one with the variable and one without);
// for the hosts that printed no line, a job that shows no failure (their
// lines may be in other files: then a note).
func (a *analysis) envDiffers(o *results.NCCLOutput, hits []diagnose.ErrorHit) {
	ev := envDifferences(o.Log.ProcEnv)
	id, what := "nccl.env-differs-between-ranks", "the processes of this job run with different NCCL settings"
	if ev == "" {
		ev = envUnseenHosts(o)
		id, what = "nccl.env-not-on-every-node", "the NCCL variables reached only some nodes of this job"
		// absent lines alone (other ranks' lines often go to other files:
		// srun -o out-%t, NCCL_DEBUG_FILE) explain only a job that shows
		// a problem
		if ev != "" && len(hits) == 0 && !a.anyWarnOrFail() {
			a.note("%s, or their lines are in other files: %s", what, ev)
			return
		}
	}
	if ev == "" {
		return
	}
	sev := report.Warn
	for _, h := range hits {
		if h.Signature.Severity != "warn" {
			sev = report.Fail
			break
		}
	}
	a.cause(weightEnvDiffers, sev, id,
		what+": the two ends of a connection then choose different transports, protocols or buffer sizes, which fails in odd ways (a wrong socket type, truncated messages, collective mismatches) or runs at another speed on some ranks",
		ev,
		"start every rank with the same NCCL environment: pass each variable through the launcher (mpirun -x NCCL_NAME, srun --export=ALL, the pod spec), or set them in /etc/nccl.conf on every node; then check that every host prints the same \"set by environment\" lines",
		envDiffersSource)
}

// envDifferences says which job-wide variables differ between the
// processes that print their variables, "" when none does: the first
// three, and how many more.
func envDifferences(procs []results.NCCLProcEnv) string {
	var shown []results.NCCLProcEnv
	for _, p := range procs {
		if len(p.Env) > 0 {
			shown = append(shown, p)
		}
	}
	if len(shown) < 2 {
		return ""
	}
	var names []string
	for _, p := range shown {
		for k := range p.Env {
			if jobWideEnv[k] && !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	var parts []string
	more := 0
	for _, k := range names {
		if s := envVarDiffers(k, shown); s == "" {
			continue
		} else if len(parts) < 3 {
			parts = append(parts, s)
		} else {
			more++
		}
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}

// envVarDiffers says how variable k differs between the hosts of the
// processes, "" when it does not: its values (compared case-folded, NCCL
// reads "simple" and "Simple" alike; shown as printed), and the processes that
// finished init with their other variables shown but not k, where NCCL
// reads k during init (initReadEnv). The processes
// of one host must agree: where they do not, the paste holds several runs
// (one tried with the variable, one without) and nothing is said.
func envVarDiffers(k string, procs []results.NCCLProcEnv) string {
	const unsetValue = "\x00unset"
	var values []string
	where := map[string]string{}
	printed := map[string]string{} // the value as the first process printed it
	hostValue := map[string]string{}
	for _, p := range procs {
		v, ok := p.Env[k]
		switch {
		case ok:
			shown := strings.TrimSuffix(strings.TrimSpace(v), ".")
			v = strings.ToLower(shown)
			if _, seen := printed[v]; !seen {
				printed[v] = shown
			}
		case p.Init && initReadEnv[k]:
			v = unsetValue
		default:
			continue // its lines may stop before NCCL read k
		}
		if hv, seen := hostValue[p.Host]; seen && hv != v {
			return ""
		}
		hostValue[p.Host] = v
		if _, seen := where[v]; !seen {
			values = append(values, v)
			where[v] = p.Proc
		}
	}
	if len(values) < 2 {
		return ""
	}
	var parts []string
	for _, v := range values {
		if v == unsetValue {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s on %s", k, printed[v], where[v]))
	}
	if len(parts) == 0 {
		return ""
	}
	if u := where[unsetValue]; u != "" {
		parts = append(parts, fmt.Sprintf("not set on %s, which printed its other NCCL variables and completed init", u))
	}
	return strings.Join(parts, ", ")
}

// envUnseenHosts says which hosts the nccl-tests device lines put ranks on
// though they printed no NCCL line, while the hosts that did print show a
// job-wide variable; "" when there are none.
func envUnseenHosts(o *results.NCCLOutput) string {
	l := &o.Log
	if l.InfoLines == 0 || len(l.Hosts) == 0 {
		return ""
	}
	var set []string
	for _, p := range l.ProcEnv {
		for k, v := range p.Env {
			if s := k + "=" + strings.TrimSuffix(strings.TrimSpace(v), "."); jobWideEnv[k] && !slices.Contains(set, s) {
				set = append(set, s)
			}
		}
	}
	if len(set) == 0 {
		return ""
	}
	var unseen, seen []string
	for _, t := range o.Tables {
		for _, d := range t.Devices {
			h := d.Host
			if h == "" || slices.Contains(unseen, h) || slices.Contains(seen, h) {
				continue
			}
			if slices.Contains(l.Hosts, h) {
				seen = append(seen, h)
			} else {
				unseen = append(unseen, h)
			}
		}
	}
	if len(unseen) == 0 || len(seen) == 0 {
		return ""
	}
	slices.Sort(set)
	verb := "prints"
	if len(seen) > 1 {
		verb = "print"
	}
	return fmt.Sprintf("the nccl-tests device lines place ranks on %s, which printed no NCCL line, while %s %s NCCL's INFO lines (NCCL_DEBUG=INFO) with %s",
		listHosts(unseen), listHosts(seen), verb, strings.Join(set, ", "))
}

// anyWarnOrFail: a finding so far is a warning or a failure.
func (a *analysis) anyWarnOrFail() bool {
	for _, f := range a.res.Flags {
		if f.Severity == report.Warn || f.Severity == report.Fail {
			return true
		}
	}
	return false
}
