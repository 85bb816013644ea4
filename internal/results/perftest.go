package results

import (
	"bytes"
	"io"
	"sort"
	"strconv"
	"strings"
)

// PerftestRun is one perftest run (ib_write_bw, ib_read_bw, ib_send_bw,
// ib_write_lat, ib_read_lat, ib_send_lat): its header and result rows.
type PerftestRun struct {
	// Test is the title line, e.g. "RDMA_Write BW Test"; Kind is "bw" or "lat";
	// Verb is "write", "read", "send" or "atomic".
	Test string `json:"test"`
	Kind string `json:"kind"`
	Verb string `json:"verb"`
	// Command is the ib_* command line when the output shows it.
	Command    string `json:"command,omitempty"`
	Device     string `json:"device,omitempty"`
	LinkType   string `json:"link_type,omitempty"`
	Transport  string `json:"transport,omitempty"`
	Connection string `json:"connection,omitempty"`
	// MTU is the RDMA path MTU in bytes ("Mtu : 1024[B]").
	MTU      int  `json:"mtu,omitempty"`
	GIDIndex *int `json:"gid_index,omitempty"`
	QPs      int  `json:"qps,omitempty"`
	RDMACM   bool `json:"rdma_cm,omitempty"`
	// Unit is the bandwidth unit as printed: "Gb/sec", "MB/sec" or "MiB/sec".
	Unit string `json:"unit,omitempty"`
	// RunInfinitely is true for --run_infinitely (repeated rows, no peak).
	RunInfinitely bool `json:"run_infinitely,omitempty"`
	// Duration is true for duration mode (-D), where iterations are counted, not set.
	Duration bool             `json:"duration,omitempty"`
	BW       []PerftestBWRow  `json:"bw,omitempty"`
	Lat      []PerftestLatRow `json:"lat,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
}

// PerftestBWRow is one bandwidth row; Gbps values are converted from the
// printed unit (MB/sec and MiB/sec are 2^20 bytes per second in perftest).
type PerftestBWRow struct {
	Bytes       int64    `json:"bytes"`
	Iterations  int64    `json:"iterations"`
	PeakGbps    float64  `json:"peak_gbps"`
	AvgGbps     float64  `json:"avg_gbps"`
	MsgRateMpps *float64 `json:"msg_rate_mpps,omitempty"`
}

// PerftestLatRow is one latency row, in microseconds.
type PerftestLatRow struct {
	Bytes      int64    `json:"bytes"`
	Iterations int64    `json:"iterations"`
	MinUS      *float64 `json:"t_min_us,omitempty"`
	MaxUS      *float64 `json:"t_max_us,omitempty"`
	TypicalUS  *float64 `json:"t_typical_us,omitempty"`
	AvgUS      *float64 `json:"t_avg_us,omitempty"`
	StdevUS    *float64 `json:"t_stdev_us,omitempty"`
	P99US      *float64 `json:"p99_us,omitempty"`
	P999US     *float64 `json:"p999_us,omitempty"`
}

// SteadyAvgGbps is the bandwidth to judge: the median row of a
// --run_infinitely run (each row is one interval of the same transfer), else
// the best average of the size sweep. It returns the message size too.
func (r *PerftestRun) SteadyAvgGbps() (float64, int64) {
	if !r.RunInfinitely || len(r.BW) == 0 {
		return r.BestAvgGbps()
	}
	v := make([]float64, len(r.BW))
	for i, row := range r.BW {
		v[i] = row.AvgGbps
	}
	sort.Float64s(v)
	return v[len(v)/2], r.BW[0].Bytes
}

// BestAvgGbps returns the best average bandwidth of the run and its message size.
func (r *PerftestRun) BestAvgGbps() (float64, int64) {
	var best float64
	var size int64
	for _, row := range r.BW {
		if row.AvgGbps > best {
			best, size = row.AvgGbps, row.Bytes
		}
	}
	return best, size
}

// ParsePerftest reads one or more perftest outputs in one streaming pass.
func ParsePerftest(r io.Reader) ([]PerftestRun, error) {
	var runs []PerftestRun
	var cur *PerftestRun
	var cols []string
	var cmd string
	warnPending := []string{}
	lr := NewLineReader(r)
	var err error
	for {
		var raw []byte
		raw, err = lr.Next()
		if err != nil {
			break
		}
		line := bytes.TrimSpace(StripLauncherPrefix(raw))
		if len(line) == 0 || bytes.HasPrefix(line, []byte("---")) {
			continue
		}
		s := string(line)
		if strings.HasPrefix(s, "#bytes") && (cur == nil || len(cur.BW) > 0 || len(cur.Lat) > 0) {
			// a paste cut above the banner, or a second table pasted
			// under the first: the table alone is still a run
			runs = append(runs, headlessPerftestRun(s, cmd, warnPending))
			cur = &runs[len(runs)-1]
			cmd, warnPending = "", nil
		}
		switch {
		case strings.Contains(s, "ib_") && (strings.Contains(s, "_bw") || strings.Contains(s, "_lat")) && !strings.HasSuffix(s, "Test"):
			cmd = s
		case strings.HasPrefix(s, "WARNING:"):
			warnPending = append(warnPending, s)
		case strings.HasSuffix(s, " BW Test") || strings.HasSuffix(s, " Latency Test") || strings.HasSuffix(s, " Lat Test"):
			runs = append(runs, newPerftestRun(s, cmd, warnPending))
			cur = &runs[len(runs)-1]
			cmd, warnPending, cols = "", nil, nil
		case cur == nil:
		case strings.HasPrefix(s, "#bytes"):
			cols = strings.Fields(s)
			for _, c := range cols {
				if u, ok := strings.CutPrefix(c, "average["); ok {
					cur.Unit = strings.TrimSuffix(u, "]")
				}
			}
		case cols != nil && s[0] >= '0' && s[0] <= '9':
			cur.addRow(strings.Fields(s), cols)
		case strings.Contains(s, " : ") || strings.HasPrefix(s, "Mtu :"):
			cur.header(s)
		}
	}
	for i := range runs {
		runs[i].detectInfinite()
	}
	if err == io.EOF {
		err = nil
	}
	return runs, err
}

func newPerftestRun(title, cmd string, warnings []string) PerftestRun {
	r := PerftestRun{Test: title, Command: cmd, Warnings: warnings, Kind: "bw"}
	low := strings.ToLower(title)
	if strings.Contains(low, "latency") || strings.Contains(low, " lat ") {
		r.Kind = "lat"
	}
	switch {
	case strings.Contains(low, "write"):
		r.Verb = "write"
	case strings.Contains(low, "read"):
		r.Verb = "read"
	case strings.Contains(low, "send"):
		r.Verb = "send"
	case strings.Contains(low, "atomic"):
		r.Verb = "atomic"
	}
	for _, w := range warnings {
		if strings.Contains(w, "peak won't be measured") {
			r.RunInfinitely = strings.Contains(cmd, "run_infinitely") || cmd == ""
		}
	}
	if strings.Contains(cmd, "--run_infinitely") {
		r.RunInfinitely = true
	}
	if strings.Contains(cmd, " -D ") || strings.Contains(cmd, "--duration") {
		r.Duration = true
	}
	return r
}

// Tool names the perftest program that printed the run ("ib_write_bw"), or
// "perftest bw" / "perftest lat" when neither its title nor its command line
// is in the text.
func (r *PerftestRun) Tool() string {
	if r.Verb == "" {
		return "perftest " + r.Kind
	}
	return "ib_" + r.Verb + "_" + r.Kind
}

// headlessPerftestRun is a run whose title line is not in the text: its kind
// comes from the table's header (latency columns are "t_min", "t_avg", …) and
// its verb from the command line when one was seen.
func headlessPerftestRun(header, cmd string, warnings []string) PerftestRun {
	r := newPerftestRun("", cmd, warnings)
	if strings.Contains(header, " t_") {
		r.Kind = "lat"
	}
	for _, v := range []string{"write", "read", "send", "atomic"} {
		if strings.Contains(cmd, "ib_"+v) {
			r.Verb = v
		}
	}
	return r
}

// header reads the "Name : value" pairs, two to a line.
func (r *PerftestRun) header(s string) {
	for _, part := range splitPairs(s) {
		k, v, _ := strings.Cut(part, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "Device":
			r.Device = v
		case "Link type":
			r.LinkType = v
		case "Transport type":
			r.Transport = v
		case "Connection type":
			r.Connection = v
		case "Mtu":
			r.MTU, _ = strconv.Atoi(strings.TrimSuffix(v, "[B]"))
		case "GID index":
			if n, err := strconv.Atoi(v); err == nil {
				r.GIDIndex = &n
			}
		case "Number of qps":
			r.QPs, _ = strconv.Atoi(v)
		case "rdma_cm QPs":
			r.RDMACM = v == "ON"
		case "Duration":
			r.Duration = true
		}
	}
}

// splitPairs splits " Dual-port       : OFF          Device         : rocep1s0f1"
// into its two "key : value" parts.
func splitPairs(s string) []string {
	f := strings.Fields(s)
	var parts []string
	var cur []string
	for i := 0; i < len(f); i++ {
		// a new key starts after a value, where the next-but-n token is ":"
		if len(cur) >= 3 && cur[len(cur)-2] == ":" && i+1 < len(f) && indexColon(f[i:]) > 0 {
			parts = append(parts, strings.Join(cur, " "))
			cur = nil
		}
		cur = append(cur, f[i])
	}
	if len(cur) > 0 {
		parts = append(parts, strings.Join(cur, " "))
	}
	return parts
}

// indexColon returns the position of the first ":" token in f within a key
// of at most four words, or -1.
func indexColon(f []string) int {
	for i := 0; i < len(f) && i < 5; i++ {
		if f[i] == ":" {
			return i
		}
	}
	return -1
}

func (r *PerftestRun) addRow(f, cols []string) {
	if len(f) < 3 {
		return
	}
	size, err1 := strconv.ParseInt(f[0], 10, 64)
	iters, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	if r.Kind == "lat" {
		row := PerftestLatRow{Bytes: size, Iterations: iters}
		for i := 2; i < len(f) && i < len(cols); i++ {
			v := numOrNil([]byte(f[i]))
			c := latColumn(cols, i)
			switch {
			case strings.HasPrefix(c, "t_min"):
				row.MinUS = v
			case strings.HasPrefix(c, "t_max"):
				row.MaxUS = v
			case strings.HasPrefix(c, "t_typical"):
				row.TypicalUS = v
			case strings.HasPrefix(c, "t_avg"):
				row.AvgUS = v
			case strings.HasPrefix(c, "t_stdev"):
				row.StdevUS = v
			case c == "99%":
				row.P99US = v
			case c == "99.9%":
				row.P999US = v
			}
		}
		if len(r.Lat) < 1<<16 {
			r.Lat = append(r.Lat, row)
		}
		return
	}
	row := PerftestBWRow{Bytes: size, Iterations: iters}
	conv := r.toGbps()
	if len(f) > 2 {
		if v := numOrNil([]byte(f[2])); v != nil {
			row.PeakGbps = *v * conv
		}
	}
	if len(f) > 3 {
		if v := numOrNil([]byte(f[3])); v != nil {
			row.AvgGbps = *v * conv
		}
	}
	if len(f) > 4 {
		row.MsgRateMpps = numOrNil([]byte(f[4]))
	}
	if len(r.BW) < 1<<16 {
		r.BW = append(r.BW, row)
	}
}

// latColumn names the column of value i, folding "99% percentile[usec]" (two
// header words) into "99%".
func latColumn(cols []string, i int) string {
	var names []string
	for j := 0; j < len(cols); j++ {
		c := cols[j]
		if (c == "99%" || c == "99.9%") && j+1 < len(cols) && strings.HasPrefix(cols[j+1], "percentile") {
			j++
		}
		names = append(names, c)
	}
	if i < len(names) {
		return names[i]
	}
	return ""
}

func (r *PerftestRun) toGbps() float64 {
	switch r.Unit {
	case "Gb/sec":
		return 1
	case "MB/sec", "MiB/sec":
		return 1048576 * 8 / 1e9
	}
	return 1
}

// detectInfinite marks a run whose rows repeat one message size many times
// (--run_infinitely prints one row per interval).
func (r *PerftestRun) detectInfinite() {
	if len(r.BW) >= 3 && !r.RunInfinitely {
		same := true
		for _, row := range r.BW {
			if row.Bytes != r.BW[0].Bytes {
				same = false
			}
		}
		r.RunInfinitely = same && r.BW[0].PeakGbps == 0
	}
}
