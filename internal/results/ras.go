package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The shapes read here are the ones NCCL's RAS client support prints, in
// NVIDIA/nccl src/ras/client_support.cc (line numbers at v2.30.7-1 unless
// named otherwise; the text shapes are the same from v2.26.2-1 on, and
// v2.24.3-1 differs only where noted):
//   - the version line, "NCCL version X compiled with CUDA Y" (:575), where X
//     carries NCCL_SUFFIX (e.g. "2.28.9+cuda13.0");
//   - the job summary and the communicators table (:628-780, :1206-1242);
//   - Errors (:1252): "INCOMPLETE" with "Process P on node H managing GPU(s) G"
//     (:1255-1318), "DEAD" with the same process lines (:1325-1354),
//     "#v-c (HASH) INCOMPLETE" with "Rank R -- GPU G managed by process P on
//     node H" (:1366-1389), "#v-c (HASH) ERROR" with "N ranks reported E"
//     and "Rank R reported E -- GPU ..." (:1391-1414, :1682-1724);
//   - Warnings (:1423): "TIMEOUT" (:1427), "#v-c (HASH) MISMATCH" (:1440) with the
//     status groups ("N ranks have status S", "Rank R has status S -- ...")
//     and, per collective, "Communicator ranks have different OP operation
//     counts" followed by count groups, most frequent first and, among
//     equally frequent ones, the highest count first (rasValCountsCompareRev
//     :1851): "N ranks have launched up to operation V" or "N ranks have not
//     launched any operations", each followed by its ranks when few enough
//     ("Rank R -- GPU ..."), or a single rank's "Rank R has launched up to
//     operation V -- GPU ..." / "Rank R has not launched any operations --
//     GPU ..." (:1574-1654). A group's ranks are listed only when it is an
//     outlier (rasCountIsOutlier :2169: one rank always; otherwise at most
//     10 ranks and a quarter of the communicator, or under half of it with
//     VERBOSE STATUS). NCCL 2.24 counts all collectives together
//     ("different collective operation counts", v2.24.3-1 :1338) and has
//     no "not launched any operations" lines;
//   - a GPU is "G" or "G (NVML N)" when the CUDA and NVML indices differ
//     (rasGpuToString :2046); a rank whose process is unknown ends
//     "-- [process information not found]".
//
// JSON (SET FORMAT json, from v2.28.7-1) is rasDumpCommsToJSON (:2095): the
// version, a timestamp, and per communicator its hash ("0x%lx"), size, every
// answering rank with its host, pid, CUDA and NVML device, status and
// collective_counts by collective name, and its missing ranks with
// "unresponsive" and "considered_dead". v2.28.7-1 and v2.28.9-1 leave out
// the comma after a missing rank's "nvml_dev" (v2.28.9-1 :1963); such an
// answer is mended before it is read.

// NCCLRAS is what NCCL's RAS status says (`ncclras`, `echo status | nc
// host 28028`, text or JSON): the job's size, its communicators grouped
// by shape and status, the errors and warnings found, and per communicator
// the ranks it names with their operation counts.
type NCCLRAS struct {
	Version   string `json:"nccl_version,omitempty"`
	Nodes     int    `json:"nodes,omitempty"`
	Processes int    `json:"processes,omitempty"`
	GPUs      int    `json:"gpus,omitempty"`
	// Groups are the rows of the communicators table (text output).
	Groups []RASGroup `json:"groups,omitempty"`
	// Communicators counts the communicators of the JSON output.
	Communicators int          `json:"communicators,omitempty"`
	Findings      []RASFinding `json:"findings,omitempty"`
	// Dropped counts findings beyond the first maxListed.
	Dropped int `json:"dropped_findings,omitempty"`

	// Format is "text" or "json".
	Format string `json:"-"`
	// Timestamp is the JSON answer's own (the node's local time).
	Timestamp string `json:"-"`
	// Comms holds each communicator's ranks: every answering rank with
	// its counts in JSON; in text, the ranks its INCOMPLETE, ERROR and
	// MISMATCH blocks name, and the MISMATCH count groups.
	Comms []RASComm `json:"-"`
	// MissingProcesses are the job processes the Errors section's
	// INCOMPLETE block lists (text); Dead those of its DEAD block.
	MissingProcesses []RASProcess `json:"-"`
	Dead             []RASProcess `json:"-"`
	// Truncated is set when ranks or communicators were left out to keep
	// memory bounded.
	Truncated bool `json:"-"`
}

