package analyze

import (
	"fmt"
	mrand "math/rand"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
)

// envJob writes the INFO lines of a job of hosts x procs processes: each
// prints its bootstrap line, its node-specific variables (an interface and
// an HCA of its own), the variables vars(host, proc) gives and, where
// init(host, proc), an "Init COMPLETE" line.
func envJob(r *rand.Rand, hosts, procs int, vars func(h, p int) map[string]string, init func(h, p int) bool) string {
	var b strings.Builder
	nranks := hosts * procs
	for h := range hosts {
		for p := range procs {
			head := fmt.Sprintf("node%02d:%d:%d [%d]", h, 1000+h*100+p, 2000+h*100+p, p)
			fmt.Fprintf(&b, "%s NCCL INFO Bootstrap : Using eth%d:10.0.%d.%d<0>\n", head, h%2, h, 10+p)
			fmt.Fprintf(&b, "%s NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth%d\n", head, h%2)
			fmt.Fprintf(&b, "%s NCCL INFO NCCL_IB_HCA set by environment to mlx5_%d\n", head, r.IntN(4))
			for k, v := range vars(h, p) {
				fmt.Fprintf(&b, "%s NCCL INFO %s set by environment to %s\n", head, k, v)
			}
			if init(h, p) {
				fmt.Fprintf(&b, "%s NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d busId %d000 commId 0x5be1 - Init COMPLETE\n", head, 0x55d0c0+h*16+p, h*procs+p, nranks, p, p+1)
			}
		}
	}
	return b.String()
}

func always(int, int) bool { return true }

// A job-wide variable whose value differs between the hosts of a job, or
// that one host's processes lack though they printed their other
// variables and completed init, is named on any number of hosts and
// processes, behind any prefix; first with a failure the difference
// explains. The node-specific variables differing, the same value
// everywhere, and a process without it that did not complete init or
// printed no variable at all raise nothing.
// envPrefixes are the prefixes the process rules are checked behind:
// every real one, none and a few random ones (some end in ":" right before
// the host); torchPrefixes adds torchrun's "[default0]:" of its --tee
// output, which runs no nccl-tests.
var (
	envPrefixes   = causePrefixes(mrand.New(mrand.NewSource(190)))
	torchPrefixes = append(append([]string{}, envPrefixes...), "[default0]:", "[default3]:")
)

func checkEnvFlag(t *testing.T, pres []string, paste, id string, fire bool) {
	t.Helper()
	for _, pre := range pres {
		if got := hasFlag(analyseText(behind(pre, paste)), id); got != fire {
			t.Errorf("%q behind %q: %s fired %v, want %v", paste, pre, id, got, fire)
		}
	}
}

func checkEnvFirst(t *testing.T, pres []string, paste, id string) {
	t.Helper()
	for _, pre := range pres {
		a := analyseText(behind(pre, paste))
		if got := topCause(a); got != id {
			t.Errorf("%q behind %q: first %q, want %s (%+v)", paste, pre, got, id, a.Flags)
		}
	}
}

