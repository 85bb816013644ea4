package plan

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/sparkrig/sparkrig/internal/platform"
	"github.com/sparkrig/sparkrig/internal/results"
)

// sparkMemoryPeak is the rated peak bench gpu memory attaches to a DGX
// Spark's copies (internal/expect: spark-lpddr5x's name); only a Spark's
// rows carry it.
const sparkMemoryPeak = "GB10 LPDDR5X unified memory"

// Measured is what sparkrig's own JSON outputs say about the cluster. Zero
// fields were not in the inputs and fall back to the platform's numbers.
type Measured struct {
	Platform        string
	Nodes           int
	MemoryBandwidth Number
	BF16TFLOPS      Number
	AllReduceBusBW  Number
	Latency         Number
	LatencyBytes    int64
	// Origins say where each input was measured, as far as it tells.
	Origins []Origin
}

// Origin is what one input says of the machine it was measured on.
type Origin struct {
	File string
	// Platform is the platform the input names (a GPU's name, a rated peak
	// only one platform carries); "" where it names none.
	Platform string
	// Devices is how many GPUs of one host it measured (memory copies).
	Devices int
	// BandwidthGBs is the memory bandwidth it measured, 0 where none.
	BandwidthGBs float64
	// NotSpark says what the input audited where that is no DGX Spark
	// and no platform sparkrig has numbers for ("gpu-server nodes").
	NotSpark string
}