// RASGroup is one row of the communicators table.
type RASGroup struct {
	Group        int    `json:"group"`
	Comms        int    `json:"comms"`
	NodesPerComm int    `json:"nodes_per_comm"`
	RanksPerNode string `json:"ranks_per_node"` // "8" or "7-8"
	RanksPerComm int    `json:"ranks_per_comm"`
	RanksInGroup int    `json:"ranks_in_group"`
	Status       string `json:"status"` // RUNNING, INIT, FINALIZE, NOCOMM...
	Errors       string `json:"errors"` // OK, MISMATCH, INCOMPLETE, ERROR...
}

// RASFinding is one entry of the Errors or Warnings section.
type RASFinding struct {
	// Severity is "error" (the Errors section, a dead or missing rank in
	// JSON) or "warning".
	Severity string `json:"severity"`
	// Kind is INCOMPLETE, MISMATCH, DEAD, TIMEOUT, ERROR...
	Kind string `json:"kind"`
	// Comm is "#0-0 (fa93daea854b060b)" for a communicator's finding.
	Comm    string   `json:"comm,omitempty"`
	Details []string `json:"details,omitempty"`
}

// RASComm is one communicator.
type RASComm struct {
	// Hash is "0x" and 16 hex digits, the same from text and JSON.
	Hash string
	Size int // ranks in the communicator (JSON; 0 when not known)
	// Ranks are the answering ranks: all of them with their Counts in
	// JSON (Complete), those named in text.
	Ranks []RASRank
	// Missing are the ranks RAS got no answer for.
	Missing []RASRank
	// Ops are, per collective whose counts differ between ranks, the
	// count groups (text; derived from the ranks' Counts in JSON).
	Ops      []RASOpCounts
	Complete bool
}

// RASRank is one rank of a communicator.
type RASRank struct {
	Rank    int
	Host    string // RAS's name for its node (an address)
	PID     int    // -1: not known
	GPU     int
	NVMLGPU int
	// AsyncError and InitState are NCCL's ncclResult_t (JSON); Error is
	// the text form's words for an error it reports.
	AsyncError, InitState int
	Error                 string
	Status                string           // a text MISMATCH's status for it (RUNNING, INIT, ...)
	Counts                map[string]int64 // operations launched, by collective (JSON)
	Unresponsive, Dead    bool
}

// RASProcess is one job process an Errors block lists.
type RASProcess struct {
	PID  int
	Host string
	GPUs string
}

// RASOpCounts is one collective's count groups.
type RASOpCounts struct {
	// Op is the collective ("AllReduce"), or "" for NCCL 2.24's count of
	// all collectives together.
	Op     string
	Groups []RASCountGroup
}

// RASCountGroup is the ranks that have launched up to one operation.
type RASCountGroup struct {
	Launched int64 // 0: not launched any
	Count    int   // ranks in the group
	Ranks    []int // the ranks RAS named (fewer than Count when it named none or some)
}

// RASBehind is the group of ranks that launched the fewest operations of
// one collective in one communicator whose ranks disagree.
type RASBehind struct {
	Comm     string
	Op       string
	Launched int64     // the lowest count
	Ahead    int64     // the highest count
	Count    int       // ranks at the lowest count
	Ranks    []RASRank // those RAS named, with pid and node where it gave them
}

// Named reports whether RAS named every rank of the group.
func (b RASBehind) Named() bool { return len(b.Ranks) == b.Count }

