package results

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ncclJSONDoc holds the parts of nccl-tests' -J document sparkrig reads.
// The document also carries "env" (the whole process environment) and "args";
// they are deliberately not declared here, so they are never decoded, kept
// or echoed back.
type ncclJSONDoc struct {
	Version     *int            `json:"version"`
	NCCLVersion int             `json:"nccl_version"`
	Args        json.RawMessage `json:"args"` // read only for the program name
	Config      struct {
		NThreads int `json:"nthreads"`
		NGpus    int `json:"ngpus"`
		Devices  []struct {
			Rank       int    `json:"rank"`
			PID        int    `json:"pid"`
			Hostname   string `json:"hostname"`
			Device     int    `json:"device"`
			DeviceHex  string `json:"device_hex"`
			DeviceInfo string `json:"device_info"`
		} `json:"devices"`
	} `json:"config"`
	Results     []ncclJSONRow `json:"results"`
	OutOfBounds *struct {
		Count int64 `json:"count"`
	} `json:"out_of_bounds"`
	// 2.17.3–2.17.8 spell it "bandwidith".
	AvgBusBW    map[string]json.RawMessage `json:"average_bus_bandwidth"`
	AvgBusBWOld map[string]json.RawMessage `json:"average_bus_bandwidith"`
	Errors      []string                   `json:"errors"`
	StartTime   string                     `json:"start_time"`
}

type ncclJSONRow struct {
	Size       int64                      `json:"size"`
	Count      int64                      `json:"count"`
	Type       string                     `json:"type"`
	RedOp      string                     `json:"redop"`
	Root       json.RawMessage            `json:"root"`
	OutOfPlace map[string]json.RawMessage `json:"out_of_place"`
	InPlace    map[string]json.RawMessage `json:"in_place"`
}

// ParseNCCLTestsJSON reads the JSON document nccl-tests writes with -J
// (since 2.17.3). Only results are kept; the embedded environment is skipped.
func ParseNCCLTestsJSON(data []byte) (NCCLTable, error) {
	var d ncclJSONDoc
	if err := json.Unmarshal(data, &d); err != nil {
		return NCCLTable{}, fmt.Errorf("nccl-tests JSON: %w", err)
	}
	if d.Results == nil && d.Version == nil {
		return NCCLTable{}, fmt.Errorf("nccl-tests JSON: no \"results\" or \"version\" key")
	}
	t := NCCLTable{Tool: "nccl-tests", NCCLVersion: NCCLVersionString(d.NCCLVersion),
		NThreads: d.Config.NThreads, NGpus: d.Config.NGpus, Complete: d.AvgBusBW != nil || d.AvgBusBWOld != nil}
	var args []string
	if json.Unmarshal(d.Args, &args) == nil && len(args) > 0 {
		t.Collective = CanonicalCollective(args[0])
	}
	hosts := map[string]bool{}
	for _, dv := range d.Config.Devices {
		t.Devices = append(t.Devices, NCCLDevice{Rank: dv.Rank, Host: dv.Hostname, PID: dv.PID,
			Device: dv.Device, PCIBus: dv.DeviceHex, Name: dv.DeviceInfo})
		hosts[dv.Hostname] = true
	}
	t.Ranks, t.Nodes = len(t.Devices), len(hosts)
	for _, r := range d.Results {
		row := NCCLRow{SizeBytes: r.Size, Count: r.Count, Type: r.Type, RedOp: r.RedOp}
		row.Root = jsonInt(r.Root)
		row.OOP = jsonTiming(r.OutOfPlace)
		row.IP = jsonTiming(r.InPlace)
		t.Rows = append(t.Rows, row)
	}
	for _, m := range []map[string]json.RawMessage{d.AvgBusBW, d.AvgBusBWOld} {
		for _, k := range []string{"bandwidth", "bandwidith"} {
			if v := jsonFloat(m[k]); v != nil {
				t.AvgBusBWGBs = v
			}
		}
	}
	if d.OutOfBounds != nil {
		n := d.OutOfBounds.Count
		t.OutOfBounds = &n
	}
	if t.Ranks == 0 {
		if n := InferRanks(&t); n > 0 {
			t.Ranks, t.RanksInferred = n, true
		}
	}
	t.FinishPeak()
	return t, nil
}

func jsonTiming(m map[string]json.RawMessage) Timing {
	var tm Timing
	if m == nil {
		return tm
	}
	pick := func(keys ...string) *float64 {
		for _, k := range keys {
			if v := jsonFloat(m[k]); v != nil {
				return v
			}
		}
		return nil
	}
	tm.TimeUS = pick("time", "cpu_time")
	tm.AlgBWGBs = pick("alg_bw", "algbw", "algorithm_bandwidth", "algorithm_bandwidith", "alg_bandwidith")
	tm.BusBWGBs = pick("bus_bw", "busbw", "bus_bandwidth", "bus_bandwidith")
	if w := pick("nwrong", "wrong"); w != nil {
		n := int64(*w)
		tm.WrongErrs = &n
	}
	return tm
}

// jsonFloat reads a number, or a string holding one ("nan" gives nil).
func jsonFloat(raw json.RawMessage) *float64 {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var x float64
	if json.Unmarshal(raw, &x) == nil {
		return &x
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return numOrNil([]byte(strings.TrimSpace(s)))
	}
	return nil
}

func jsonInt(raw json.RawMessage) int {
	if v := jsonFloat(raw); v != nil {
		return int(*v)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		n, _ := strconv.Atoi(strings.TrimSpace(s))
		return n
	}
	return 0
}
