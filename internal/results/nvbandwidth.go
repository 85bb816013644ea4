package results

import (
	"bytes"
	"io"
	"strconv"
	"strings"
)

// NVBandwidthRun is one nvbandwidth invocation: its preamble and every test.
type NVBandwidthRun struct {
	Version string              `json:"version,omitempty"`
	Devices []string            `json:"devices,omitempty"`
	Tests   []NVBandwidthMatrix `json:"tests"`
}

// NVBandwidthMatrix is one test case's matrix (GB/s) and SUM line.
type NVBandwidthMatrix struct {
	Name string `json:"name"`
	// Title is the line above the matrix, e.g.
	// "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)".
	Title   string       `json:"title,omitempty"`
	Columns []string     `json:"columns"`
	Rows    []string     `json:"rows"`
	Values  [][]*float64 `json:"values"`
	Sum     *float64     `json:"sum,omitempty"`
	// Min, Max and Mean cover the off-diagonal cells of square GPU-to-GPU
	// matrices (the diagonal prints 0.00) and every cell otherwise; N/A is skipped.
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// ParseNVBandwidth reads nvbandwidth's text output in one pass.
func ParseNVBandwidth(r io.Reader) (NVBandwidthRun, error) {
	var run NVBandwidthRun
	var cur *NVBandwidthMatrix
	lr := NewLineReader(r)
	var err error
	for {
		var raw []byte
		raw, err = lr.Next()
		if err != nil {
			break
		}
		line := strings.TrimSpace(string(StripLauncherPrefix(raw)))
		switch {
		case line == "":
			cur = nil
		case strings.HasPrefix(line, "nvbandwidth Version:"):
			run.Version = strings.TrimSpace(strings.TrimPrefix(line, "nvbandwidth Version:"))
		case strings.HasPrefix(line, "Device ") && strings.Contains(line, ":") && len(run.Devices) < 1024:
			run.Devices = append(run.Devices, line)
		case strings.HasPrefix(line, "Running ") && strings.HasSuffix(line, "."):
			run.Tests = append(run.Tests, NVBandwidthMatrix{Name: strings.TrimSuffix(strings.TrimPrefix(line, "Running "), ".")})
			cur = &run.Tests[len(run.Tests)-1]
		case strings.HasPrefix(line, "SUM "):
			f := strings.Fields(line)
			if len(f) == 3 {
				t := findTest(run.Tests, f[1])
				if t == nil && len(run.Tests) > 0 && run.Tests[len(run.Tests)-1].Name == "" {
					// the matrix's "Running" line was not pasted: the SUM line names it
					t = &run.Tests[len(run.Tests)-1]
					t.Name = f[1]
				}
				if t != nil {
					t.Sum = numOrNil([]byte(f[2]))
				}
			}
			cur = nil
		case cur == nil && strings.HasSuffix(line, "bandwidth (GB/s)") && strings.Contains(line, "(row)") && len(run.Tests) < 1024:
			// a matrix whose "Running <test>." line was elided
			run.Tests = append(run.Tests, NVBandwidthMatrix{Title: line})
			cur = &run.Tests[len(run.Tests)-1]
		case cur != nil:
			cur.addLine(line)
		}
	}
	for i := range run.Tests {
		run.Tests[i].stats()
	}
	if err == io.EOF {
		err = nil
	}
	return run, err
}

func findTest(tests []NVBandwidthMatrix, name string) *NVBandwidthMatrix {
	for i := len(tests) - 1; i >= 0; i-- {
		if tests[i].Name == name {
			return &tests[i]
		}
	}
	return nil
}

func (m *NVBandwidthMatrix) addLine(line string) {
	f := strings.Fields(line)
	switch {
	case m.Title == "" && strings.Contains(line, "bandwidth"):
		m.Title = line
	case m.Columns == nil && allInts(f):
		m.Columns = f
	case m.Columns != nil && len(f) == len(m.Columns)+1 && len(m.Rows) < 4096:
		vals := make([]*float64, len(m.Columns))
		for i, v := range f[1:] {
			vals[i] = numOrNil([]byte(v))
		}
		m.Rows = append(m.Rows, f[0])
		m.Values = append(m.Values, vals)
	}
}

func allInts(f []string) bool {
	for _, s := range f {
		if _, err := strconv.Atoi(s); err != nil {
			return false
		}
	}
	return len(f) > 0
}

func (m *NVBandwidthMatrix) stats() {
	square := len(m.Rows) == len(m.Columns) && len(m.Rows) > 1 && strings.Contains(m.Title, "GPU(row)")
	n := 0
	for i, row := range m.Values {
		for j, v := range row {
			if v == nil || square && i == j && m.Rows[i] == m.Columns[j] {
				continue
			}
			if n == 0 || *v < m.Min {
				m.Min = *v
			}
			if *v > m.Max {
				m.Max = *v
			}
			m.Mean += *v
			n++
		}
	}
	if n > 0 {
		m.Mean /= float64(n)
	}
}

// ParseAllReduceBench reads the Markdown table that stas00's
// all_reduce_bench.py prints ("| payload | busbw | algbw |", GBps = 10^9 B/s)
// into an all_reduce table.
func ParseAllReduceBench(r io.Reader) (NCCLTable, error) {
	t := NCCLTable{Collective: "all_reduce", Tool: "all_reduce_bench", Complete: true}
	lr := NewLineReader(r)
	var err error
	for {
		var raw []byte
		raw, err = lr.Next()
		if err != nil {
			break
		}
		cells := bytes.Split(bytes.Trim(bytes.TrimSpace(raw), "|"), []byte("|"))
		if len(cells) != 3 {
			continue
		}
		size, ok := parseBinarySize(string(bytes.TrimSpace(cells[0])))
		bus := numOrNil(bytes.TrimSuffix(bytes.TrimSpace(cells[1]), []byte("GBps")))
		alg := numOrNil(bytes.TrimSuffix(bytes.TrimSpace(cells[2]), []byte("GBps")))
		if !ok || bus == nil || alg == nil {
			continue
		}
		if len(t.Rows) < 1<<16 {
			t.Rows = append(t.Rows, NCCLRow{SizeBytes: size, Root: -1, OOP: Timing{AlgBWGBs: alg, BusBWGBs: bus}})
		}
	}
	if n := InferRanks(&t); n > 0 {
		t.Ranks, t.RanksInferred = n, true
	}
	t.FinishPeak()
	if err == io.EOF {
		err = nil
	}
	return t, err
}

// parseBinarySize reads "32KiB", "1GiB", "512B".
func parseBinarySize(s string) (int64, bool) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return 0, false
	}
	return n * mult, true
}
