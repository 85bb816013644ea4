package results

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// rasJob is a generated communicator: every rank's launched count of one
// collective, where it runs, and which ranks are missing.
type rasJob struct {
	version string // "2.24.3", "2.26.2", "2.28.9", "2.30.7"
	hash    uint64
	op      string
	counts  []int64 // by rank
	missing []bool  // by rank
	verbose bool
	order   []int // the order ranks are listed in (JSON)
}

func (j rasJob) host(r int) string { return fmt.Sprintf("10.0.%d.%d", r/8, 10+r/4) }
func (j rasJob) pid(r int) int     { return 4000 + 7*r }
func (j rasJob) gpu(r int) int     { return r % 4 }
func (j rasJob) nvml(r int) int {
	if r%5 == 3 {
		return r%4 + 4 // CUDA_VISIBLE_DEVICES reordered: "GPU 3 (NVML 7)"
	}
	return r % 4
}

// gpuString is rasGpuToString (client_support.cc:2046).
func (j rasJob) gpuString(r int) string {
	if j.gpu(r) != j.nvml(r) {
		return fmt.Sprintf("%d (NVML %d)", j.gpu(r), j.nvml(r))
	}
	return fmt.Sprintf("%d", j.gpu(r))
}

func (j rasJob) tail(r int) string {
	return fmt.Sprintf("-- GPU %s managed by process %d on node %s", j.gpuString(r), j.pid(r), j.host(r))
}

// outlier is rasCountIsOutlier (client_support.cc:2169).
func outlier(count int, verbose bool, total int) bool {
	if count == 1 {
		return true
	}
	if verbose {
		return float64(count) < float64(total)*0.5
	}
	return count <= 10 && float64(count) <= float64(total)*0.25
}

