package results

import "bytes"

// PreTagInfo finds the INFO line of NCCL releases before 2.3, whose
// prefix lacks the word NCCL: "host:pid:tid [dev] INFO message". It
// returns the end of the "host:pid:tid [dev] " prefix and the start of the
// message, or -1, -1 when the line is not one. NCCL 2.3 and later print
// "host:pid:tid [dev] NCCL INFO " (src/include/debug.h, v2.3.5-5).
func PreTagInfo(line []byte) (prefixEnd, msg int) {
	j := bytes.Index(line, []byte("] INFO "))
	if j < 0 {
		return -1, -1
	}
	// a host name has a letter: a time of day ("12:00:00 [12] INFO") is
	// no host
	h, ok := NCCLOrigin(line[:j+2])
	if !ok || digits(bytes.ReplaceAll(bytes.ReplaceAll(h, []byte("."), nil), []byte("-"), nil)) {
		return -1, -1
	}
	return j + 2, j + len("] INFO ")
}

// BareNetNote finds a net plugin's message pasted without NCCL's opening:
// the OFI plugin (aws-ofi-nccl) prints every line through NCCL's logger
// with "NET/OFI " in front (include/nccl_ofi_log.h, NCCL_OFI_INFO and
// NCCL_OFI_WARN), and NCCL its plugin loading with "NET/Plugin"
// ("NET/Plugin : No plugin found", src/net.cc v2.18.3-1; "NET/Plugin: Loaded
// net plugin %s", src/plugin/net/net_v10.cc v2.30.7-1). It returns where the message starts, or
// -1 when the line is not one.
func BareNetNote(line []byte) int {
	t := bytes.TrimLeft(line, " \t")
	if bytes.HasPrefix(t, []byte("NET/OFI ")) || bytes.HasPrefix(t, []byte("NET/Plugin")) && len(t) > len("NET/Plugin") && (t[len("NET/Plugin")] == ':' || t[len("NET/Plugin")] == ' ') {
		return len(line) - len(t)
	}
	return -1
}

// NCCLHostClash is two ranks that NCCL connects through P2P or SHM, the
// transports it uses only between ranks it takes for one host, printed on
// one host with one GPU: "Ring 00 : 6[6] -> 10[2] via P2P/IPC" where
// rank 2 is also on GPU 2.
type NCCLHostClash struct {
	Host  string `json:"host"`
	Ranks [2]int `json:"ranks"`
	GPU   string `json:"gpu"`
	Line  string `json:"line"`
}

// hostGPUs is what one host's P2P and SHM lines say of which rank is on
// which GPU (the bracketed id: the CUDA device before NCCL 2.5, the PCI
// bus id since).
type hostGPUs struct {
	host  string
	rank  map[int]string // rank → GPU id
	gpu   map[string]int // GPU id → first rank
	clash *NCCLHostClash
	// sender is the rank each process and device ("pid[dev]") prints
	// first in its lines: NCCL prints a P2P or SHM connection on the
	// sending rank, its own rank first
	sender map[string]int
	// remapped: one rank on two GPUs, or one process and device printing
	// two ranks of its own, so the lines hold several communicators
	// (ranks are numbered per communicator)
	remapped bool
}

// intraHostLine reads "a[x] -> b[y] via P2P/…" or "via SHM/…" of the
// current host.
func (l *NCCLLog) intraHostLine(msg, t []byte) {
	if len(l.lastHost) == 0 || !hasPrefix(t, "P2P") && !hasPrefix(t, "SHM") {
		return
	}
	c := index(msg, " : ")
	if c < 0 {
		return
	}
	a, x, rest, ok := rankGPU(msg[c+3:])
	if !ok || !hasPrefix(rest, " -> ") {
		return
	}
	b, y, _, ok := rankGPU(rest[4:])
	if !ok {
		return
	}
	var h *hostGPUs
	for i := range l.hostGPU {
		if l.hostGPU[i].host == string(l.lastHost) {
			h = &l.hostGPU[i]
			break
		}
	}
	if h == nil {
		if len(l.hostGPU) >= maxListed {
			return
		}
		l.hostGPU = append(l.hostGPU, hostGPUs{host: string(l.lastHost), rank: map[int]string{}, gpu: map[string]int{}, sender: map[string]int{}})
		h = &l.hostGPU[len(l.hostGPU)-1]
	}
	if k := processKey(l.cur); k != "" {
		if prev, ok := h.sender[k]; ok && prev != a {
			h.remapped = true
		} else if !ok && len(h.sender) < maxKeys {
			h.sender[k] = a
		}
	}
	h.add(a, string(x), msg)
	h.add(b, string(y), msg)
}