// limits on what one answer may hold, so memory stays bounded whatever the input
const (
	maxRASComms = 4096
	maxRASRanks = 1 << 17
)

// OK reports a status whose every communicator group is OK and that found nothing.
func (r *NCCLRAS) OK() bool {
	if len(r.Findings) > 0 {
		return false
	}
	for _, g := range r.Groups {
		if g.Errors != "OK" {
			return false
		}
	}
	return len(r.Groups) > 0 || r.Communicators > 0
}

// Ops is the rank's operations launched, all collectives together.
func (r RASRank) Ops() int64 {
	var n int64
	for _, v := range r.Counts {
		n += v
	}
	return n
}

// Behind lists, per communicator and collective whose counts differ
// between ranks, the ranks at the lowest count: whatever the rank count,
// the order RAS lists ranks in, or the format. A communicator whose ranks
// all agree names nobody.
func (r *NCCLRAS) Behind() []RASBehind {
	var out []RASBehind
	for _, c := range r.Comms {
		for _, op := range c.CountGroups() {
			if len(op.Groups) < 2 {
				continue
			}
			lo, hi := op.Groups[0], op.Groups[0]
			for _, g := range op.Groups[1:] {
				if g.Launched < lo.Launched {
					lo = g
				}
				if g.Launched > hi.Launched {
					hi = g
				}
			}
			b := RASBehind{Comm: c.Hash, Op: op.Op, Launched: lo.Launched, Ahead: hi.Launched, Count: lo.Count}
			for _, rk := range lo.Ranks {
				b.Ranks = append(b.Ranks, c.rank(rk))
			}
			out = append(out, b)
		}
	}
	return out
}

// rank is the communicator's record of a rank, or one with only its number.
func (c RASComm) rank(n int) RASRank {
	for _, r := range c.Ranks {
		if r.Rank == n {
			return r
		}
	}
	return RASRank{Rank: n, PID: -1, GPU: -1, NVMLGPU: -1}
}

// funcOrder is NCCL's order of collectives (ncclFuncStr, src/init.cc:52 at
// v2.30.7-1); other names sort after, alphabetically.
var funcOrder = []string{"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"}

func opLess(a, b string) bool {
	ia, ib := slices.Index(funcOrder, a), slices.Index(funcOrder, b)
	switch {
	case ia >= 0 && ib >= 0:
		return ia < ib
	case ia >= 0 || ib >= 0:
		return ia >= 0
	}
	return a < b
}

// CountGroups is, per collective whose counts differ between ranks, the
// count groups: the text answer's own, or made from every rank's counts.
func (c RASComm) CountGroups() []RASOpCounts {
	if !c.Complete {
		return c.Ops
	}
	ops := map[string]bool{}
	for _, r := range c.Ranks {
		for op := range r.Counts {
			ops[op] = true
		}
	}
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Slice(names, func(i, j int) bool { return opLess(names[i], names[j]) })
	var out []RASOpCounts
	for _, op := range names {
		byVal := map[int64]*RASCountGroup{}
		var vals []int64
		for _, r := range c.Ranks {
			v := r.Counts[op]
			g, ok := byVal[v]
			if !ok {
				g = &RASCountGroup{Launched: v}
				byVal[v] = g
				vals = append(vals, v)
			}
			g.Count++
			g.Ranks = append(g.Ranks, r.Rank)
		}
		if len(vals) < 2 {
			continue
		}
		slices.Sort(vals)
		oc := RASOpCounts{Op: op}
		for _, v := range vals {
			g := byVal[v]
			slices.Sort(g.Ranks)
			oc.Groups = append(oc.Groups, *g)
		}
		out = append(out, oc)
	}
	return out
}