func TestEnvDiffersBetweenRanks(t *testing.T) {
	r := rand.New(rand.NewPCG(190, 214))
	jobVars := [][3]string{{"NCCL_IB_DISABLE", "1", "0"}, {"NCCL_PROTO", "Simple", "LL128"}, {"NCCL_BUFFSIZE", "8388608", "4194304"}, {"NCCL_NET_GDR_LEVEL", "SYS", "PHB"}, {"NCCL_ALGO", "Ring", "Tree"}}
	const truncated = "node00:1000:2000 [0] NCCL WARN NET/Socket : peer 10.0.1.10<43210> message truncated : receiving 1048576 bytes instead of 65536\n"
	for range 12 {
		hosts, procs := 2+r.IntN(5), 1+r.IntN(4)
		jv := jobVars[r.IntN(len(jobVars))]
		odd := r.IntN(hosts)
		differ := envJob(r, hosts, procs, func(h, _ int) map[string]string {
			if h == odd {
				return map[string]string{jv[0]: jv[2]}
			}
			return map[string]string{jv[0]: jv[1]}
		}, always)
		checkEnvFlag(t, torchPrefixes, differ, "nccl.env-differs-between-ranks", true)
		checkEnvFirst(t, torchPrefixes, differ+truncated, "nccl.env-differs-between-ranks")
		// set on every host but one, whose processes print their other
		// variables and complete init
		missing := envJob(r, hosts, procs, func(h, _ int) map[string]string {
			if h == odd {
				return nil
			}
			return map[string]string{jv[0]: jv[1]}
		}, always)
		checkEnvFlag(t, torchPrefixes, missing, "nccl.env-differs-between-ranks", true)
		// the same: nothing
		same := envJob(r, hosts, procs, func(int, int) map[string]string { return map[string]string{jv[0]: jv[1]} }, always)
		checkEnvFlag(t, torchPrefixes, same, "nccl.env-differs-between-ranks", false)
		checkEnvFlag(t, torchPrefixes, same, "nccl.env-not-on-every-node", false)
		// the host without it stops before its init completed
		cut := envJob(r, hosts, procs, func(h, _ int) map[string]string {
			if h == odd {
				return nil
			}
			return map[string]string{jv[0]: jv[1]}
		}, func(h, _ int) bool { return h != odd })
		checkEnvFlag(t, torchPrefixes, cut, "nccl.env-differs-between-ranks", false)
		// two runs on the same hosts pasted one after the other, the
		// second with the variable changed: each host disagrees with itself
		second := strings.NewReplacer(":1", ":7", ":2", ":8").Replace(envJob(r, hosts, procs, func(int, int) map[string]string { return map[string]string{jv[0]: jv[2]} }, always))
		checkEnvFlag(t, torchPrefixes, same+second, "nccl.env-differs-between-ranks", false)
	}
	// a variable NCCL reads after init (at connect time, per collective)
	// set on every host but one, whose processes completed init: they
	// may not have read it yet, so nothing is said
	for _, k := range []string{"NCCL_IB_QPS_PER_CONNECTION", "NCCL_NET_SHARED_BUFFERS", "NCCL_LOCAL_REGISTER", "NCCL_GRAPH_REGISTER"} {
		hosts, procs := 2+r.IntN(5), 1+r.IntN(4)
		odd := r.IntN(hosts)
		late := envJob(r, hosts, procs, func(h, _ int) map[string]string {
			if h == odd {
				return nil
			}
			return map[string]string{k: "1"}
		}, always)
		checkEnvFlag(t, torchPrefixes, late, "nccl.env-differs-between-ranks", false)
		// both sides printed it, with other values: named
		both := envJob(r, hosts, procs, func(h, _ int) map[string]string {
			if h == odd {
				return map[string]string{k: "0"}
			}
			return map[string]string{k: "1"}
		}, always)
		checkEnvFlag(t, torchPrefixes, both, "nccl.env-differs-between-ranks", true)
	}
	// a process that prints no variable (NCCL_DEBUG_SUBSYS without ENV)
	quiet := envJob(r, 1, 2, func(int, int) map[string]string { return map[string]string{"NCCL_PROTO": "Simple"} }, always) +
		"node09:9000:9001 [0] NCCL INFO comm 0x55d0 rank 2 nranks 3 cudaDev 0 busId 1000 commId 0x5be1 - Init COMPLETE\n"
	checkEnvFlag(t, torchPrefixes, quiet, "nccl.env-differs-between-ranks", false)
}

