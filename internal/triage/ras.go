// Package triage says why a running NCCL job is stuck or slow, from what
// each node shows without touching the job: its NCCL processes and the
// libnccl each has mapped (path and GNU build ID), the job's state from
// NCCL's RAS service, GPU utilisation, power and clocks, sampled twice,
// and the tail of a log. It never signals or attaches to a process.
//
// Everything here but the RAS client is pure: parsers of the evidence and
// the rules that judge it.
package triage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// RASPort is the port NCCL's RAS service answers clients on, on localhost
// (NCCL_RAS_ADDR changes it). Source: NVIDIA/nccl src/ras/ras_internal.h
// (NCCL_RAS_CLIENT_PORT 28028).
const RASPort = 28028

// RASProtocol is the client protocol version sparkrig speaks. Source:
// NVIDIA/nccl src/ras/ras_internal.h (NCCL_RAS_CLIENT_PROTOCOL 2).
const RASProtocol = 2

// MaxRASReply bounds what is read of one RAS reply.
const MaxRASReply = 8 << 20

// Request is one RAS query.
type Request struct {
	Verbose bool // VERBOSE STATUS: per-rank operation counts
	JSON    bool // SET FORMAT json (NCCL 2.28.7 and later)
	// Timeout, when not negative, is sent as TIMEOUT: how long the local
	// NCCL process waits for the others (0: no limit).
	Timeout int
}