// ParseRASAnswer reads one RAS answer, JSON or text.
func ParseRASAnswer(b []byte) (NCCLRAS, error) {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		return ParseRASJSON(b)
	}
	r, err := ParseRAS(bytes.NewReader(b))
	if err != nil {
		return r, err
	}
	if r.Version == "" && len(r.Groups) == 0 && len(r.Findings) == 0 && len(r.Comms) == 0 {
		return r, errors.New("RAS text: no NCCL version line, communicator table or finding")
	}
	return r, nil
}

// ParseRAS reads RAS status text in one pass; lines that are not RAS
// output (a framework's log around it) are passed over.
func ParseRAS(r io.Reader) (NCCLRAS, error) {
	p := rasParser{comms: map[string]int{}, comm: -1, op: -1, group: -1}
	p.out.Format = "text"
	lr := NewLineReader(r)
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p.out, err
		}
		p.line(line)
	}
	return p.out, nil
}

type rasParser struct {
	out     NCCLRAS
	section string // "error", "warning", "" elsewhere
	table   bool   // inside the communicators table
	totals  bool   // the next number row is the job's totals
	cur     *RASFinding
	// block is what the current Errors/Warnings block lists: "missing"
	// and "dead" processes, a communicator's "incomplete", "error" or
	// "mismatch" ranks.
	block  string
	comm   int // index in out.Comms of the block's communicator, -1 for none
	comms  map[string]int
	op     int    // index in the comm's Ops of the collective being listed, -1 for none
	group  int    // index in that op's Groups of the group being listed, -1 for none
	status string // the MISMATCH status group being listed
	err    string // the ERROR group being listed
	ranks  int    // ranks recorded, for the bound
}

var (
	rasProcessLine = lazyRegexp(`^Process (\d+) on node (\S+) managing GPUs? (.+)$`)
	rasRankTail    = `-- (?:GPU (\d+)(?: \(NVML (\d+)\))? managed by process (-?\d+) on node (\S+)|\[process information not found\])$`
	rasRankPlain   = lazyRegexp(`^Rank (\d+) ` + rasRankTail)
	rasRankLaunch  = lazyRegexp(`^Rank (\d+) has launched up to operation (\d+) ` + rasRankTail)
	rasRankNone    = lazyRegexp(`^Rank (\d+) has not launched any operations ` + rasRankTail)
	rasRankStatus  = lazyRegexp(`^Rank (\d+) has status (\S+) ` + rasRankTail)
	rasRankError   = lazyRegexp(`^Rank (\d+) reported (.+?) ` + rasRankTail)
	rasGroupLaunch = lazyRegexp(`^(\d+) ranks have launched up to operation (\d+)$`)
	rasGroupNone   = lazyRegexp(`^(\d+) ranks have not launched any operations$`)
	rasGroupStatus = lazyRegexp(`^(\d+) ranks have status (\S+)$`)
	rasGroupError  = lazyRegexp(`^(\d+) ranks reported (.+)$`)
	rasOpHeading   = lazyRegexp(`^Communicator ranks have different (\S+) operation counts$`)
	rasCommHeading = lazyRegexp(`^#\d+-\d+ \(([0-9a-fA-F]{1,16})\) ([A-Z_,]+)$`)
)

