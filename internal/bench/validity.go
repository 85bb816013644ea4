package bench

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/report"
)

// A benchmark or burn-in figure measured while the GPU sat in a low-clock
// or low-power state, was capped, throttled by hardware, or while RoCE ran
// at a small active MTU, says nothing about the hardware: the gate marks
// such a result invalid with the reason and it is never judged against
// an expectation.

// StateSample is one reading of one GPU (or one node's RDMA devices)
// during a run. Unknown numbers are negative.
type StateSample struct {
	Host          string         `json:"host"`
	GPU           int            `json:"gpu"`
	SMClockMHz    int            `json:"sm_clock_mhz"`
	MaxSMClockMHz int            `json:"max_sm_clock_mhz"`
	PowerW        float64        `json:"power_w"`
	UtilPct       int            `json:"util_pct"`
	Reasons       uint64         `json:"clock_event_reasons"`  // NVML clocks event reasons bitmask
	ActiveMTU     map[string]int `json:"active_mtu,omitempty"` // RDMA device -> active_mtu in bytes
}

// Validity is the gate's answer for one result.
type Validity struct {
	Valid   bool     `json:"valid"`
	Sampled bool     `json:"sampled"` // false: the state could not be read
	Reasons []string `json:"reasons,omitempty"`
}

// Gate thresholds, each with where it comes from.
const (
	// A GB10 in its degraded power state is capped at 500-850 MHz instead of
	// about 2400 MHz of its 3003 (parallelArchitect/spark-gpu-throttle-check,
	// a fork of hoesing/spark-gpu-throttle-check): under load, below 40 % of
	// the rated clock (or 1000 MHz where the rating is unknown) is that
	// state. An H100 held by its power cap stays above it (1110 of 1980 MHz).
	gateLowClockMHz      = 1000
	gateLowClockFraction = 0.4
	// A clock held at or below 2200 MHz under full load on a GPU rated
	// above 2400 MHz is a cap (nvidia-smi -lgc 0,2100 is used on GB10 against
	// heat: NVIDIA/open-gpu-kernel-modules #1358; its rating is 3003 MHz).
	gateCapMHz = 2200
	// About 15-20 W at ~96 % utilisation is a spinning or low-power GPU,
	// not work (vllm-project/vllm #46097; NVIDIA/nccl #2213 heuristics;
	// Blackwellboy/model-serving-minefield PR #55, trap 124).
	gateLowPowerW = 20
	// RoCE's active_mtu is 4096 with a port MTU of 4200 or more (NVIDIA
	// enterprise support, "MTU considerations for RoCE based applications");
	// below it the port runs at 1024 or 2048.
	gateActiveMTU = 4096
	// Load is what makes a low clock or power meaningful.
	gateLoadPct     = 50
	gateFullLoadPct = 90
)

// NVML clocks event reasons (nvmlClocksEventReasons, nvml.h) that mean the
// hardware slowed the GPU down.
var hwSlowdowns = []struct {
	bit  uint64
	name string
}{
	{0x8, "HW slowdown"},
	{0x20, "SW thermal slowdown"},
	{0x40, "HW thermal slowdown"},
	{0x80, "HW power brake slowdown"},
}

// Gate decides whether samples taken during a run leave its result valid.
func Gate(samples []StateSample) Validity {
	v := Validity{Valid: true, Sampled: len(samples) > 0}
	seen := map[string]bool{}
	add := func(format string, a ...any) {
		r := fmt.Sprintf(format, a...)
		if !seen[r] {
			seen[r] = true
			v.Reasons = append(v.Reasons, r)
		}
	}
	type gpuKey struct {
		host string
		gpu  int
	}
	peak := map[gpuKey]StateSample{} // the highest clock seen under full load
	for _, s := range samples {
		k := gpuKey{s.Host, s.GPU}
		if s.UtilPct >= gateLoadPct && s.SMClockMHz >= 0 && lowClock(s) {
			add("%s GPU %d at %d MHz under %d%% load: a low-clock state (power cycle the node: unplug it from AC power, wait a minute)", s.Host, s.GPU, s.SMClockMHz, s.UtilPct)
		}
		if s.UtilPct >= gateFullLoadPct && s.PowerW >= 0 && s.PowerW <= gateLowPowerW {
			add("%s GPU %d drew %.0f W at %d%% utilisation: a low-power state or a spinning kernel, not work", s.Host, s.GPU, s.PowerW, s.UtilPct)
		}
		for _, r := range hwSlowdowns {
			if s.Reasons&r.bit != 0 {
				add("%s GPU %d: %s active", s.Host, s.GPU, r.name)
			}
		}
		for dev, mtu := range s.ActiveMTU {
			if mtu > 0 && mtu < gateActiveMTU {
				add("%s %s at active_mtu %d (RoCE runs at 4096 with a port MTU of 4200 or more)", s.Host, dev, mtu)
			}
		}
		if s.UtilPct >= gateFullLoadPct && s.SMClockMHz >= 0 {
			if p, ok := peak[k]; !ok || s.SMClockMHz > p.SMClockMHz {
				peak[k] = s
			}
		}
	}
	keys := make([]gpuKey, 0, len(peak))
	for k := range peak {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].host < keys[j].host || (keys[i].host == keys[j].host && keys[i].gpu < keys[j].gpu)
	})
	for _, k := range keys {
		p := peak[k]
		if !lowClock(p) && p.SMClockMHz <= gateCapMHz && p.MaxSMClockMHz > gateCapMHz+200 {
			add("%s GPU %d held at %d MHz or less under full load (rated %d MHz): a clock cap (nvidia-smi -rgc resets a locked clock)", p.Host, p.GPU, p.SMClockMHz, p.MaxSMClockMHz)
		}
	}
	v.Valid = len(v.Reasons) == 0
	return v
}