// Query speaks NCCL's RAS client protocol over rw (a connection to
// localhost:28028 on the node): the handshake ("CLIENT PROTOCOL 2" →
// "SERVER PROTOCOL n"), TIMEOUT and SET FORMAT where asked (each answered
// "OK"), then STATUS or VERBOSE STATUS, whose answer runs to the end of the
// connection. Source: NVIDIA/nccl src/ras/client.cc (the ncclras client).
func Query(rw io.ReadWriter, req Request) ([]byte, error) {
	r := bufio.NewReader(io.LimitReader(rw, MaxRASReply+1))
	line := func() (string, error) {
		s, err := r.ReadString('\n')
		if err != nil && s == "" {
			if errors.Is(err, io.EOF) {
				return "", errors.New("NCCL closed the connection")
			}
			return "", err
		}
		return strings.TrimRight(s, "\r\n"), nil
	}
	send := func(s string) error {
		_, err := io.WriteString(rw, s+"\n")
		return err
	}
	if err := send(fmt.Sprintf("CLIENT PROTOCOL %d", RASProtocol)); err != nil {
		return nil, err
	}
	hs, err := line()
	if err != nil {
		return nil, fmt.Errorf("RAS handshake: %w", err)
	}
	if !strings.HasPrefix(strings.ToUpper(hs), "SERVER PROTOCOL ") {
		return nil, fmt.Errorf("RAS handshake: unexpected answer %q", clip(hs))
	}
	ok := func(cmd string) error {
		if err := send(cmd); err != nil {
			return err
		}
		a, err := line()
		if err != nil {
			return fmt.Errorf("RAS %s: %w", cmd, err)
		}
		if !strings.EqualFold(a, "OK") {
			return fmt.Errorf("RAS %s: unexpected answer %q", cmd, clip(a))
		}
		return nil
	}
	if req.Timeout >= 0 {
		if err := ok("TIMEOUT " + strconv.Itoa(req.Timeout)); err != nil {
			return nil, err
		}
	}
	if req.JSON {
		if err := ok("SET FORMAT json"); err != nil {
			return nil, err
		}
	}
	cmd := "STATUS"
	if req.Verbose {
		cmd = "VERBOSE STATUS"
	}
	if err := send(cmd); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(r)
	if len(body) > MaxRASReply {
		return body[:MaxRASReply], fmt.Errorf("RAS reply larger than %d bytes", MaxRASReply)
	}
	return body, err
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Status is the job's state as one RAS answer gives it.
type Status struct {
	NCCLVersion string
	Timestamp   string
	Comms       []Comm
	// Problems are the answer's own error and warning headings in text
	// form ("INCOMPLETE", "DEAD", "MISMATCH", "ERROR"), as NCCL words them.
	Problems []string
	// Dead are the job processes RAS considers dead (text form).
	Dead []Rank
	// Format is "json" or "text".
	Format string
}

// Comm is one communicator.
type Comm struct {
	Hash    string
	Size    int
	Ranks   []Rank // ranks that answered
	Missing []Rank // ranks that did not
	// Lagging holds, from a text answer's MISMATCH block, the ranks named
	// as behind, with their operation count, and Ahead the count the
	// others reached.
	Lagging []Rank
	Ahead   int64
}

// Rank is one rank of a communicator.
type Rank struct {
	Rank         int
	Host         string // as RAS names it (an address)
	PID          int
	GPU          int
	AsyncError   int              // NCCL's ncclResult_t, 0 for none
	Error        string           // the text form's words for it
	Counts       map[string]int64 // operations launched, by collective
	Unresponsive bool
	Dead         bool
}

// Ops is the rank's operations launched, all collectives together.
func (r Rank) Ops() int64 {
	var n int64
	for _, v := range r.Counts {
		n += v
	}
	return n
}

type jsonStatus struct {
	NCCLVersion string `json:"nccl_version"`
	Timestamp   string `json:"timestamp"`
	Comms       []struct {
		Hash    string     `json:"hash"`
		Size    int        `json:"size"`
		Ranks   []jsonRank `json:"ranks"`
		Missing []jsonRank `json:"missing_ranks"`
	} `json:"communicators"`
}

type jsonRank struct {
	Rank   int    `json:"rank"`
	Host   string `json:"host"`
	PID    int    `json:"pid"`
	GPU    int    `json:"cuda_dev"`
	Status struct {
		AsyncError   int  `json:"async_error"`
		Unresponsive bool `json:"unresponsive"`
		Dead         bool `json:"considered_dead"`
	} `json:"status"`
	Counts map[string]int64 `json:"collective_counts"`
}

// missingComma finds a line that ends a value followed by one that starts
// a member or an element: NCCL 2.28.9 writes a missing rank's "nvml_dev"
// without the comma before "status".
var missingComma = regexp.MustCompile(`([0-9"el}\]])(\s*\n\s*)(["{])`)

// ParseJSON reads a RAS answer in JSON form (SET FORMAT json). NCCL
// 2.28.9 leaves out a comma in its missing ranks (recorded in
// testdata/ras/stopped-2.txt); such an answer is mended before it is read.
func ParseJSON(b []byte) (*Status, error) {
	var js jsonStatus
	err := json.Unmarshal(b, &js)
	if err != nil {
		if err2 := json.Unmarshal(missingComma.ReplaceAll(b, []byte("$1,$2$3")), &js); err2 != nil {
			return nil, fmt.Errorf("RAS JSON: %w", err)
		}
	}
	st := &Status{NCCLVersion: js.NCCLVersion, Timestamp: js.Timestamp, Format: "json"}
	conv := func(j jsonRank) Rank {
		return Rank{Rank: j.Rank, Host: j.Host, PID: j.PID, GPU: j.GPU, AsyncError: j.Status.AsyncError,
			Counts: j.Counts, Unresponsive: j.Status.Unresponsive, Dead: j.Status.Dead}
	}
	for _, c := range js.Comms {
		cm := Comm{Hash: c.Hash, Size: c.Size}
		for _, r := range c.Ranks {
			cm.Ranks = append(cm.Ranks, conv(r))
		}
		for _, r := range c.Missing {
			cm.Missing = append(cm.Missing, conv(r))
		}
		st.Comms = append(st.Comms, cm)
	}
	return st, nil
}

var (
	textVersion = regexp.MustCompile(`^NCCL version (\S+)`)
	textProcess = regexp.MustCompile(`^\s+Process (\d+) on node (\S+) managing GPU (\d+)`)
	textRank    = regexp.MustCompile(`^\s+Rank (\d+) -- GPU (\d+) managed by process (\d+) on node (\S+)`)
	textRankErr = regexp.MustCompile(`^\s+Rank (\d+) reported (.+?) -- GPU (\d+) managed by process (\d+) on node (\S+)`)
	textLaunch  = regexp.MustCompile(`^\s+Rank (\d+) has launched up to operation (\d+) -- GPU (\d+) managed by process (\d+) on node (\S+)`)
	textAhead   = regexp.MustCompile(`^\s+\d+ ranks? ha(?:ve|s) launched up to operation (\d+)`)
	textComm    = regexp.MustCompile(`^#\d+-\d+ \(([0-9a-f]+)\) (\S+)`)
	textHeading = regexp.MustCompile(`^(INCOMPLETE|DEAD|ERROR|MISMATCH|TIMEOUT|INCONSISTENT|[A-Z][A-Z_]+)$`)
)

// ParseText reads a RAS answer in text form (STATUS, VERBOSE STATUS or
// ncclras): the version, the problem headings, and the ranks its Errors
// and Warnings sections name (missing, dead, reporting an error, or behind
// in a MISMATCH). Per-rank counts of a healthy job are not in the text.
func ParseText(b []byte) (*Status, error) {
	st := &Status{Format: "text"}
	if !bytes.Contains(b, []byte("Job summary")) && !bytes.Contains(b, []byte("NCCL version")) {
		return nil, errors.New("RAS text: no 'NCCL version' or 'Job summary'")
	}
	comms := map[string]*Comm{}
	var order []string
	var cur *Comm
	heading := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if m := textVersion.FindStringSubmatch(l); m != nil && st.NCCLVersion == "" {
			st.NCCLVersion = m[1]
			continue
		}
		if m := textComm.FindStringSubmatch(l); m != nil {
			c, ok := comms[m[1]]
			if !ok {
				c = &Comm{Hash: "0x" + m[1]}
				comms[m[1]] = c
				order = append(order, m[1])
			}
			cur, heading = c, m[2]
			if !contains(st.Problems, m[2]) {
				st.Problems = append(st.Problems, m[2])
			}
			continue
		}
		if m := textHeading.FindStringSubmatch(l); m != nil && !strings.HasPrefix(l, "=") {
			cur, heading = nil, m[1]
			if !contains(st.Problems, m[1]) {
				st.Problems = append(st.Problems, m[1])
			}
			continue
		}
		if m := textProcess.FindStringSubmatch(l); m != nil && heading == "DEAD" {
			st.Dead = append(st.Dead, Rank{Rank: -1, PID: atoi(m[1]), Host: m[2], GPU: atoi(m[3]), Dead: true})
			continue
		}
		if cur == nil {
			continue
		}
		if m := textLaunch.FindStringSubmatch(l); m != nil {
			cur.Lagging = append(cur.Lagging, Rank{Rank: atoi(m[1]), GPU: atoi(m[3]), PID: atoi(m[4]), Host: m[5],
				Counts: map[string]int64{"launched": int64(atoi(m[2]))}})
			continue
		}
		if m := textAhead.FindStringSubmatch(l); m != nil {
			cur.Ahead = int64(atoi(m[1]))
			continue
		}
		if m := textRankErr.FindStringSubmatch(l); m != nil {
			cur.Ranks = append(cur.Ranks, Rank{Rank: atoi(m[1]), Error: m[2], AsyncError: -1, GPU: atoi(m[3]), PID: atoi(m[4]), Host: m[5]})
			continue
		}
		if m := textRank.FindStringSubmatch(l); m != nil && heading == "INCOMPLETE" {
			cur.Missing = append(cur.Missing, Rank{Rank: atoi(m[1]), GPU: atoi(m[2]), PID: atoi(m[3]), Host: m[4]})
		}
	}
	for _, h := range order {
		st.Comms = append(st.Comms, *comms[h])
	}
	sort.Strings(st.Problems)
	return st, sc.Err()
}

// Parse reads a RAS answer in either form.
func Parse(b []byte) (*Status, error) {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		return ParseJSON(b)
	}
	return ParseText(b)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
