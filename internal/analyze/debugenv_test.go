package analyze

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// debugEnvNonDefault is a value other than the documented default of a
// debugging variable.
func debugEnvNonDefault(r *rand.Rand, k string) string {
	switch k {
	case "NCCL_P2P_LEVEL":
		return []string{"LOC", "NVL", "PIX", "PXB", "PHB", "SYS"}[r.Intn(6)]
	case "NCCL_BUFFSIZE":
		return fmt.Sprint(1 << (23 + r.Intn(5)))
	case "NCCL_P2P_NET_CHUNKSIZE":
		return fmt.Sprint(1 << (18 + r.Intn(4)))
	case "NCCL_NTHREADS":
		return []string{"64", "128", "640"}[r.Intn(3)]
	}
	for _, v := range []string{"0", "1", "2", "4", "8", "16", "32", "524288"} {
		if !slices.Contains(debugEnvDefaults[k], v) {
			if r.Intn(3) == 0 {
				return v
			}
		}
	}
	return "3"
}

// debugEnvKeys are the debugging variables, in a fixed order.
func debugEnvKeys() []string {
	var ks []string
	for k := range debugEnvDefaults {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// envLines sets the variables the way a paste shows them: NCCL's own
// INFO line per variable ("%s set by environment to %s.", src/misc/param.cc)
// or the launcher's command line (mpirun -x, env).
func envLines(r *rand.Rand, set map[string]string) []string {
	var ks []string
	for k := range set {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	if r.Intn(2) == 0 {
		cmd := "mpirun -np 16 --bind-to none"
		for _, k := range ks {
			cmd += " -x " + k + "=" + set[k]
		}
		return []string{cmd + " ./build/alltoall_perf -b 8 -e 2G -f 2 -g 1"}
	}
	var out []string
	for _, k := range ks {
		out = append(out, ncclPrefix("node001", 0, 0)+" NCCL INFO "+k+" set by environment to "+set[k]+".")
	}
	return out
}

// genericFailure is a failure that follows another: it names no cause.
func genericFailure(r *rand.Rand, host string, rank, dev int) []string {
	p := ncclPrefix(host, rank, dev)
	switch r.Intn(4) {
	case 0:
		return []string{fmt.Sprintf("%s: Test NCCL failure alltoall.cu:62 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '", host)}
	case 1:
		return []string{p + " proxy.cc:1665 NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=3, closing connection",
			"RuntimeError: NCCL error: remote process exited or there was a network error"}
	case 2:
		return []string{p + " misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.20.1.11<40123> failed : Software caused connection abort"}
	default:
		return []string{"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5"}
	}
}

// A debugging variable set by hand to a value other than its default,
// in a job that failed with a message naming no cause of its own, ranks
// first: any variable or several, either way of showing them, any rank
// and host count and prefix. With the defaults it is not raised.
func TestDebugEnvAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(645))
	keys := debugEnvKeys()
	for _, pre := range causePrefixes(r) {
		for range 4 {
			set, def := map[string]string{}, map[string]string{}
			for _, i := range r.Perm(len(keys))[:1+r.Intn(3)] {
				k := keys[i]
				set[k] = debugEnvNonDefault(r, k)
				if d := debugEnvDefaults[k]; len(d) > 0 {
					def[k] = d[0]
				}
			}
			hosts := 1 + r.Intn(6)
			n := hosts * (1 + r.Intn(8))
			job := func(env map[string]string) string {
				lines := envLines(r, env)
				for rank := range n {
					h := rank % hosts
					lines = append(lines, startup(fmt.Sprintf("node%03d", h+1), rank, rank/hosts, h, "2.21.5")...)
				}
				bad := r.Intn(n)
				lines = append(lines, genericFailure(r, fmt.Sprintf("node%03d", bad%hosts+1), bad, bad/hosts)...)
				return prefixed(pre, lines)
			}
			if text := job(set); topCause(analyseText(text)) != "nccl.debug-env-set" {
				a := analyseText(text)
				t.Fatalf("%v, %d ranks on %d hosts, behind %q: first %q (%s)\n%s", set, n, hosts, pre, topCause(a), flagIDs(a), text)
			}
			if len(def) > 0 {
				if a := analyseText(job(def)); hasFlag(a, "nccl.debug-env-set") {
					t.Errorf("defaults %v behind %q: raised (%s)", def, pre, flagIDs(a))
				}
			}
		}
	}
}

// A tuned run that works (the variables set, no failure line), a job that
// failed with a message naming its own cause, and variables outside the
// debugging section or with readings of their own do not raise it first.
func TestDebugEnvDoesNotFire(t *testing.T) {
	r := rand.New(rand.NewSource(646))
	p := ncclPrefix("node001", 0, 0)
	healthy := append(envLines(r, map[string]string{"NCCL_MIN_NCHANNELS": "32", "NCCL_BUFFSIZE": "8388608"}),
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
		"   134217728      33554432     float     sum      -1   1483.2   90.49  169.67      0   1480.9   90.63  169.94      0",
		"# Avg bus bandwidth    : 169.8")
	if a := analyseText(prefixed("", healthy)); hasFlag(a, "nccl.debug-env-set") || alarm(a) {
		t.Errorf("a tuned run that works: %s", flagIDs(a))
	}
	named := append(envLines(r, map[string]string{"NCCL_P2P_NET_CHUNKSIZE": "524288"}),
		p+" init.cc:872 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000")
	if a := analyseText(prefixed("", named)); topCause(a) != "error.duplicate-gpu" {
		t.Errorf("a failure naming its cause: first %q (%s)", topCause(a), flagIDs(a))
	}
	for _, env := range []map[string]string{{"NCCL_SOCKET_IFNAME": "eth0"}, {"NCCL_IB_HCA": "mlx5_0"}, {"NCCL_DEBUG": "INFO"}, {"NCCL_NVLS_ENABLE": "0"}, {"NCCL_IB_DISABLE": "0"}} {
		lines := append(envLines(r, env), genericFailure(r, "node001", 0, 0)...)
		if a := analyseText(prefixed("", lines)); hasFlag(a, "nccl.debug-env-set") {
			t.Errorf("%v: raised (%s)", env, flagIDs(a))
		}
	}
}

// No fixture raises it.
func TestDebugEnvNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"nccl.debug-env-set"}, nil)
}