func (h *hostGPUs) add(rank int, gpu string, msg []byte) {
	if g, ok := h.rank[rank]; ok {
		if g != gpu {
			h.remapped = true
		}
		return
	}
	if len(h.rank) >= maxKeys {
		return
	}
	h.rank[rank] = gpu
	if r, ok := h.gpu[gpu]; ok {
		if h.clash == nil {
			h.clash = &NCCLHostClash{Host: h.host, Ranks: [2]int{r, rank}, GPU: gpu, Line: string(bytes.ToValidUTF8(msg, []byte("?")))}
		}
		return
	}
	h.gpu[gpu] = rank
}

// processKey is "pid[dev]" of NCCL's "host:pid:tid [dev] " prefix, ""
// when the prefix is not one.
func processKey(prefix []byte) string {
	p := bytes.TrimRight(prefix, " ")
	if len(p) < 3 || p[len(p)-1] != ']' {
		return ""
	}
	o := bytes.LastIndexByte(p, '[')
	if o < 2 || p[o-1] != ' ' {
		return ""
	}
	dev := p[o:]
	tok := p[:o-1]
	c2 := bytes.LastIndexByte(tok, ':')
	if c2 <= 0 {
		return ""
	}
	c1 := bytes.LastIndexByte(tok[:c2], ':')
	if c1 < 0 || !digits(tok[c1+1:c2]) {
		return ""
	}
	return string(tok[c1+1:c2]) + string(dev)
}

// rankGPU reads "12[1a000]" at the start of b.
func rankGPU(b []byte) (rank int, gpu, rest []byte, ok bool) {
	n := 0
	for n < len(b) && b[n]-'0' <= 9 {
		n++
	}
	if n == 0 || n > 9 || n >= len(b) || b[n] != '[' {
		return 0, nil, nil, false
	}
	rank, _ = leadingInt(b[:n])
	e := bytes.IndexByte(b[n:], ']')
	if e < 2 || e > 17 {
		return 0, nil, nil, false
	}
	return rank, b[n+1 : n+e], b[n+e+1:], true
}

// HostClash is the first pair of ranks on one GPU of one host among the
// P2P and SHM lines, on a host whose lines name at least two GPUs and no
// rank on two GPUs; nil when there is none.
func (l *NCCLLog) HostClash() *NCCLHostClash {
	for i := range l.hostGPU {
		h := &l.hostGPU[i]
		if h.clash != nil && !h.remapped && len(h.gpu) >= 2 {
			return h.clash
		}
	}
	return nil
}

// BareConnection reads an NCCL connection message pasted without the
// log's opening ("9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA",
// "Channel 00/0 : 0[0] -> 1[0] via P2P/IPC"): it returns where the
// message starts and the rank that printed it (NCCL prints a connection
// on the sending rank, a "[receive]" one on the receiving rank), or -1.
func BareConnection(line []byte) (msg, printer int) {
	if !bytes.Contains(line, []byte(" via ")) {
		return -1, -1
	}
	start := len(line) - len(bytes.TrimLeft(line, " \t"))
	t := line[start:]
	if rest, ok := bytes.CutPrefix(t, []byte("Channel ")); ok {
		_, after, found := bytes.Cut(rest, []byte(" : "))
		if !found || len(rest)-len(after) > 12 {
			return -1, -1
		}
		t = after
	}
	from, _, t, ok := rankGPU(t)
	if !ok {
		return -1, -1
	}
	t, ok = bytes.CutPrefix(t, []byte(" -> "))
	if !ok {
		return -1, -1
	}
	to, _, t, ok := rankGPU(t)
	if !ok {
		return -1, -1
	}
	printer = from
	if r, ok := bytes.CutPrefix(t, []byte(" [receive]")); ok {
		t, printer = r, to
	} else if r, ok := bytes.CutPrefix(t, []byte(" [send]")); ok {
		t = r
	}
	if !bytes.HasPrefix(t, []byte(" via ")) || len(bytes.TrimSpace(t[len(" via "):])) == 0 {
		return -1, -1
	}
	return start, printer
}