// lowClock reports an SM clock below the low-clock line: a fraction of
// the rated clock when known, else an absolute floor.
func lowClock(s StateSample) bool {
	if s.MaxSMClockMHz > 0 {
		return float64(s.SMClockMHz) < gateLowClockFraction*float64(s.MaxSMClockMHz)
	}
	return s.SMClockMHz < gateLowClockMHz
}

// ApplyValidity marks an analysis measured in a bad state: every item's
// verdict and the analysis' status become unknown, with the reasons, and
// no expectation is kept (the figure says nothing about the hardware).
func ApplyValidity(a *report.AnalysisResult, v Validity) {
	if !v.Sampled {
		a.Notes = append(a.Notes, "GPU clocks, power and RoCE MTU were not sampled during this run: its validity is unchecked")
		return
	}
	if v.Valid {
		return
	}
	why := "measured in a bad state: " + strings.Join(v.Reasons, "; ")
	for i := range a.Items {
		it := &a.Items[i]
		it.Verdict = report.VerdictUnknown
		it.Expectation, it.Ratio, it.Wire, it.Causes = nil, nil, nil, nil
		it.NoExpectation = why
	}
	a.Notes = append(a.Notes, why)
	a.Status = report.VerdictUnknown
}

// stateScript prints one line per GPU ("gpu,<index>, <sm MHz>, <max sm
// MHz>, <W>, <util %>, <reasons>") and one per RDMA port ("mtu,<dev>,<active
// mtu>"). Either part is absent where its tool is.
const stateScript = `nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,power.draw,utilization.gpu,clocks_event_reasons.active --format=csv,noheader,nounits 2>/dev/null | sed 's/^/gpu,/'
ibv_devinfo 2>/dev/null | awk '/hca_id:/{d=$2} /active_mtu:/{print "mtu," d "," $2}'`

// ParseState reads stateScript's output from one host.
func ParseState(host, out string) []StateSample {
	var gpus []StateSample
	mtu := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(l), ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		switch {
		case len(f) == 7 && f[0] == "gpu":
			idx, err := strconv.Atoi(f[1])
			if err != nil {
				continue
			}
			s := StateSample{Host: host, GPU: idx, SMClockMHz: num(f[2]), MaxSMClockMHz: num(f[3]), PowerW: fnum(f[4]), UtilPct: num(f[5])}
			if r, err := strconv.ParseUint(strings.TrimPrefix(f[6], "0x"), 16, 64); err == nil {
				s.Reasons = r
			}
			gpus = append(gpus, s)
		case len(f) == 3 && f[0] == "mtu":
			if m, err := strconv.Atoi(f[2]); err == nil && m > 0 && m <= 1<<16 {
				mtu[f[1]] = m
			}
		}
	}
	if len(mtu) == 0 {
		return gpus
	}
	if len(gpus) == 0 {
		return []StateSample{{Host: host, GPU: -1, SMClockMHz: -1, MaxSMClockMHz: -1, PowerW: -1, UtilPct: -1, ActiveMTU: mtu}}
	}
	gpus[0].ActiveMTU = mtu
	return gpus
}

// num is an integer field of nvidia-smi's CSV ("[N/A]" and the like: -1).
func num(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

func fnum(s string) float64 {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x < 0 || math.IsNaN(x) {
		return -1
	}
	return x
}
