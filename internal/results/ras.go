package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// NCCLRAS is what NCCL's RAS status says (`ncclras`, `echo status | nc
// host 28028`, text or -f json): the job's size, its communicators grouped
// by shape and status, and the errors and warnings found.
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

// ParseRAS reads RAS status text in one pass; lines that are not RAS
// output (a framework's log around it) are passed over.
func ParseRAS(r io.Reader) (NCCLRAS, error) {
	var p rasParser
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
	section string // "errors", "warnings", "" elsewhere
	table   bool   // inside the communicators table
	totals  bool   // the next number row is the job's totals
	cur     *RASFinding
}

func (p *rasParser) line(raw []byte) {
	t := bytes.TrimSpace(raw)
	indented := len(raw) > 0 && (raw[0] == ' ' || raw[0] == '\t')
	switch {
	case len(t) == 0:
		p.cur = nil
		return
	case bytes.HasPrefix(t, []byte("NCCL version ")) && bytes.Contains(t, []byte("compiled with")):
		if f := bytes.Fields(t); len(f) > 2 {
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
		p.section, p.table, p.cur = "error", false, nil
		return
	case bytes.Equal(t, []byte("Warnings")):
		p.section, p.table, p.cur = "warning", false, nil
		return
	case bytes.HasPrefix(t, []byte("Communicators...")) || bytes.Equal(t, []byte("Job summary")):
		p.section, p.cur = "", nil
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
		p.cur = nil
		f := RASFinding{Severity: p.section, Kind: string(t)}
		switch {
		case t[0] == '#':
			fs := bytes.Fields(t)
			if len(fs) < 3 || !rasKind(fs[len(fs)-1]) {
				return
			}
			f.Comm, f.Kind = string(fs[0])+" "+string(fs[1]), string(fs[len(fs)-1])
		case !rasKind(t):
			return // not RAS output: a fence, a framework's line
		}
		p.cur = p.add(f)
		return
	}
	if p.cur != nil && len(p.cur.Details) < 8 {
		p.cur.Details = append(p.cur.Details, strings.ToValidUTF8(string(t), "?"))
	}
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

// ParseRASJSON reads `ncclras -f json` output.
func ParseRASJSON(data []byte) (NCCLRAS, error) {
	var doc struct {
		Version       string `json:"nccl_version"`
		Communicators []struct {
			Hash         string `json:"hash"`
			Size         int    `json:"size"`
			MissingCount int    `json:"missing_ranks_count"`
			Ranks        []struct {
				Rank   int    `json:"rank"`
				Host   string `json:"host"`
				PID    int    `json:"pid"`
				Dev    int    `json:"cuda_dev"`
				Status struct {
					InitState  int  `json:"init_state"`
					AsyncError int  `json:"async_error"`
					Abort      bool `json:"abort_flag"`
				} `json:"status"`
			} `json:"ranks"`
			Missing []struct {
				Rank   int    `json:"rank"`
				Host   string `json:"host"`
				PID    int    `json:"pid"`
				Dev    int    `json:"cuda_dev"`
				Status struct {
					Unresponsive bool `json:"unresponsive"`
					Dead         bool `json:"considered_dead"`
				} `json:"status"`
			} `json:"missing_ranks"`
		} `json:"communicators"`
		RAS struct {
			Timeouts int `json:"timeouts_count"`
		} `json:"ras"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return NCCLRAS{}, fmt.Errorf("ncclras JSON: %w", err)
	}
	out := NCCLRAS{Version: doc.Version, Communicators: len(doc.Communicators)}
	hosts := map[string]bool{}
	for _, c := range doc.Communicators {
		comm := "(" + c.Hash + ")"
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
		}
		for _, r := range c.Ranks {
			hosts[r.Host] = true
			if r.Status.AsyncError != 0 || r.Status.Abort || r.Status.InitState != 0 && r.Status.InitState != 7 {
				out.addJSON(RASFinding{Severity: "error", Kind: "ERROR", Comm: comm,
					Details: []string{fmt.Sprintf("Rank %d -- GPU %d managed by process %d on node %s: init_state %d, async_error %d, abort %v",
						r.Rank, r.Dev, r.PID, r.Host, r.Status.InitState, r.Status.AsyncError, r.Status.Abort)}})
			}
		}
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