// The real paste of a rank 0 log whose remote rank printed nothing
// (field case 214: NCCL_NET_GDR_LEVEL exported on the launching node
// only) names the variables reaching only some nodes, whichever hosts and
// however many remote ranks the device lines name, behind any prefix. The
// same paste with the remote host's lines present, or without the
// job-wide variable (NCCL_DEBUG alone not forwarded), raises nothing.
func TestEnvNotOnEveryNode(t *testing.T) {
	data, err := os.ReadFile("testdata/field/train/214_gather_perf_large_size_dropoff_gdr_level_not_forwarded.txt")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if v := fixture.Verbatim(data); v != nil {
		text = string(v)
	}
	const remote = "#  Rank  1 Group  0 Pid  34424 on       n014 device  0 [0000:81:00] NVIDIA A100-PCIE-40GB\n"
	if !strings.Contains(text, remote) {
		t.Fatal("fixture changed")
	}
	r := rand.New(rand.NewPCG(350, 214))
	for range 6 {
		local, far := fmt.Sprintf("gpu-a%d", r.IntN(100)), fmt.Sprintf("gpu-b%d", r.IntN(100))
		var more strings.Builder
		for k := range 1 + r.IntN(6) {
			fmt.Fprintf(&more, "#  Rank %2d Group  0 Pid %6d on %10s device  0 [0000:81:00] NVIDIA A100-PCIE-40GB\n", k+1, 30000+k, fmt.Sprintf("%s-%d", far, k))
		}
		paste := strings.ReplaceAll(strings.Replace(text, remote, more.String(), 1), "n013", local)
		// absent lines alone are a note (the other ranks' lines may be in
		// other files); beside a failure they are a cause
		checkEnvFlag(t, envPrefixes, paste, "nccl.env-not-on-every-node", false)
		for _, pre := range envPrefixes {
			if a := analyseText(behind(pre, paste)); !strings.Contains(strings.Join(a.Notes, "\n"), "reached only some nodes") {
				t.Errorf("behind %q: no note on the variables: %q", pre, a.Notes)
			}
		}
		failed := paste + local + ":101855:101885 [0] NCCL WARN NET/Socket : peer 10.0.1.10<43210> message truncated : receiving 1048576 bytes instead of 65536\n"
		checkEnvFlag(t, envPrefixes, failed, "nccl.env-not-on-every-node", true)
		// the remote host printed its lines too
		one := strings.ReplaceAll(strings.ReplaceAll(text, "n014", far), "n013", local)
		var echo strings.Builder
		for _, l := range strings.SplitAfter(one, "\n") {
			if strings.HasPrefix(l, local+":") {
				echo.WriteString(strings.Replace(l, local+":", far+":", 1))
			}
		}
		checkEnvFlag(t, envPrefixes, one+local+":101855:101885 [0] NCCL WARN NET/Socket : peer 10.0.1.10<43210> message truncated : receiving 1048576 bytes instead of 65536\n", "nccl.env-not-on-every-node", true)
		checkEnvFlag(t, envPrefixes, one+echo.String(), "nccl.env-not-on-every-node", false)
		// NCCL_DEBUG alone reached only the launching node
		checkEnvFlag(t, envPrefixes, strings.ReplaceAll(paste, "NCCL_NET_GDR_LEVEL set by environment to SYS", "NCCL_SOCKET_IFNAME set by environment to ibp209s0f0"), "nccl.env-not-on-every-node", false)
	}
}

// The evidence shows each value as NCCL printed it (values that differ
// only in case are one: NCCL reads "simple" as "Simple"), and says how
// many differences it leaves out after the first three, on any number of
// hosts and differing variables.
func TestEnvDiffersEvidence(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 135))
	vars := [][3]string{{"NCCL_PROTO", "Simple", "LL128"}, {"NCCL_ALGO", "Ring", "Tree"}, {"NCCL_BUFFSIZE", "8388608", "4194304"},
		{"NCCL_IB_DISABLE", "1", "0"}, {"NCCL_NTHREADS", "256", "512"}, {"NCCL_MAX_NCHANNELS", "8", "16"}}
	for range 8 {
		hosts, procs := 2+r.IntN(4), 1+r.IntN(3)
		n := 1 + r.IntN(len(vars))
		odd := r.IntN(hosts)
		job := envJob(r, hosts, procs, func(h, _ int) map[string]string {
			m := map[string]string{}
			for _, v := range vars[:n] {
				if h == odd {
					m[v[0]] = v[2]
				} else {
					m[v[0]] = v[1]
				}
			}
			// the same value in another case is no difference
			m["NCCL_CUMEM_ENABLE"] = []string{"Enabled", "ENABLED"}[h%2]
			return m
		}, always)
		for _, pre := range torchPrefixes {
			f := flagOf(analyseText(behind(pre, job)), "nccl.env-differs-between-ranks")
			if f == nil {
				t.Fatalf("%q: no flag", pre)
			}
			if strings.Contains(f.Evidence, "NCCL_CUMEM_ENABLE") {
				t.Errorf("case-only difference named: %s", f.Evidence)
			}
			if n >= 2 && !strings.Contains(f.Evidence, "NCCL_ALGO=Ring") && !strings.Contains(f.Evidence, "NCCL_ALGO=Tree") {
				t.Errorf("printed value not shown: %s", f.Evidence)
			}
			if more := fmt.Sprintf("and %d more", n-3); (n > 3) != strings.Contains(f.Evidence, more) {
				t.Errorf("%d differences: %s", n, f.Evidence)
			}
		}
	}
}