func (p *rasParser) line(raw []byte) {
	t := bytes.TrimSpace(raw)
	indented := len(raw) > 0 && (raw[0] == ' ' || raw[0] == '\t')
	switch {
	case len(t) == 0:
		p.cur, p.block = nil, ""
		return
	case bytes.HasPrefix(t, []byte("NCCL version ")) && bytes.Contains(t, []byte("compiled with")):
		if f := bytes.Fields(t); len(f) > 2 && p.out.Version == "" {
			p.out.Version = string(f[2])
		}
		return
	case bytes.HasPrefix(t, []byte("(total)")):
		p.totals = true
		return
	case bytes.HasPrefix(t, []byte("#  in group")) || bytes.HasPrefix(t, []byte("# in group")):
		p.table = true
		return
	case bytes.Equal(t, []byte("Errors")):
		p.section, p.table, p.cur, p.block = "error", false, nil, ""
		return
	case bytes.Equal(t, []byte("Warnings")):
		p.section, p.table, p.cur, p.block = "warning", false, nil, ""
		return
	case bytes.HasPrefix(t, []byte("Communicators...")) || bytes.Equal(t, []byte("Job summary")):
		p.section, p.cur, p.block = "", nil, ""
		return
	case t[0] == '=':
		return
	}
	if p.totals {
		p.totals = false
		if f := bytes.Fields(t); rasInts(f) {
			switch len(f) {
			case 5:
				p.out.Nodes, p.out.Processes, p.out.GPUs = atoi(f[0]), atoi(f[3]), atoi(f[4])
			case 3:
				p.out.Nodes, p.out.Processes, p.out.GPUs = atoi(f[0]), atoi(f[1]), atoi(f[2])
			}
			return
		}
	}
	if p.table {
		f := bytes.Fields(t)
		if len(f) == 8 && rasInts(f[:3]) && rasInts(f[4:6]) {
			if len(p.out.Groups) < maxListed {
				p.out.Groups = append(p.out.Groups, RASGroup{Group: atoi(f[0]), Comms: atoi(f[1]), NodesPerComm: atoi(f[2]),
					RanksPerNode: string(f[3]), RanksPerComm: atoi(f[4]), RanksInGroup: atoi(f[5]), Status: string(f[6]), Errors: string(f[7])})
			}
			return
		}
		p.table = false
	}
	// monitoring mode: "[2025-12-19 13:07:07] PEER_DEAD: Process 1524345 on node ..."
	if t[0] == '[' {
		if j := bytes.Index(t, []byte("] PEER_")); j > 0 {
			rest := t[j+2:]
			kind, detail, _ := bytes.Cut(rest, []byte(": "))
			p.add(RASFinding{Severity: "error", Kind: string(kind), Details: []string{string(detail)}})
			return
		}
	}
	if p.section == "" {
		return
	}
	if !indented {
		p.heading(t)
		return
	}
	if p.cur != nil && len(p.cur.Details) < 8 {
		p.cur.Details = append(p.cur.Details, strings.ToValidUTF8(string(t), "?"))
	}
	p.detail(string(t))
}

// heading starts an Errors or Warnings block.
func (p *rasParser) heading(t []byte) {
	p.cur, p.block, p.comm, p.op, p.group, p.status, p.err = nil, "", -1, -1, -1, "", ""
	f := RASFinding{Severity: p.section, Kind: string(t)}
	switch {
	case t[0] == '#':
		m := rasCommHeading.FindSubmatch(t)
		if m == nil {
			fs := bytes.Fields(t)
			if len(fs) < 3 || !rasKind(fs[len(fs)-1]) {
				return
			}
			f.Comm, f.Kind = string(fs[0])+" "+string(fs[1]), string(fs[len(fs)-1])
			p.cur = p.add(f)
			return
		}
		fs := bytes.Fields(t)
		f.Comm, f.Kind = string(fs[0])+" "+string(fs[1]), string(m[2])
		p.comm = p.commIndex(string(m[1]))
		p.block = strings.ToLower(f.Kind)
	case !rasKind(t):
		return // not RAS output: a fence, a framework's line
	case f.Kind == "INCOMPLETE":
		p.block = "missing"
	case f.Kind == "DEAD":
		p.block = "dead"
	}
	p.cur = p.add(f)
}