// text renders the answer as rasClientRunComms does (client_support.cc
// :1206-1660 at v2.30.7-1; v2.24.3-1 :1300-1380 for 2.24).
func (j rasJob) text() string {
	n := len(j.counts)
	var b strings.Builder
	fmt.Fprintf(&b, "NCCL version %s compiled with CUDA 13.0\nCUDA runtime version 13000, driver version 13000\n\n", j.version)
	b.WriteString("Job summary\n===========\n\n  Nodes  Processes         GPUs  Processes     GPUs\n(total)   per node  per process    (total)  (total)\n")
	fmt.Fprintf(&b, "%7d  %9d  %11d  %9d  %7d\n\n", (n+7)/8, min(n, 8), 1, n, n)
	b.WriteString("Communicators... (0.001s)\n=============\n\n")
	b.WriteString("Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n    #  in group  per comm  per node  per comm  in group\n")
	var present []int
	nMissing := 0
	for r := range n {
		if j.missing[r] {
			nMissing++
		} else {
			present = append(present, r)
		}
	}
	vals := map[int64][]int{}
	for _, r := range present {
		vals[j.counts[r]] = append(vals[j.counts[r]], r)
	}
	errs := []string{}
	if nMissing > 0 {
		errs = append(errs, "INCOMPLETE")
	}
	if len(vals) > 1 {
		errs = append(errs, "MISMATCH")
	}
	e := "OK"
	if len(errs) > 0 {
		e = strings.Join(errs, ",")
	}
	fmt.Fprintf(&b, "%5d  %8d  %8d  %8s  %8d  %8d  %8s  %6s\n", 0, 1, (n+7)/8, "1-8", n, len(present), "RUNNING", e)
	b.WriteString("\nErrors\n======\n\n")
	if nMissing > 0 {
		s := ""
		if nMissing > 1 {
			s = "es"
		}
		fmt.Fprintf(&b, "INCOMPLETE\n  Missing communicator data from %d job process%s\n", nMissing, s)
		if outlier(nMissing, j.verbose, -1) {
			for r := range n {
				if j.missing[r] {
					fmt.Fprintf(&b, "  Process %d on node %s managing GPU %s\n", j.pid(r), j.host(r), j.gpuString(r))
				}
			}
		}
		b.WriteString("\n")
		s = ""
		if nMissing > 1 {
			s = "s"
		}
		fmt.Fprintf(&b, "#0-0 (%016x) INCOMPLETE\n  Missing communicator data from %d rank%s\n", j.hash, nMissing, s)
		if outlier(nMissing, j.verbose, -1) {
			for r := range n {
				if j.missing[r] {
					fmt.Fprintf(&b, "  Rank %d -- GPU %s managed by process %d on node %s\n", r, j.gpuString(r), j.pid(r), j.host(r))
				}
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("Warnings\n========\n\n")
	if len(vals) > 1 {
		fmt.Fprintf(&b, "#0-0 (%016x) MISMATCH\n", j.hash)
		if j.version == "2.24.3" {
			b.WriteString("  Communicator ranks have different collective operation counts\n")
		} else {
			fmt.Fprintf(&b, "  Communicator ranks have different %s operation counts\n", j.op)
		}
		type vc struct {
			val   int64
			ranks []int
		}
		var groups []vc
		for v, rs := range vals {
			sort.Ints(rs)
			groups = append(groups, vc{v, rs})
		}
		// rasValCountsCompareRev: most frequent first, then the highest count
		sort.Slice(groups, func(a, c int) bool {
			if len(groups[a].ranks) != len(groups[c].ranks) {
				return len(groups[a].ranks) > len(groups[c].ranks)
			}
			return groups[a].val > groups[c].val
		})
		for _, g := range groups {
			none := g.val == 0 && j.version != "2.24.3"
			if len(g.ranks) > 1 {
				if none {
					fmt.Fprintf(&b, "  %d ranks have not launched any operations\n", len(g.ranks))
				} else {
					fmt.Fprintf(&b, "  %d ranks have launched up to operation %d\n", len(g.ranks), g.val)
				}
			}
			if !outlier(len(g.ranks), j.verbose, n) {
				continue
			}
			for _, r := range g.ranks {
				switch {
				case len(g.ranks) > 1:
					fmt.Fprintf(&b, "  Rank %d %s\n", r, j.tail(r))
				case none:
					fmt.Fprintf(&b, "  Rank %d has not launched any operations %s\n", r, j.tail(r))
				default:
					fmt.Fprintf(&b, "  Rank %d has launched up to operation %d %s\n", r, g.val, j.tail(r))
				}
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// json renders the answer as rasDumpCommsToJSON does (client_support.cc
// :1919-2020 at v2.30.7-1; 2.28.x without the comma after a missing
// rank's nvml_dev, v2.28.9-1 :1963), ranks in j.order.
func (j rasJob) json() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"nccl_version\": \"%s\",\n  \"cuda_runtime_version\": 13000,\n  \"cuda_driver_version\": 13000,\n", j.version)
	b.WriteString("  \"timestamp\": \"2026-11-28 00:30:00\",\n  \"communicators_count\": 1,\n  \"communicators\": [\n")
	var present, missing []int
	for _, r := range j.order {
		if j.missing[r] {
			missing = append(missing, r)
		} else {
			present = append(present, r)
		}
	}
	fmt.Fprintf(&b, "    {\n      \"hash\": \"0x%x\",\n      \"secondary_hash\": \"0x1:0x2\",\n      \"size\": %d,\n      \"ranks_count\": %d,\n      \"missing_ranks_count\": %d,\n      \"ranks\": [\n",
		j.hash, len(j.counts), len(present), len(missing))
	ops := []string{"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"}
	for i, r := range present {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "        {\n          \"rank\": %d,\n          \"host\": \"%s\",\n          \"pid\": %d,\n          \"cuda_dev\": %d,\n          \"nvml_dev\": %d,\n",
			r, j.host(r), j.pid(r), j.gpu(r), j.nvml(r))
		b.WriteString("          \"status\": {\n            \"init_state\": 0,\n            \"async_error\": 0,\n            \"finalize_called\": false,\n            \"destroy_flag\": false,\n            \"abort_flag\": false\n          },\n")
		b.WriteString("          \"collective_counts\": {\n")
		for k, op := range ops {
			v := int64(3)
			if op == j.op {
				v = j.counts[r]
			}
			fmt.Fprintf(&b, "            \"%s\": %d", op, v)
			if k < len(ops)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("          }\n        }")
	}
	b.WriteString("\n      ],\n      \"missing_ranks\": [\n")
	comma := ","
	if strings.HasPrefix(j.version, "2.28.") {
		comma = ""
	}
	for i, r := range missing {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "        {\n          \"rank\": %d,\n          \"host\": \"%s\",\n          \"pid\": %d,\n          \"cuda_dev\": %d,\n          \"nvml_dev\": %d%s\n",
			r, j.host(r), j.pid(r), j.gpu(r), j.nvml(r), comma)
		b.WriteString("          \"status\": {\n            \"unresponsive\": true,\n            \"considered_dead\": false\n          }\n        }")
	}
	b.WriteString("\n      ]\n    }\n  ],\n  \"ras\": {\n    \"collection_time_sec\": 0.004,\n    \"timeouts_count\": 0\n  }\n}\n")
	return b.String()
}

// genJob draws a communicator of 2..64 ranks where a few ranks (maybe none)
// are behind the others, maybe one missing.
func genJob(rng *rand.Rand) (j rasJob, behind []int) {
	n := 2 + rng.IntN(63)
	versions := []string{"2.24.3", "2.26.2", "2.28.9", "2.30.7"}
	ops := []string{"AllReduce", "AllGather", "Broadcast", "ReduceScatter"}
	j = rasJob{version: versions[rng.IntN(len(versions))], hash: rng.Uint64(), op: ops[rng.IntN(len(ops))],
		counts: make([]int64, n), missing: make([]bool, n), verbose: rng.IntN(2) == 0, order: rng.Perm(n)}
	ahead := int64(rng.IntN(5000))
	for r := range n {
		j.counts[r] = ahead
	}
	switch rng.IntN(4) {
	case 0: // healthy: all equal
	case 1, 2: // one rank behind
		l := rng.IntN(n)
		j.counts[l] = ahead - 1 - int64(rng.IntN(int(ahead)+1))
		if j.counts[l] < 0 {
			j.counts[l] = 0
		}
		if j.counts[l] != ahead {
			behind = []int{l}
		}
	case 3: // several ranks behind, at one count, fewer than the rest
		k := 1 + rng.IntN(max(1, (n-1)/2))
		low := max(0, ahead-1-int64(rng.IntN(3)))
		if low == ahead {
			break
		}
		for _, r := range rng.Perm(n)[:k] {
			j.counts[r] = low
			behind = append(behind, r)
		}
		sort.Ints(behind)
	}
	return j, behind
}

// TestRASBehindProperty: whatever the rank count, the listing order, the
// format or the version, the ranks behind are those with the lowest count;
// a job whose ranks agree names nobody.
func TestRASBehindProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 2026))
	for i := range 600 {
		j, want := genJob(rng)
		for _, format := range []string{"text", "json"} {
			if format == "json" && j.version < "2.28" {
				continue // SET FORMAT json from 2.28.7
			}
			in := j.text()
			if format == "json" {
				in = j.json()
			}
			r, err := ParseRASAnswer([]byte(in))
			if err != nil {
				t.Fatalf("case %d %s: %v\n%s", i, format, err, in)
			}
			if r.Format != format || r.Version != j.version || len(r.Comms) != boolInt(format == "json" || len(want) > 0) {
				t.Fatalf("case %d %s: format %q version %q comms %d\n%s", i, format, r.Format, r.Version, len(r.Comms), in)
			}
			got := r.Behind()
			if len(want) == 0 {
				if len(got) != 0 {
					t.Fatalf("case %d %s: healthy job names %+v\n%s", i, format, got, in)
				}
				continue
			}
			if len(got) != 1 {
				t.Fatalf("case %d %s: behind %+v, want ranks %v\n%s", i, format, got, want, in)
			}
			b := got[0]
			wantOp := j.op
			if format == "text" && j.version == "2.24.3" {
				wantOp = ""
			}
			if b.Count != len(want) || b.Launched != j.counts[want[0]] || b.Op != wantOp || b.Comm != fmt.Sprintf("0x%016x", j.hash) {
				t.Fatalf("case %d %s: %+v, want %d ranks at %d of %s\n%s", i, format, b, len(want), j.counts[want[0]], wantOp, in)
			}
			// text names a group's ranks only where NCCL calls it an outlier
			named := format == "json" || outlier(len(want), j.verbose, len(j.counts))
			if b.Named() != named {
				t.Fatalf("case %d %s: named %v, want %v (%d of %d, verbose %v)", i, format, b.Named(), named, len(want), len(j.counts), j.verbose)
			}
			if !named {
				continue
			}
			var ranks []int
			for _, rk := range b.Ranks {
				ranks = append(ranks, rk.Rank)
				if rk.PID != j.pid(rk.Rank) || rk.Host != j.host(rk.Rank) || rk.GPU != j.gpu(rk.Rank) || rk.NVMLGPU != j.nvml(rk.Rank) {
					t.Fatalf("case %d %s: rank %+v", i, format, rk)
				}
			}
			if !slices.Equal(ranks, want) {
				t.Fatalf("case %d %s: behind %v, want %v\n%s", i, format, ranks, want, in)
			}
		}
	}
}

// TestRASMissingProperty: a missing rank is named with its pid and node,
// in text and JSON (2.28's JSON without its comma included).
func TestRASMissingProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 28))
	for i := range 300 {
		j, _ := genJob(rng)
		m := rng.IntN(len(j.counts))
		j.missing[m] = true
		for _, format := range []string{"text", "json"} {
			if format == "json" && j.version < "2.28" {
				continue
			}
			in := j.text()
			if format == "json" {
				in = j.json()
			}
			r, err := ParseRASAnswer([]byte(in))
			if err != nil {
				t.Fatalf("case %d %s: %v", i, format, err)
			}
			if len(r.Comms) != 1 || len(r.Comms[0].Missing) != 1 {
				t.Fatalf("case %d %s: comms %+v\n%s", i, format, r.Comms, in)
			}
			got := r.Comms[0].Missing[0]
			if got.Rank != m || got.PID != j.pid(m) || got.Host != j.host(m) || !got.Unresponsive {
				t.Fatalf("case %d %s: missing %+v, want rank %d pid %d on %s", i, format, got, m, j.pid(m), j.host(m))
			}
			if format == "text" && (len(r.MissingProcesses) != 1 || r.MissingProcesses[0].PID != j.pid(m) || r.MissingProcesses[0].Host != j.host(m)) {
				t.Fatalf("case %d: processes %+v", i, r.MissingProcesses)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