// ReadMeasured adds one sparkrig JSON output (a doctor report, a bench run,
// `bench gpu collective|memory|gemm --format json`) to m. name is used in the
// numbers' sources.
func (m *Measured) ReadMeasured(name string, b []byte) error {
	var probe any
	if err := json.Unmarshal(b, &probe); err != nil {
		return fmt.Errorf("%s: not JSON (%v)", name, err)
	}
	switch v := probe.(type) {
	case []any:
		if len(v) == 0 {
			return fmt.Errorf("%s: an empty list", name)
		}
		first, _ := v[0].(map[string]any)
		switch {
		case first["collective"] != nil:
			var tables []results.NCCLTable
			if err := json.Unmarshal(b, &tables); err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			return m.collectives(name, tables)
		case first["gbs"] != nil:
			return m.memory(name, b)
		}
	case map[string]any:
		switch {
		case v["tflops"] != nil:
			return m.gemm(name, b)
		case v["bench"] != nil:
			return m.benchRecord(name, b)
		case v["command"] == "bench gpu collective":
			var doc struct {
				GPU struct {
					Collectives []results.NCCLTable `json:"collectives"`
				} `json:"gpu"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			return m.collectives(name, doc.GPU.Collectives)
		case v["command"] == "bench gpu gemm":
			var doc struct {
				GPU struct {
					GEMM []json.RawMessage `json:"gemm"`
				} `json:"gpu"`
			}
			if err := json.Unmarshal(b, &doc); err != nil || len(doc.GPU.GEMM) == 0 {
				return fmt.Errorf("%s: a bench gpu gemm document without a result", name)
			}
			return m.gemm(name, doc.GPU.GEMM[0])
		case v["command"] == "bench gpu memory":
			var doc struct {
				GPU struct {
					Copies json.RawMessage `json:"copies"`
				} `json:"gpu"`
			}
			if err := json.Unmarshal(b, &doc); err != nil || doc.GPU.Copies == nil {
				return fmt.Errorf("%s: a bench gpu memory document without copies", name)
			}
			return m.memory(name, doc.GPU.Copies)
		case v["command"] == "doctor":
			return m.doctor(name, b)
		}
	}
	return fmt.Errorf("%s: not a sparkrig doctor, bench or bench gpu JSON output", name)
}

// gemm reads one GEMM result (`bench gpu gemm`'s, sparkrig's own).
func (m *Measured) gemm(name string, b []byte) error {
	var g struct {
		DType  string  `json:"dtype"`
		TFLOPS float64 `json:"tflops"`
		Best   float64 `json:"best_tflops"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	switch g.DType { // bench gpu gemm names them as nccl-tests does: bfloat16, half
	case "bf16", "bfloat16", "fp16", "half", "float16":
	default:
		return fmt.Errorf("%s: a %s GEMM; the planner needs bf16 or fp16", name, g.DType)
	}
	m.BF16TFLOPS = Number{g.TFLOPS, "TFLOP/s", fmt.Sprintf("measured: %s (%s GEMM, whole-run average)", name, g.DType)}
	return nil
}

func (m *Measured) collectives(name string, tables []results.NCCLTable) error {
	used := false
	for _, t := range tables {
		if t.Collective != "all_reduce" || len(t.Rows) == 0 {
			continue
		}
		if t.Nodes < 2 {
			continue // one node's GPUs: not the network between nodes
		}
		var peak float64
		small := t.Rows[0]
		for _, r := range t.Rows {
			if r.OOP.BusBWGBs != nil && *r.OOP.BusBWGBs > peak {
				peak = *r.OOP.BusBWGBs
			}
			if r.SizeBytes < small.SizeBytes {
				small = r
			}
		}
		for _, d := range t.Devices {
			if p := platform.FromGPUName(d.Name); p != "" {
				m.Origins = append(m.Origins, Origin{File: name, Platform: p})
				break
			}
		}
		src := fmt.Sprintf("measured: %s (all_reduce, %d ranks on %d nodes)", name, t.Ranks, t.Nodes)
		if peak > 0 {
			m.AllReduceBusBW = Number{peak, "GB/s", src + ", peak busbw"}
			used = true
		}
		if small.OOP.TimeUS != nil && small.SizeBytes <= 1<<20 {
			m.Latency = Number{*small.OOP.TimeUS, "us", fmt.Sprintf("%s, %d B", src, small.SizeBytes)}
			m.LatencyBytes = small.SizeBytes
		}
		m.Nodes = max(m.Nodes, t.Nodes)
	}
	if !used {
		return fmt.Errorf("%s: no all_reduce between two or more nodes in it", name)
	}
	return nil
}

func (m *Measured) memory(name string, b []byte) error {
	var rows []struct {
		Name string  `json:"name"`
		Src  int     `json:"src"`
		Dst  int     `json:"dst"`
		GBs  float64 `json:"gbs"`
		Peak *struct {
			Name string `json:"name"`
		} `json:"peak"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	var sum float64
	var n int
	o := Origin{File: name}
	for _, r := range rows {
		if r.Name == "d2d" && r.Src == r.Dst {
			sum += r.GBs
			n++
			if r.Peak != nil && r.Peak.Name == sparkMemoryPeak {
				o.Platform = platform.DGXSpark
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("%s: no device-to-device copy rows", name)
	}
	// A copy reads and writes every byte: memory traffic is twice the copy rate.
	m.MemoryBandwidth = Number{2 * sum / float64(n), "GB/s", fmt.Sprintf("measured: %s (2 x d2d copy rate, mean of %d devices)", name, n)}
	o.Devices, o.BandwidthGBs = n, m.MemoryBandwidth.Value
	m.Origins = append(m.Origins, o)
	return nil
}

func (m *Measured) benchRecord(name string, b []byte) error {
	var rec struct {
		Bench struct {
			Steps []struct {
				Parsed struct {
					NCCL *results.NCCLOutput `json:"nccl"`
				} `json:"parsed"`
			} `json:"steps"`
			Nodes []struct {
				DGX string `json:"dgx"`
			} `json:"nodes"`
		} `json:"bench"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	var tables []results.NCCLTable
	for _, s := range rec.Bench.Steps {
		if s.Parsed.NCCL != nil {
			tables = append(tables, s.Parsed.NCCL.Tables...)
		}
	}
	if len(rec.Bench.Nodes) > 0 && rec.Bench.Nodes[0].DGX != "" {
		m.Platform = "dgx-spark"
	}
	m.Nodes = max(m.Nodes, len(rec.Bench.Nodes))
	if len(tables) == 0 {
		return nil
	}
	return m.collectives(name, tables)
}

func (m *Measured) doctor(name string, b []byte) error {
	var r struct {
		Hosts []struct {
			Profile string `json:"profile"`
			Status  string `json:"status"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	var profiles []string
	for _, h := range r.Hosts {
		if h.Profile != "" {
			profiles = append(profiles, h.Profile)
		}
	}
	if len(profiles) == 0 {
		return fmt.Errorf("%s: a doctor report with no audited host", name)
	}
	m.Nodes = max(m.Nodes, len(profiles))
	if slices.Contains(profiles, "dgx-spark") {
		m.Platform = "dgx-spark"
	}
	for _, p := range slices.Compact(slices.Sorted(slices.Values(profiles))) {
		if p == platform.DGXSpark {
			m.Origins = append(m.Origins, Origin{File: name, Platform: p})
		} else {
			m.Origins = append(m.Origins, Origin{File: name, NotSpark: p + " nodes"})
		}
	}
	return nil
}

// Apply overrides c's numbers with the measured ones.
func (m Measured) Apply(c *Cluster) {
	if m.MemoryBandwidth.Value > 0 {
		c.MemoryBandwidth = m.MemoryBandwidth
	}
	if m.BF16TFLOPS.Value > 0 {
		c.BF16TFLOPS = m.BF16TFLOPS
	}
	if m.AllReduceBusBW.Value > 0 {
		c.AllReduceBusBW = m.AllReduceBusBW
	}
	if m.Latency.Value > 0 {
		c.AllReduceLatency, c.LatencyBytes = m.Latency, m.LatencyBytes
	}
}

// CheckPlatform refuses inputs measured on another platform than target: a
// memory benchmark of a multi-GPU server must not become a DGX Spark's
// bandwidth. peakGBs is target's rated memory bandwidth per node and gpus
// its GPUs per node (0: not known).
func (m Measured) CheckPlatform(target string, peakGBs float64, gpus int) error {
	for _, o := range m.Origins {
		switch {
		case o.Platform != "" && o.Platform != target:
			return fmt.Errorf("--from %s was measured on %s, not %s: plan with --platform %s, or give a measurement from %s", o.File, o.Platform, target, o.Platform, target)
		case o.NotSpark != "" && target == platform.DGXSpark:
			return fmt.Errorf("--from %s audited %s, not DGX Spark: give --platform for their platform, or a report from the Sparks", o.File, o.NotSpark)
		case o.Platform == "" && gpus > 0 && o.Devices > gpus:
			return fmt.Errorf("--from %s measured %d GPUs of one host (%.0f GB/s); a %s node has %d: give a measurement from %s, or --platform for the platform it came from", o.File, o.Devices, o.BandwidthGBs, target, gpus, target)
		case o.Platform == "" && peakGBs > 0 && o.BandwidthGBs > 1.1*peakGBs:
			return fmt.Errorf("--from %s measured %.0f GB/s, above %s's %.0f GB/s peak: it comes from another platform; give a measurement from %s, or --platform for the platform it came from", o.File, o.BandwidthGBs, target, peakGBs, target)
		}
	}
	return nil
}

// OriginPlatform is the one platform the inputs name, "" where they name none or several.
func (m Measured) OriginPlatform() string {
	p := m.Platform
	for _, o := range m.Origins {
		switch {
		case o.Platform == "":
		case p == "":
			p = o.Platform
		case p != o.Platform:
			return ""
		}
	}
	return p
}