// detail reads one indented line of a block.
func (p *rasParser) detail(t string) {
	switch p.block {
	case "missing", "dead":
		m := rasProcessLine.FindStringSubmatch(t)
		if m == nil {
			return
		}
		pr := RASProcess{PID: satoi(m[1]), Host: m[2], GPUs: m[3]}
		if p.block == "dead" {
			if len(p.out.Dead) < maxRASRanks {
				p.out.Dead = append(p.out.Dead, pr)
			}
		} else if len(p.out.MissingProcesses) < maxRASRanks {
			p.out.MissingProcesses = append(p.out.MissingProcesses, pr)
		}
		return
	}
	if p.comm < 0 {
		return
	}
	switch p.block {
	case "incomplete":
		if m := rasRankPlain.FindStringSubmatch(t); m != nil {
			r := rankOf(m[1], m[2:])
			r.Unresponsive = true
			p.missing(r)
		}
	case "error":
		if m := rasGroupError.FindStringSubmatch(t); m != nil {
			p.err = m[2]
		} else if m := rasRankError.FindStringSubmatch(t); m != nil {
			r := rankOf(m[1], m[3:])
			r.Error = m[2]
			p.named(r)
		} else if m := rasRankPlain.FindStringSubmatch(t); m != nil && p.err != "" {
			r := rankOf(m[1], m[2:])
			r.Error = p.err
			p.named(r)
		}
	case "mismatch,incomplete", "incomplete,mismatch", "mismatch":
		p.mismatch(t)
	}
}

// mismatch reads one line of a MISMATCH block.
func (p *rasParser) mismatch(t string) {
	if t == "Communicator ranks have different status" {
		p.op, p.group, p.status = -1, -1, ""
		return
	}
	if m := rasOpHeading.FindStringSubmatch(t); m != nil {
		op := m[1]
		if op == "collective" { // NCCL 2.24: all collectives counted together
			op = ""
		}
		c := &p.out.Comms[p.comm]
		c.Ops = append(c.Ops, RASOpCounts{Op: op})
		p.op, p.group, p.status = len(c.Ops)-1, -1, ""
		return
	}
	if m := rasGroupStatus.FindStringSubmatch(t); m != nil {
		p.status, p.op, p.group = m[2], -1, -1
		return
	}
	if m := rasRankStatus.FindStringSubmatch(t); m != nil {
		r := rankOf(m[1], m[3:])
		r.Status = m[2]
		p.named(r)
		return
	}
	if p.op < 0 {
		if m := rasRankPlain.FindStringSubmatch(t); m != nil && p.status != "" {
			r := rankOf(m[1], m[2:])
			r.Status = p.status
			p.named(r)
		}
		return
	}
	c := &p.out.Comms[p.comm]
	oc := &c.Ops[p.op]
	if m := rasGroupLaunch.FindStringSubmatch(t); m != nil {
		oc.Groups = append(oc.Groups, RASCountGroup{Launched: int64(satoi(m[2])), Count: satoi(m[1])})
		p.group = len(oc.Groups) - 1
		return
	}
	if m := rasGroupNone.FindStringSubmatch(t); m != nil {
		oc.Groups = append(oc.Groups, RASCountGroup{Count: satoi(m[1])})
		p.group = len(oc.Groups) - 1
		return
	}
	var r RASRank
	var val int64
	switch m := rasRankLaunch.FindStringSubmatch(t); {
	case m != nil:
		r, val = rankOf(m[1], m[3:]), int64(satoi(m[2]))
	default:
		if m := rasRankNone.FindStringSubmatch(t); m != nil {
			r = rankOf(m[1], m[2:])
		} else if m := rasRankPlain.FindStringSubmatch(t); m != nil && p.group >= 0 {
			r = rankOf(m[1], m[2:])
			if p.ranks < maxRASRanks {
				oc.Groups[p.group].Ranks = append(oc.Groups[p.group].Ranks, r.Rank)
			}
			p.named(r)
			return
		} else {
			return
		}
	}
	oc.Groups = append(oc.Groups, RASCountGroup{Launched: val, Count: 1, Ranks: []int{r.Rank}})
	p.group = -1
	p.named(r)
}

// rankOf builds a rank from its number and the rank tail's groups: GPU,
// NVML GPU, pid, node (all empty for "[process information not found]").
func rankOf(rank string, tail []string) RASRank {
	r := RASRank{Rank: satoi(rank), PID: -1, GPU: -1, NVMLGPU: -1}
	if len(tail) >= 4 && tail[0] != "" {
		r.GPU, r.NVMLGPU, r.PID, r.Host = satoi(tail[0]), satoi(tail[0]), satoi(tail[2]), tail[3]
		if tail[1] != "" {
			r.NVMLGPU = satoi(tail[1])
		}
	}
	return r
}

func (p *rasParser) commIndex(hash string) int {
	h := normHash(hash)
	if i, ok := p.comms[h]; ok {
		return i
	}
	if len(p.out.Comms) >= maxRASComms {
		p.out.Truncated = true
		return -1
	}
	p.out.Comms = append(p.out.Comms, RASComm{Hash: h})
	p.comms[h] = len(p.out.Comms) - 1
	return len(p.out.Comms) - 1
}

// named records a rank a text block names, merging what blocks say of it.
func (p *rasParser) named(r RASRank) {
	c := &p.out.Comms[p.comm]
	for i := range c.Ranks {
		if c.Ranks[i].Rank == r.Rank {
			x := &c.Ranks[i]
			if x.PID < 0 {
				x.PID, x.Host, x.GPU, x.NVMLGPU = r.PID, r.Host, r.GPU, r.NVMLGPU
			}
			if r.Error != "" {
				x.Error = r.Error
			}
			if r.Status != "" {
				x.Status = r.Status
			}
			return
		}
	}
	if p.ranks >= maxRASRanks {
		p.out.Truncated = true
		return
	}
	p.ranks++
	c.Ranks = append(c.Ranks, r)
}

func (p *rasParser) missing(r RASRank) {
	if p.ranks >= maxRASRanks {
		p.out.Truncated = true
		return
	}
	p.ranks++
	c := &p.out.Comms[p.comm]
	c.Missing = append(c.Missing, r)
}

// normHash writes a communicator hash as "0x" and 16 hex digits: text
// gives "%016lx", JSON "0x%lx" (client_support.cc:1394, :1935).
func normHash(h string) string {
	h = strings.TrimPrefix(strings.ToLower(h), "0x")
	v, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return "0x" + h
	}
	return fmt.Sprintf("0x%016x", v)
}

// rasKind is a finding's kind: INCOMPLETE, MISMATCH, DEAD, TIMEOUT,
// INCOMPLETE,MISMATCH.
func rasKind(b []byte) bool {
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c == '_' || c == ',') {
			return false
		}
	}
	return len(b) > 1
}

func (p *rasParser) add(f RASFinding) *RASFinding {
	if len(p.out.Findings) >= maxListed {
		p.out.Dropped++
		return nil
	}
	p.out.Findings = append(p.out.Findings, f)
	return &p.out.Findings[len(p.out.Findings)-1]
}

func rasInts(f [][]byte) bool {
	for _, x := range f {
		if _, err := strconv.Atoi(string(x)); err != nil {
			return false
		}
	}
	return len(f) > 0
}

func satoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

type rasJSONRank struct {
	Rank   int    `json:"rank"`
	Host   string `json:"host"`
	PID    int    `json:"pid"`
	Dev    int    `json:"cuda_dev"`
	NVML   *int   `json:"nvml_dev"`
	Status struct {
		InitState    int  `json:"init_state"`
		AsyncError   int  `json:"async_error"`
		Abort        bool `json:"abort_flag"`
		Unresponsive bool `json:"unresponsive"`
		Dead         bool `json:"considered_dead"`
	} `json:"status"`
	Counts map[string]int64 `json:"collective_counts"`
}

type rasJSONDoc struct {
	Version       string `json:"nccl_version"`
	Timestamp     string `json:"timestamp"`
	Communicators []struct {
		Hash    string        `json:"hash"`
		Size    int           `json:"size"`
		Ranks   []rasJSONRank `json:"ranks"`
		Missing []rasJSONRank `json:"missing_ranks"`
	} `json:"communicators"`
	RAS struct {
		Timeouts int `json:"timeouts_count"`
	} `json:"ras"`
}

// rasMissingComma finds a number ending a line followed by a line that
// opens a member: NCCL 2.28.7 and 2.28.9 write a missing rank's
// "nvml_dev" without the comma before "status" (client_support.cc:1963 at
// v2.28.9-1).
var rasMissingComma = lazyRegexp(`("nvml_dev": -?\d+)(\s*\n\s*")`)

// ParseRASJSON reads a RAS answer in JSON form (`ncclras -f json`, or SET
// FORMAT json on the client protocol).
func ParseRASJSON(data []byte) (NCCLRAS, error) {
	var doc rasJSONDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		if err2 := json.Unmarshal(rasMissingComma.ReplaceAll(data, []byte("$1,$2")), &doc); err2 != nil {
			return NCCLRAS{}, fmt.Errorf("ncclras JSON: %w", err)
		}
	}
	out := NCCLRAS{Version: doc.Version, Timestamp: doc.Timestamp, Format: "json", Communicators: len(doc.Communicators)}
	hosts := map[string]bool{}
	conv := func(j rasJSONRank) RASRank {
		r := RASRank{Rank: j.Rank, Host: j.Host, PID: j.PID, GPU: j.Dev, NVMLGPU: j.Dev, InitState: j.Status.InitState,
			AsyncError: j.Status.AsyncError, Counts: j.Counts, Unresponsive: j.Status.Unresponsive, Dead: j.Status.Dead}
		if j.NVML != nil {
			r.NVMLGPU = *j.NVML
		}
		return r
	}
	nranks := 0
	for ci, c := range doc.Communicators {
		comm := "(" + c.Hash + ")"
		rc := RASComm{Hash: normHash(c.Hash), Size: c.Size, Complete: true}
		for _, m := range c.Missing {
			hosts[m.Host] = true
			kind, why := "INCOMPLETE", "missing"
			switch {
			case m.Status.Dead:
				kind, why = "DEAD", "considered dead"
			case m.Status.Unresponsive:
				why = "missing, unresponsive"
			}
			out.addJSON(RASFinding{Severity: "error", Kind: kind, Comm: comm,
				Details: []string{fmt.Sprintf("Rank %d (%s) -- GPU %d managed by process %d on node %s", m.Rank, why, m.Dev, m.PID, m.Host)}})
			rc.Missing = append(rc.Missing, conv(m))
		}
		for _, r := range c.Ranks {
			hosts[r.Host] = true
			if r.Status.AsyncError != 0 || r.Status.Abort || r.Status.InitState != 0 && r.Status.InitState != 7 {
				out.addJSON(RASFinding{Severity: "error", Kind: "ERROR", Comm: comm,
					Details: []string{fmt.Sprintf("Rank %d -- GPU %d managed by process %d on node %s: init_state %d, async_error %d, abort %v",
						r.Rank, r.Dev, r.PID, r.Host, r.Status.InitState, r.Status.AsyncError, r.Status.Abort)}})
			}
			rc.Ranks = append(rc.Ranks, conv(r))
		}
		nranks += len(rc.Ranks) + len(rc.Missing)
		if ci >= maxRASComms || nranks > maxRASRanks {
			out.Truncated = true
			continue
		}
		out.Comms = append(out.Comms, rc)
	}
	if doc.RAS.Timeouts > 0 {
		out.addJSON(RASFinding{Severity: "warning", Kind: "TIMEOUT", Details: []string{fmt.Sprintf("%d communication timeouts while gathering communicator data", doc.RAS.Timeouts)}})
	}
	delete(hosts, "")
	out.Nodes = len(hosts)
	return out, nil
}

func (r *NCCLRAS) addJSON(f RASFinding) {
	if len(r.Findings) >= maxListed {
		r.Dropped++
		return
	}
	r.Findings = append(r.Findings, f)
}
