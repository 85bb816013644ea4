package results

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// NCCLLog is what NCCL_DEBUG=INFO lines say about how NCCL set itself up.
// It is filled line by line (Observe) so a log of any size is read in one
// pass with bounded memory: every list is capped.
type NCCLLog struct {
	// InfoLines counts "NCCL INFO" lines; zero means the input had none.
	InfoLines int64 `json:"info_lines"`
	// Version is the library version, e.g. "2.28.9+cuda13.0".
	Version string `json:"nccl_version,omitempty"`
	// CUDADriver is the cudaDriverVersion code, e.g. 13000 for CUDA 13.0.
	CUDADriver int `json:"cuda_driver_version,omitempty"`
	// Network is the net plugin NCCL chose ("IB", "Socket", "AWS Libfabric").
	Network string `json:"network,omitempty"`
	// NetNotes are the lines that explain the choice, e.g. "NET/IB : No device found.".
	NetNotes []string `json:"net_notes,omitempty"`
	// IBDevices are the devices of "NET/IB : Using [0]mlx5_4:1/RoCE ...".
	IBDevices []NCCLNetDevice `json:"ib_devices,omitempty"`
	// SocketDevices are the interfaces of "NET/Socket : Using [0]eno1:10.0.0.1<0>".
	SocketDevices []string `json:"socket_devices,omitempty"`
	// RelaxedOrdering is true when the NET/IB line carries "[RO]".
	RelaxedOrdering bool `json:"relaxed_ordering,omitempty"`
	// OOB is the out-of-band interface NET/IB uses, e.g. "enp1s0f1np1:192.168.100.16<0>".
	OOB string `json:"oob,omitempty"`
	// Bootstrap is the bootstrap interface, e.g. "eth0:10.11.13.106<0>".
	Bootstrap string `json:"bootstrap,omitempty"`
	// GDRDisabledHCAs lists HCAs named in "GPU Direct RDMA Disabled for HCA".
	GDRDisabledHCAs []string `json:"gdr_disabled_hcas,omitempty"`
	// GDREnabledHCAs lists HCAs named in "GPU Direct RDMA Enabled for HCA".
	GDREnabledHCAs []string `json:"gdr_enabled_hcas,omitempty"`
	// RingGDR is the "GDR n" of "Connected all rings ... GDR n"; nil if absent.
	RingGDR *int `json:"ring_gdr,omitempty"`
	// Transports counts channel connections by transport as printed after
	// "via", e.g. "NET/IB/0", "P2P/IPC/read", "SHM/direct/direct", "NET/IB/1/GDRDMA".
	Transports map[string]int64 `json:"transports,omitempty"`
	// Channels is the highest "Channel xx/NN" ring count seen, CollChannels
	// the "N coll channels" count.
	Channels     int `json:"channels,omitempty"`
	CollChannels int `json:"coll_channels,omitempty"`
	NRanks       int `json:"nranks,omitempty"`
	NNodes       int `json:"nnodes,omitempty"`
	LocalRanks   int `json:"local_ranks,omitempty"`
	// Env holds NCCL variables the log says were set ("set by environment to",
	// "set to") or that a command line in the input assigns.
	Env map[string]string `json:"env,omitempty"`
	// P2PRefused counts "Could not enable P2P between dev" lines.
	P2PRefused int64 `json:"p2p_refused,omitempty"`
	// RoCE GID index and path MTU per NCCL device, from the QP lines.
	GIDs []NCCLGID `json:"gids,omitempty"`
	// Warnings are the first "NCCL WARN" messages; WarnCount counts them all.
	Warnings  []string `json:"warnings,omitempty"`
	WarnCount int64    `json:"warn_count,omitempty"`
	// Hosts are the host names that prefix the INFO lines.
	Hosts []string `json:"hosts,omitempty"`
	// Attention are the first "NCCL ATTN" messages (NCCL >= 2.32), AttnCount counts them all.
	Attention []string `json:"attention,omitempty"`
	AttnCount int64    `json:"attn_count,omitempty"`
	// Diag are the first "NCCL DIAG [LEVEL] message" lines of NCCL's own
	// diagnostics (NCCL >= 2.31); DiagCounts counts them by level.
	Diag       []NCCLDiag       `json:"diag,omitempty"`
	DiagCounts map[string]int64 `json:"diag_counts,omitempty"`
	// RevisionMismatch is the WARN/ATTN line saying that ranks run
	// different NCCL builds (NCCL >= 2.32 reports it at init).
	RevisionMismatch string `json:"revision_mismatch,omitempty"`
	// SharedGPU is the first pair of ranks of one communicator whose
	// "Init START" lines name one host and one busId: two ranks on one GPU.
	SharedGPU *NCCLSharedGPU `json:"shared_gpu,omitempty"`
	// ProcEnv is, per process whose INFO lines show NCCL variables or
	// "Init COMPLETE", what they show: the first maxProcEnv processes.
	ProcEnv []NCCLProcEnv `json:"-"`
	// BootstrapFail is the first of NCCL's error-return traces from its
	// bootstrap ("bootstrap.cc:270 -> 2"): the bootstrap failed.
	BootstrapFail string `json:"bootstrap_fail,omitempty"`

	hostSet map[string]struct{}
	// gpuRank is the first rank seen per host, commId and busId
	gpuRank map[string]int
	// netGDR counts, per host that printed them, NET channel connections
	// with GPUDirect RDMA and receive connections without it
	netGDR []hostGDR
	// hostGPU is, per host, which rank its P2P and SHM lines put on which GPU
	hostGPU []hostGPUs
	// cur is the prefix of the INFO line being read ("host:pid:tid [dev] ")
	cur []byte
	// lastHost is the host of the line being read: hostBuf, or an
	// opening's hostCopy (neither written once lastHost names it)
	lastHost  []byte
	hostBuf   []byte
	transport map[string]*int64
	// lastTransports are the counters of transport the last connection
	// lines named, found again without the map's hash (lastTransport
	// is the one written last)
	lastTransports [2]transportCount
	lastTransport  int
	// comms is what comm read of the last few messages it was handed: a
	// message read again is not searched again
	comms recentRead[commFields]
	// envSeen are the last few variable lines envLine read, each with
	// the opening before it ("opening\nmessage"), and envGen counts the
	// changes to Env and ProcEnv: a line read again by the same opening
	// while envGen is what it was after the first changes nothing
	envSeen recentRead[int]
	envKey  []byte
	envGen  int
	// procs are the last few openings procEnv read, each with its
	// record's index in ProcEnv (-1: none)
	procs   recentRead[int]
	scratch [][]byte
	devs    []NCCLNetDevice // scratch for ibUsing
	// ibGen counts changes to IBDevices; usingDevs is the device list of
	// the last "Using" line, read when IBDevices was at usingGen
	ibGen, usingGen int
	usingDevs       []byte
	// speeds are the last few per-device lines ("NET/IB: [n] dev:...
	// speed=...") netIB read, each with ibGen after it: every rank prints
	// them, and one read again while IBDevices is as it left it changes
	// nothing
	speeds recentRead[int]
	// gids are the last few QP lines gid read: GIDs only grows, and a
	// line read again changes nothing; gdrLines the same of the "GPU
	// Direct RDMA ... for HCA" lines and their lists
	gids, gdrLines recentRead[struct{}]
	// usings are the last "Using" lines ibUsing read (one per host, each
	// with its OOB), with where their device list ends
	usings    [2]usingLine
	nextUsing int
	strs      recentStrings
	// opens are the last openings ownTag read (tagAt); lastOpen is the
	// one the line last read opened with
	opens              [8]opening
	nextOpen, lastOpen int
	// hostGen counts the changes to lastHost
	hostGen int
	// bare is set while a connection message pasted without its opening
	// is read, bareRank the rank that printed it
	bare     bool
	bareRank int
	// quietInfo is set when the line last observed was an INFO line that
	// reports no failure
	quietInfo bool
	// initDone counts "Init COMPLETE" lines; infoAtInit and connAtInit are
	// InfoLines and connLines at the last one, connLines the channel and
	// "Connected all" lines read
	initDone, infoAtInit, connAtInit, connLines int64
}

// QuietInfo reports whether the line last observed was an NCCL INFO line
// that reports no failure: most of a log, and nothing an error catalogue
// needs to see.
func (l *NCCLLog) QuietInfo() bool { return l.quietInfo }

func (l *NCCLLog) str(b []byte) string { return l.strs.get(b) }

// recentStrings turns bytes into strings, reusing one made lately: a log
// repeats its values (addresses, HCA and GPU names, variables) once per
// rank and communicator.
type recentStrings struct {
	s    [16]string
	next int
}

func (r *recentStrings) get(b []byte) string {
	for _, s := range r.s {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	r.s[r.next] = s
	r.next = (r.next + 1) % len(r.s)
	return s
}

// NCCLDiag is one line of NCCL's diagnostics: "host:pid NCCL DIAG [OK] ...".
type NCCLDiag struct {
	Host    string `json:"host,omitempty"`
	Level   string `json:"level"` // OK, INFO, WARN...
	Message string `json:"message"`
}

// NCCLSharedGPU is two ranks of one communicator on one host's GPU.
type NCCLSharedGPU struct {
	Host   string `json:"host"`
	CommID string `json:"comm_id"`
	BusID  string `json:"bus_id"`
	Ranks  [2]int `json:"ranks"`
	// Line is the second rank's "Init START" message.
	Line string `json:"line"`
}

// NCCLNetDevice is one network device NCCL uses.
type NCCLNetDevice struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	Port  int    `json:"port,omitempty"`
	Link  string `json:"link,omitempty"` // "RoCE" or "IB"
	// SpeedMbps comes from the per-device "NET/IB: [n] dev:uverbsN:1/RoCE ... speed=200000" line.
	SpeedMbps int `json:"speed_mbps,omitempty"`
}

// NCCLGID is the GID index and path MTU one NCCL device uses.
type NCCLGID struct {
	Dev      int `json:"dev"`
	GIDIndex int `json:"gid_index"`
	// MTU is the IB path MTU in bytes (the log prints the enum: 3 = 1024, 5 = 4096).
	MTU int `json:"mtu"`
}

const (
	maxListed = 64
	maxKeys   = 256
)

var (
	tagNCCL = []byte("NCCL ")
	tagInfo = []byte("NCCL INFO ")
	tagWarn = []byte("NCCL WARN ")
	tagAttn = []byte("NCCL ATTN ")
	tagDiag = []byte("NCCL DIAG ")
)

// Observe reads one line (launcher prefix already removed) and reports
// whether it was an NCCL log line.
func (l *NCCLLog) Observe(line []byte) bool {
	l.quietInfo = false
	i, o := l.tagAt(line)
	// an INFO line, most of a log, in a function small enough to keep its
	// values in registers; the rest in observe
	if i >= 0 && len(line)-i >= len(tagInfo) && string(line[i+len(tagNCCL):i+len(tagInfo)]) == "INFO " {
		l.InfoLines++
		l.hostOf(o, line[:i])
		msg := line[i+len(tagInfo):]
		l.quietInfo = quietInfo(msg)
		l.cur = line[:i]
		l.info(msg)
		return true
	}
	return l.observe(line, i)
}

// quietInfo: an INFO message that reports no failure. The few that do
// (a net plugin that does not load says so in an INFO line) are told by
// their first byte first, and the words compared as constants (loads, not
// a call).
func quietInfo(msg []byte) bool {
	return len(msg) == 0 || !alarmFirst[msg[0]] || quietAlarm(msg)
}

// alarmFirst holds the first bytes of the INFO messages quietAlarm tells.
var alarmFirst = byteSet("FCNns")

// quietAlarm is quietInfo for a message that starts with a byte of alarmFirst.
func quietAlarm(msg []byte) bool {
	switch msg[0] {
	case 'F':
		return len(msg) < 6 || string(msg[:6]) != "Failed"
	case 'C':
		// from 2.27 a NCCL_TOPO_FILE that cannot be opened is an INFO
		// line (src/graph/xml.cc v2.27.3-1:391)
		return (len(msg) < 7 || string(msg[:7]) != "Call to") && (len(msg) < 18 || string(msg[:18]) != "Could not open XML")
	case 'N':
		return len(msg) < 10 || string(msg[:10]) != "NET/Plugin"
	case 'n':
		// NCCL 2.25: kernels that do not fit the GPU's shared memory
		if len(msg) >= 16 && string(msg[:16]) == "ncclMaxSharedMem" {
			return false
		}
		return !connectRetry(msg)
	case 's':
		// NCCL 2.30.7: a peer of the other transport's socket type
		// ("socketFinalizeAccept from %s: wrong socket type ...",
		// src/misc/socket.cc v2.30.7-1:378-381)
		if len(msg) >= 20 && string(msg[:20]) == "socketFinalizeAccept" {
			return false
		}
		return !connectRetry(msg)
	}
	return true
}

// connectRetry: the INFO line of a socket connection NCCL retries,
// "%s: connect to %s returned %s, retrying" with the function's name
// first ("socketPollConnect", "ncclSocketConnect": src/misc/socket.cc
// v2.27.3-1, src/os/linux.cc v2.30.7-1). The address it names can tell
// why the connection fails.
func connectRetry(msg []byte) bool {
	// only the socket functions print it: a word compare keeps the other
	// INFO lines starting with n or s (ncclCommInitRank, ...) cheap
	if !(len(msg) > 6 && string(msg[:6]) == "socket" || len(msg) > 10 && string(msg[:10]) == "ncclSocket") {
		return false
	}
	head := msg[:min(len(msg), 48)]
	return bytes.Contains(head, []byte(": connect to "))
}

// byteSet is a lookup table of the bytes of s.
func byteSet(s string) (set [256]bool) {
	for i := range len(s) {
		set[s[i]] = true
	}
	return set
}

// observe reads a line that is not an INFO line of NCCL's own opening; i
// is where its "NCCL " stands (-1 when nowhere).
func (l *NCCLLog) observe(line []byte, i int) bool {
	if i < 0 {
		if p, m := PreTagInfo(line); m > 0 {
			l.InfoLines++
			l.host(line[:p])
			l.quietInfo = true
			l.cur = line[:p]
			l.info(line[m:])
			return true
		}
		if m := BareNetNote(line); m >= 0 {
			// a net plugin's message without NCCL's opening
			// (INFO or WARN unknown: its words are matched as an error
			// line's too)
			l.InfoLines++
			l.cur = nil
			l.info(line[m:])
			return true
		}
		if m, printer := BareConnection(line); m >= 0 {
			// a connection message pasted without its opening: its
			// GPUDirect RDMA is told per printing rank, the host unknown
			l.InfoLines++
			l.quietInfo = true
			l.bare, l.bareRank = true, printer
			l.connLines++
			l.channel(line[m:])
			l.bare = false
			return true
		}
		if bytes.Contains(line, []byte("NCCL_")) && bytes.Contains(line, []byte("=")) {
			l.commandEnv(line)
		}
		return false
	}
	rest := line[i:]
	switch {
	// rest starts with "NCCL ": compare the word after it by hand
	case bytes.HasPrefix(rest, tagWarn):
		l.host(line[:i])
		l.WarnCount++
		msg := bytes.TrimSpace(rest[len(tagWarn):])
		if len(l.Warnings) < 20 {
			l.Warnings = append(l.Warnings, string(msg))
		}
		l.revision(msg)
		return true
	case bytes.HasPrefix(rest, tagAttn):
		l.host(line[:i])
		l.AttnCount++
		msg := bytes.TrimSpace(rest[len(tagAttn):])
		if len(l.Attention) < 20 {
			l.Attention = append(l.Attention, string(msg))
		}
		l.revision(msg)
		return true
	case bytes.HasPrefix(rest, tagDiag):
		l.diag(line[:i], bytes.TrimSpace(rest[len(tagDiag):]))
		return true
	case hasPrefix(rest, "NCCL version "):
		// NCCL <= 2.22 prints the version without the INFO prefix.
		l.setVersion(rest[len("NCCL version "):])
		return true
	}
	if bytes.Contains(line, []byte("NCCL_")) && bytes.Contains(line, []byte("=")) {
		l.commandEnv(line)
	}
	return false
}

// tagAt is bytes.Index(line, tagNCCL), and the opening the line starts
// with where it opens with NCCL's own "host:pid:tid [dev] NCCL " (most
// lines of a log): no "NCCL " can stand earlier, as the host has no blank
// and the rest is digits, ':', '[' and ']'.
//
// A log's lines come from a few processes and threads, each opening its
// lines alike: the last few openings are kept, and a line that starts
// with one of them is told by comparing words instead of reading it byte
// by byte (ownTag reads nothing past the tag, so the answer is the same).
func (l *NCCLLog) tagAt(line []byte) (int, *opening) {
	if k, o := l.openingAt(line); o != nil {
		l.lastOpen = k
		return len(o.b) - len(tagNCCL), o
	}
	if h, i := ownTag(line); i > 0 {
		end := i + len(tagNCCL)
		if end > maxOpening {
			return i, nil
		}
		k := l.nextOpen
		l.nextOpen = (k + 1) % len(l.opens)
		l.lastOpen = k
		o := &l.opens[k]
		*o = opening{b: append(o.b[:0], line[:end]...), host: h, hostGen: -1}
		o.words()
		return i, o
	}
	return bytes.Index(line, tagNCCL), nil
}

// maxOpening bounds a kept "host:pid:tid [dev] NCCL " opening.
const maxOpening = 128

// opening is one "host:pid:tid [dev] NCCL " a line opened with.
type opening struct {
	b []byte
	// host is where the host ends in b
	host int
	// hostGen is the NCCLLog's hostGen when lastHost was last made this
	// opening's host; hosted: host() has read this host once
	hostGen int
	hosted  bool
	// hostCopy is b's host, made once hosted is set and never written
	// after: lastHost may name it, so a host switch copies nothing
	hostCopy []byte
	// w are b's bytes as little-endian words: w[k] the eight at 8k, and
	// w[last] the last eight (which may overlap the word before)
	w    [maxOpening / 8]uint64
	last int
	// plain: b opens as a line the paste reader hands on unchanged does
	// (plainStart), so the lines that open with it may be read in place
	plain bool
	// iw are the words of b followed by "INFO " (an INFO line's opening)
	// and im the masks of their bytes that belong to it; iw is all zero
	// where that is over infoWords words or b is not plain (infoAt then
	// tells nothing: the quiet lines read are those of plain openings)
	iw, im [infoWords]uint64
}

// infoWords is how many words infoAt compares: an INFO opening of up to
// 48 bytes (a host of up to 25 bytes with pid, tid and device of five
// digits each, or a longer host with shorter numbers).
const infoWords = 6

// words fills w from b (at least the 15 bytes of the shortest opening
// ownTag reads).
func (o *opening) words() {
	n := len(o.b)
	for k := 0; k+8 < n; k += 8 {
		o.w[k/8] = binary.LittleEndian.Uint64(o.b[k:])
	}
	o.last = (n - 1) / 8
	o.w[o.last] = binary.LittleEndian.Uint64(o.b[n-8:])
	o.plain = plainStart(o.b)
	o.iw, o.im = [infoWords]uint64{}, [infoWords]uint64{}
	if o.plain && n+len("INFO ") <= 8*infoWords {
		var p [8 * infoWords]byte
		copy(p[copy(p[:], o.b):], "INFO ")
		for k := range o.iw {
			o.iw[k] = binary.LittleEndian.Uint64(p[8*k:])
			for j := 8 * k; j < 8*k+8 && j < n+len("INFO "); j++ {
				o.im[k] |= 0xff << (8 * (j - 8*k))
			}
		}
	}
}

// infoAt: line opens with o followed by "INFO ", where o is plain and
// its INFO opening fits in infoWords words; line holds at least that many words (the bytes
// after the opening, masked off, may be of the lines after it). The
// words are compared without a branch each.
func (o *opening) infoAt(line []byte) bool {
	if len(line) < 8*infoWords || o.im[0] == 0 {
		return false
	}
	line = line[:8*infoWords]
	d := (binary.LittleEndian.Uint64(line[0:]) ^ o.iw[0]) & o.im[0]
	d |= (binary.LittleEndian.Uint64(line[8:]) ^ o.iw[1]) & o.im[1]
	d |= (binary.LittleEndian.Uint64(line[16:]) ^ o.iw[2]) & o.im[2]
	d |= (binary.LittleEndian.Uint64(line[24:]) ^ o.iw[3]) & o.im[3]
	d |= (binary.LittleEndian.Uint64(line[32:]) ^ o.iw[4]) & o.im[4]
	d |= (binary.LittleEndian.Uint64(line[40:]) ^ o.iw[5]) & o.im[5]
	return d == 0
}

// plainStart: a line that starts with b (two bytes or more) opens as one
// the paste reader and the parsers hand on unchanged: a lower-case letter
// (a host), not "nThread", "nccl-tests" or "size" (a header whose "#" a
// paste lost).
func plainStart(b []byte) bool {
	return len(b) >= 2 && b[0]-'a' <= 'z'-'a' && !(b[0] == 'n' && (b[1] == 'T' || b[1] == 'c') || b[0] == 's' && b[1] == 'i')
}

// match: line opens with o. The bytes are compared a word at a time:
// the first (the openings of a log most often differ there, in the
// host), then the middle ones, then the last, which ends at b's end and
// may overlap the one before.
func (o *opening) match(line []byte) bool {
	n := len(o.b)
	if n < 8 || len(line) < n || binary.LittleEndian.Uint64(line) != o.w[0] {
		return false
	}
	// the two middle words of an opening of 17 to 32 bytes (most are) at
	// offsets the compiler knows
	if n > 16 && binary.LittleEndian.Uint64(line[8:16]) != o.w[1] ||
		n > 24 && binary.LittleEndian.Uint64(line[16:24]) != o.w[2] ||
		n > 32 && !o.matchLong(line) {
		return false
	}
	return binary.LittleEndian.Uint64(line[n-8:n]) == o.w[o.last&(len(o.w)-1)]
}

// matchLong compares the middle words of an opening over 32 bytes from
// the fourth on (an index masked with len(o.w)-1, a power of two, needs
// no bounds check).
func (o *opening) matchLong(line []byte) bool {
	for j := 3; j < o.last; j++ {
		if binary.LittleEndian.Uint64(line[8*j:]) != o.w[j&(len(o.w)-1)] {
			return false
		}
	}
	return true
}

// hostOf makes lastHost the host of a line that opens with o (nil where it
// opens otherwise) and prefix before its tag: what host(prefix) does, told
// without reading the prefix again once host has read o's host (after
// which host(prefix) only sets lastHost: the host is listed or the list is
// full).
func (l *NCCLLog) hostOf(o *opening, prefix []byte) {
	switch {
	case o == nil:
		l.host(prefix)
	case o.hostGen == l.hostGen:
	case o.hosted:
		l.lastHost = o.hostCopy
		l.hostGen++
		o.hostGen = l.hostGen
	default:
		l.host(prefix)
		// NCCLOrigin reads a host after a '|' or a tab: the shortcut
		// only where host() took the opening's own
		o.hosted, o.hostGen = string(l.lastHost) == string(o.b[:o.host]), l.hostGen
		if o.hosted && o.hostCopy == nil {
			o.hostCopy = bytes.Clone(l.lastHost)
		}
	}
}

// ownTag reads "host:pid:tid [dev] NCCL " at the start of line: the end of
// the host and the start of the tag, or tag -1 when the line opens
// otherwise.
func ownTag(line []byte) (hostEnd, tag int) {
	n := len(line)
	// the host: no blank, up to the first ':' (a loop: a host is short,
	// and a call to IndexByte costs more than reading it)
	c := 0
	for c < n && c < 256 && line[c] != ':' {
		if line[c] == ' ' {
			return 0, -1
		}
		c++
	}
	if c == 0 || c >= n || line[c] != ':' {
		return 0, -1
	}
	i := c + 1
	// line[i]-'0' <= 9 (a byte, so no negative): a digit
	for i < n && line[i]-'0' <= 9 {
		i++
	}
	if i == c+1 || i >= n || line[i] != ':' {
		return 0, -1
	}
	i++
	s := i
	for i < n && line[i]-'0' <= 9 {
		i++
	}
	if i == s || i+1 >= n || line[i] != ' ' || line[i+1] != '[' {
		return 0, -1
	}
	i += 2
	s = i
	for i < n && line[i]-'0' <= 9 {
		i++
	}
	if i == s || i+6 >= n || line[i] != ']' || line[i+1] != ' ' || string(line[i+2:i+7]) != "NCCL " {
		return 0, -1
	}
	return c, i + 2
}

// diag reads "[OK] message" after "host:pid NCCL DIAG ".
func (l *NCCLLog) diag(prefix, msg []byte) {
	level := "INFO"
	if len(msg) > 2 && msg[0] == '[' {
		if j := bytes.IndexByte(msg, ']'); j > 1 && j < 12 {
			level, msg = string(msg[1:j]), bytes.TrimSpace(msg[j+1:])
		}
	}
	if l.DiagCounts == nil {
		l.DiagCounts = map[string]int64{}
	}
	if _, ok := l.DiagCounts[level]; ok || len(l.DiagCounts) < 16 {
		l.DiagCounts[level]++
	}
	if len(l.Diag) >= maxListed {
		return
	}
	host := bytes.TrimSpace(prefix)
	if f := bytes.Fields(host); len(f) > 0 {
		host = f[len(f)-1]
	}
	if c := bytes.IndexByte(host, ':'); c >= 0 {
		host = host[:c]
	}
	l.Diag = append(l.Diag, NCCLDiag{Host: l.str(host), Level: level, Message: strings.ToValidUTF8(string(msg), "?")})
}

// revision keeps the first message saying that ranks run different NCCL
// builds; the wording is matched loosely ("revision"/"git" with "mismatch"
// or "differ"), as NCCL 2.32's exact text was not at hand.
func (l *NCCLLog) revision(msg []byte) {
	if l.RevisionMismatch != "" {
		return
	}
	// most WARN lines name neither: no lower-cased copy for them
	if !mentionsRevision(msg) {
		return
	}
	low := bytes.ToLower(msg)
	if (bytes.Contains(low, []byte("revision")) || bytes.Contains(low, []byte("git"))) &&
		(bytes.Contains(low, []byte("mismatch")) || bytes.Contains(low, []byte("differ"))) {
		l.RevisionMismatch = string(msg)
	}
}

// mentionsRevision: msg holds "revision" or "git" in any letter case. Each
// word is looked for from its rarer letter ('v', 'g') with IndexByte, which
// is vectorised: a byte-by-byte loop costs more on a WARN-heavy log.
func mentionsRevision(msg []byte) bool {
	for _, c := range [...]byte{'v', 'V', 'g', 'G'} {
		for i := 0; i < len(msg); i++ {
			j := bytes.IndexByte(msg[i:], c)
			if j < 0 {
				break
			}
			i += j
			if c|0x20 == 'g' {
				if i+2 < len(msg) && msg[i+1]|0x20 == 'i' && msg[i+2]|0x20 == 't' {
					return true
				}
			} else if i >= 2 && i+6 <= len(msg) && foldEqual(msg[i-2:i+6], "revision") {
				return true
			}
		}
	}
	return false
}

// foldEqual: b is the lower-case ASCII word w in any letter case.
func foldEqual(b []byte, w string) bool {
	for i := range len(w) {
		if b[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}

// setHost makes lastHost a copy of h in hostBuf, never in an opening's
// hostCopy, which lastHost may have named.
func (l *NCCLLog) setHost(h []byte) {
	l.hostBuf = append(l.hostBuf[:0], h...)
	l.lastHost = l.hostBuf
}

func (l *NCCLLog) host(prefix []byte) {
	// "host:pid:tid [dev] " precedes the tag; most lines come from the
	// host of the line before, which lastHost (no ':' in it) tells at once
	if n := len(l.lastHost); n > 0 && len(prefix) > n && prefix[n] == ':' && bytes.Equal(prefix[:n], l.lastHost) {
		return
	}
	// a host already seen, at the start of the line (no launcher prefix):
	// no need to parse the prefix
	for _, h := range l.Hosts[:min(len(l.Hosts), 16)] {
		if len(prefix) > len(h) && prefix[len(h)] == ':' && string(prefix[:len(h)]) == h {
			l.hostBuf = append(l.hostBuf[:0], h...)
			l.lastHost = l.hostBuf
			l.hostGen++
			return
		}
	}
	h, ok := NCCLOrigin(prefix)
	if !ok || len(h) == 0 || bytes.Equal(h, l.lastHost) {
		return
	}
	l.setHost(h)
	l.hostGen++
	if len(l.Hosts) <= 16 {
		for _, x := range l.Hosts {
			if x == string(h) {
				return
			}
		}
	}
	if l.hostSet == nil {
		l.hostSet = map[string]struct{}{}
	}
	if _, ok := l.hostSet[string(h)]; ok || len(l.hostSet) >= maxKeys {
		return
	}
	l.hostSet[string(h)] = struct{}{}
	l.Hosts = append(l.Hosts, string(h))
}

// NCCLOrigin finds NCCL's own "host:pid:tid [dev]" in the text before an
// NCCL tag, whatever a launcher printed in front of it (Ray's
// "(RayWorkerWrapper pid=…, ip=…)", srun --label's "0: ", mpirun
// --tag-output's "[1,0]<stdout>:", docker compose's "svc  | ", timestamps),
// and returns the host (empty where NCCL printed none). A WARN line's
// "file.cc:123" between the device and the tag is passed over.
func NCCLOrigin(prefix []byte) (host []byte, ok bool) {
	end := len(prefix)
	for end > 0 {
		j := bytes.LastIndexByte(prefix[:end], ']')
		if j < 0 {
			return nil, false
		}
		k := bytes.LastIndexByte(prefix[:j], '[')
		if k < 0 {
			return nil, false
		}
		end = k
		if k < 2 || prefix[k-1] != ' ' || !digits(prefix[k+1:j]) {
			continue
		}
		tok := prefix[:k-1]
		if s := bytes.LastIndexAny(tok, " \t|"); s >= 0 {
			tok = tok[s+1:]
		}
		for _, tag := range [][]byte{[]byte("<stdout>:"), []byte("<stderr>:")} { // mpirun --tag-output's "[1,0]<stdout>:"
			if s := bytes.LastIndex(tok, tag); s >= 0 {
				tok = tok[s+len(tag):]
			}
		}
		c2 := bytes.LastIndexByte(tok, ':')
		if c2 <= 0 || !digits(tok[c2+1:]) {
			continue
		}
		c1 := bytes.LastIndexByte(tok[:c2], ':')
		if c1 < 0 || !digits(tok[c1+1:c2]) {
			continue
		}
		host := tok[:c1]
		// a host name has no ':': one before it ends a tag ("rank3:host:pid:tid")
		if c := bytes.LastIndexByte(host, ':'); c >= 0 {
			host = host[c+1:]
		}
		return host, true
	}
	return nil, false
}

func digits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (l *NCCLLog) setVersion(v []byte) {
	if l.Version != "" {
		return
	}
	l.scratch = appendFields(l.scratch[:0], v)
	if len(l.scratch) > 0 {
		l.Version = string(l.scratch[0])
	}
}

func (l *NCCLLog) info(msg []byte) {
	if len(msg) < 2 {
		return
	}
	// dispatch on the first bytes: most lines match none of the prefixes,
	// and a large log is read at close to disk speed only if they cost little
	switch msg[0] {
	case 'C':
		switch {
		case hasPrefix(msg, "Channel "):
			l.connLines++
			l.channel(msg)
		case hasPrefix(msg, "Connected all"):
			l.connLines++
			if !hasPrefix(msg, "Connected all rings") {
				break
			}
			// every rank and communicator prints it: a new value only
			// where it changed, not one allocated per line
			if n, ok := intAfter(msg, " GDR "); ok && (l.RingGDR == nil || *l.RingGDR != n) {
				v := n
				l.RingGDR = &v
			}
		case hasPrefix(msg, "Could not enable P2P"):
			l.P2PRefused++
		}
	case 'R':
		// NCCL before 2.5: "Ring 00 : 6[6] -> 10[2] via P2P/IPC"
		if hasPrefix(msg, "Ring ") && index(msg, " via ") > 0 {
			l.connLines++
			l.channel(msg)
		}
	case 'N':
		switch {
		case len(msg) > 5 && msg[1] == 'E' && msg[3] == '/':
			switch msg[4] {
			case 'I':
				if hasPrefix(msg, "NET/IB") {
					l.netIB(msg)
				}
			case 'S':
				if hasPrefix(msg, "NET/Socket") {
					l.netSocket(msg)
				}
			case 'P', 'O':
				if hasPrefix(msg, "NET/Plugin") || hasPrefix(msg, "NET/OFI") {
					l.netNote(msg)
				}
			}
		case hasPrefix(msg, "NCCL version "):
			l.setVersion(msg[len("NCCL version "):])
		case hasPrefix(msg, "NVLS Head "):
			l.nvlsHead(msg)
		case hasPrefix(msg, "NCCL_"):
			l.envLine(msg)
		}
	case 'n':
		// NCCL < 2.20: "ncclCommInitRank comm 0x... rank 1 nranks 2 cudaDev 0 ..."
		if hasPrefix(msg, "ncclCommInitRank comm 0x") {
			l.comm(msg)
		} else if hasPrefix(msg, "ncclComm") {
			l.initComplete(msg) // ncclCommSplit, ncclCommInitRankConfig, ncclCommInitAll
		}
	case 'U':
		if hasPrefix(msg, "Using network ") {
			if v := bytes.TrimSpace(msg[len("Using network "):]); string(v) != l.Network {
				l.Network = string(v)
			}
		}
	case 'B':
		if hasPrefix(msg, "Bootstrap") {
			if u := afterPrefix(msg, "Using "); u != nil {
				if u = bytes.TrimSpace(u); string(u) != l.Bootstrap {
					l.Bootstrap = l.str(u)
				}
			}
		}
	case 'b':
		// NCCLCHECK's trace of a failed call: "bootstrap.cc:270 -> 2"
		if l.BootstrapFail == "" && hasPrefix(msg, "bootstrap.cc:") {
			if j := index(msg, " -> "); j > 0 && len(msg) > j+4 && msg[j+4] >= '1' && msg[j+4] <= '9' {
				l.BootstrapFail = strings.ToValidUTF8(string(bytes.TrimSpace(msg)), "?")
			}
		}
	case '[':
		// NCCL >= 2.30: "[Rank 0] ncclCommInitRankConfig comm 0x... rank 0 nranks 2 ... - Init START"
		if hasPrefix(msg, "[Rank ") {
			if j := index(msg, "] "); j > 0 {
				if k := index(msg[j:], " comm 0x"); k >= 0 {
					l.comm(msg[j+k+1:])
				}
			}
		}
	case 'c':
		switch {
		case hasPrefix(msg, "cudaDriverVersion "):
			l.CUDADriver, _ = leadingInt(msg[len("cudaDriverVersion "):])
		case hasPrefix(msg, "comm 0x"):
			l.comm(msg)
		}
	default:
		if msg[0] >= '0' && msg[0] <= '9' && index(msg, " coll channels") >= 0 {
			if n, ok := leadingInt(msg); ok {
				l.CollChannels = n
			}
		}
	}
}

// maxNVLSHeadNodes is the most nodes an "NVLS Head" line lists.
const maxNVLSHeadNodes = 20

// nvlsHead reads "NVLS Head  0:  0  8": NCCL prints it on node 0 only when
// the communicator spans nodes (connectNvls returns first when nNodes is
// 1), one head rank per node for the first 20 nodes (src/graph/connect.cc,
// v2.18.1-1 to v2.30.7-1). Where no "comm 0x… nNodes" line said otherwise,
// a line of fewer than 20 heads gives the node count.
func (l *NCCLLog) nvlsHead(msg []byte) {
	c := index(msg, ":")
	if c < 0 || l.NNodes > 0 {
		return
	}
	l.scratch = appendFields(l.scratch[:0], msg[c+1:])
	n := len(l.scratch)
	for _, f := range l.scratch {
		if !digits(f) {
			return
		}
	}
	if n >= 2 && n < maxNVLSHeadNodes {
		l.NNodes = n
	}
}

func (l *NCCLLog) netSocket(msg []byte) {
	u := afterPrefix(msg, "Using ")
	if u == nil {
		return
	}
	l.SocketDevices = l.SocketDevices[:0]
	l.scratch = appendFields(l.scratch[:0], u)
	for _, f := range l.scratch {
		if len(l.SocketDevices) < maxListed {
			l.SocketDevices = append(l.SocketDevices, string(stripIndex(f)))
		}
	}
}

func (l *NCCLLog) netNote(msg []byte) {
	if len(l.NetNotes) < maxListed {
		s := l.str(bytes.TrimSpace(msg))
		for _, n := range l.NetNotes {
			if n == s {
				return
			}
		}
		l.NetNotes = append(l.NetNotes, s)
	}
}

// hostGDR is what one host's NET channel lines say of GPUDirect RDMA.
type hostGDR struct {
	host       string
	gdr, plain int64 // connections via .../GDRDMA; receive connections without
}

// netGDRLine counts a NET channel line of the current host: NCCL prints a
// "[receive]" line on the receiving rank and a "[send]" line on the
// sender, each with "/GDRDMA" where that rank's NIC reaches its GPU's
// memory (src/transport/net.cc). A connection pasted without its opening,
// in a paste that names no host, counts for the rank that printed it.
func (l *NCCLLog) netGDRLine(msg []byte, via int, t []byte) {
	host := l.lastHost
	if l.bare {
		if len(host) > 0 {
			return // a bare line after host-tagged ones: its host is not known
		}
		host = strconv.AppendInt([]byte("rank "), int64(l.bareRank), 10)
	}
	if len(host) == 0 || !hasPrefix(t, "NET/") {
		return
	}
	gdr := bytes.Contains(t, []byte("/GDRDMA"))
	// NCCL prints "[receive]" just before " via " (at via): looked for
	// there first
	if !gdr && !(via >= 9 && string(msg[via-9:via]) == "[receive]") && index(msg, "[receive]") < 0 {
		return // a send without GDR may be GDR read alone turned off
	}
	var h *hostGDR
	for i := range l.netGDR {
		if l.netGDR[i].host == string(host) {
			h = &l.netGDR[i]
			break
		}
	}
	if h == nil {
		if len(l.netGDR) >= maxListed {
			return
		}
		l.netGDR = append(l.netGDR, hostGDR{host: string(host)})
		h = &l.netGDR[len(l.netGDR)-1]
	}
	if gdr {
		h.gdr++
	} else {
		h.plain++
	}
}

// GDRHosts lists the hosts whose NET channel lines use GPUDirect RDMA,
// and those whose receive connections all go without it.
func (l *NCCLLog) GDRHosts() (on, off []string) {
	for _, h := range l.netGDR {
		switch {
		case h.gdr > 0:
			on = append(on, h.host)
		case h.plain > 0:
			off = append(off, h.host)
		}
	}
	return on, off
}

// channel handles "Channel 00/16 : 0 1" and
// "Channel 00/0 : 0[0] -> 1[0] [receive] via NET/IB/0".
func (l *NCCLLog) channel(msg []byte) {
	// a ring line ("Channel 00/16 : 0 1") has no 'v': one byte search
	// tells it from a connection line, and " via " cannot start before
	// the blank in front of the first 'v'
	j := -1
	if v := bytes.IndexByte(msg, 'v'); v >= 0 {
		from := max(v-1, 0)
		if j = index(msg[from:], " via "); j >= 0 {
			j += from
		}
	}
	if j >= 0 {
		t := bytes.TrimSpace(msg[j+5:])
		l.netGDRLine(msg, j, t)
		l.intraHostLine(msg, t)
		l.countTransport(t)
		return
	}
	// "Channel 00/16 : ...": the '/' after the two digits is the first
	s := 10
	if !(len(msg) > 10 && msg[10] == '/' && msg[8]-'0' <= 9 && msg[9]-'0' <= 9 && hasPrefix(msg, "Channel ")) {
		s = bytes.IndexByte(msg, '/')
	}
	if s > 0 {
		if n, ok := leadingInt(msg[s+1:]); ok && n > l.Channels {
			l.Channels = n
		}
	}
}

// transportCount is a transport's key and its counter in transport.
type transportCount struct {
	key []byte
	n   *int64
}

// countTransport counts one connection line via t.
func (l *NCCLLog) countTransport(t []byte) {
	for i := range l.lastTransports {
		if c := &l.lastTransports[i]; c.n != nil && string(c.key) == string(t) {
			*c.n++
			return
		}
	}
	n := l.transport[string(t)]
	if n != nil {
		*n++
	} else {
		if l.transport == nil {
			l.transport = map[string]*int64{}
			l.Transports = map[string]int64{}
		}
		if len(l.transport) >= maxKeys {
			return
		}
		n = new(int64)
		*n = 1
		l.transport[string(t)] = n
	}
	l.lastTransport = (l.lastTransport + 1) % len(l.lastTransports)
	c := &l.lastTransports[l.lastTransport]
	c.key, c.n = append(c.key[:0], t...), n
}

func (l *NCCLLog) netIB(msg []byte) {
	// "NET/IB : X" and "NET/IB: X" both occur; dispatch on X (the two
	// separators told at once, then any run of blanks and colons)
	i := len("NET/IB")
	switch {
	case len(msg) > 9 && string(msg[6:9]) == " : ":
		i = 9
	case len(msg) > 8 && string(msg[6:8]) == ": ":
		i = 8
	}
	for i < len(msg) && (msg[i] == ' ' || msg[i] == ':') {
		i++
	}
	if i == len(msg) {
		return
	}
	rest := msg[i:]
	switch rest[0] {
	case 'U', '[', 'N', 'G':
	default:
		return // most NET/IB lines: "Made virtual device", "IbDev n Port n qpn"
	}
	switch {
	case hasPrefix(rest, "Using "):
		l.ibUsing(rest[len("Using "):])
	case rest[0] == '[':
		if gen, ok := l.speeds.get(msg); ok && gen == l.ibGen {
			return
		}
		// " speed=" cannot start in the "NET/IB : " before rest
		if j := index(rest, " speed="); j >= 0 {
			l.ibSpeed(msg, len(msg)-len(rest)+j)
		}
		l.speeds.put(msg, l.ibGen)
	case hasPrefix(rest, "NCCL Dev "):
		l.gid(msg)
	case hasPrefix(rest, "GPU Direct RDMA "):
		// the HCA lists only grow: a line read again changes nothing
		if _, ok := l.gdrLines.get(msg); ok {
			return
		}
		l.gdrLines.put(msg, struct{}{})
		// told by the byte after "GPU Direct RDMA ", then compared whole
		switch g := rest[len("GPU Direct RDMA "):]; {
		case hasPrefix(g, "Disabled for HCA"):
			l.GDRDisabledHCAs = l.addUniqueBytes(l.GDRDisabledHCAs, quoted(msg))
		case hasPrefix(g, "Enabled for HCA"):
			l.GDREnabledHCAs = l.addUniqueBytes(l.GDREnabledHCAs, quoted(msg))
		case hasPrefix(g, "(DMABUF) enabled for HCA"):
			// NCCL >= 2.2x: "GPU Direct RDMA (DMABUF) enabled for HCA 0 'rocep1s0f1'"
			l.GDREnabledHCAs = l.addUniqueBytes(l.GDREnabledHCAs, quoted(msg))
		}
	case hasPrefix(rest, "No device found"):
		l.netNote(msg)
	}
}

// ibUsing parses "[0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE [RO]; OOB enp1s0f1np1:192.168.100.16<0>".
func (l *NCCLLog) ibUsing(u []byte) {
	// a line read again whose device list is the one read last, nothing
	// changed since (the memo below): its OOB, without cutting the line
	if l.usingDevs != nil && l.usingGen == l.ibGen {
		for i := range l.usings {
			if e := &l.usings[i]; e.line != nil && bytes.Equal(u, e.line) && bytes.Equal(u[:e.devs], l.usingDevs) {
				if e.oob != l.OOB {
					l.OOB = e.oob
				}
				return
			}
		}
	}
	devs, oob, _ := cut(u, "; OOB ")
	if o := bytes.TrimSpace(oob); string(o) != l.OOB {
		l.OOB = l.str(o)
	}
	if len(u) <= maxRemembered {
		e := &l.usings[l.nextUsing]
		l.nextUsing = (l.nextUsing + 1) % len(l.usings)
		e.line, e.devs, e.oob = append(e.line[:0], u...), len(devs), l.OOB
	}
	// every rank of every communicator prints the same list: what it
	// would change, the same line changed last time
	if l.usingDevs != nil && l.usingGen == l.ibGen && bytes.Equal(devs, l.usingDevs) {
		return
	}
	list := l.devs[:0]
	if bytes.Contains(devs, []byte("={")) {
		devs = mergedDevs(devs)
	}
	l.scratch = appendFields(l.scratch[:0], devs)
	for _, f := range l.scratch {
		if bytes.Equal(f, []byte("[RO]")) {
			l.RelaxedOrdering = true
			continue
		}
		if len(f) < 2 || f[0] != '[' {
			continue
		}
		d := NCCLNetDevice{}
		close := bytes.IndexByte(f, ']')
		if close < 0 {
			continue
		}
		d.Index, _ = strconv.Atoi(string(f[1:close]))
		spec := f[close+1:]
		name, rest, _ := bytes.Cut(spec, []byte(":"))
		port, link, _ := bytes.Cut(rest, []byte("/"))
		d.Port, _ = strconv.Atoi(string(port))
		named := false
		for _, old := range l.IBDevices {
			if old.Name == string(name) {
				d.Name, named = old.Name, true
				d.SpeedMbps = old.SpeedMbps
			}
			if old.Link == string(link) {
				d.Link = old.Link
			}
		}
		if !named {
			d.Name = string(name)
		}
		if d.Link == "" {
			d.Link = string(link)
		}
		if len(list) < maxListed {
			list = append(list, d)
		}
	}
	l.devs = list
	// a log repeats its "Using" line for every communicator: keep the
	// list NCCL printed before when nothing changed
	if (len(list) > 0 || len(l.IBDevices) == 0) && !slices.Equal(list, l.IBDevices) {
		l.IBDevices = slices.Clone(list)
		l.ibGen++
	}
	l.usingDevs = append(l.usingDevs[:0], devs...)
	l.usingGen = l.ibGen
}

// usingLine is a "Using" line ibUsing read: the line, where its device
// list ends (devs) and its OOB as ibUsing set it.
type usingLine struct {
	line []byte
	devs int
	oob  string
}

// ibSpeed parses "NET/IB: [1] rocep1s0f1:uverbs1:1/RoCE provider=Mlx5 speed=200000 ...".
// j is where " speed=" starts in msg.
func (l *NCCLLog) ibSpeed(msg []byte, j int) {
	name, ok := nthFieldTo(msg, 2, ':')
	if !ok {
		return
	}
	speed, _ := leadingInt(msg[j+7:])
	for i := range l.IBDevices {
		if l.IBDevices[i].Name == string(name) {
			// every rank prints the line: a change only where the speed
			// is new (ibUsing's memo holds while IBDevices is unchanged)
			if l.IBDevices[i].SpeedMbps != speed {
				l.IBDevices[i].SpeedMbps = speed
				l.ibGen++
			}
			return
		}
	}
	if len(l.IBDevices) < maxListed {
		l.IBDevices = append(l.IBDevices, NCCLNetDevice{Index: -1, Name: string(name), SpeedMbps: speed})
		l.ibGen++
	}
}

// gid parses "NET/IB: NCCL Dev 1 IbDev 1 Port 1 qpn 704 mtu 3 GID 0 (80FE/...)";
// a line without " GID " is passed over.
func (l *NCCLLog) gid(msg []byte) {
	if _, ok := l.gids.get(msg); ok {
		return
	}
	l.gids.put(msg, struct{}{})
	j := index(msg, " GID ")
	if j < 0 {
		return
	}
	g := NCCLGID{Dev: -1, GIDIndex: -1}
	if n, ok := intAfter(msg, " Dev "); ok {
		g.Dev = n
	}
	if n, ok := intAfter(msg, " mtu "); ok && n >= 1 && n <= 5 {
		g.MTU = 128 << n
	}
	if n, ok := leadingInt(msg[j+len(" GID "):]); ok {
		g.GIDIndex = n
	}
	for _, old := range l.GIDs {
		if old == g {
			return
		}
	}
	if len(l.GIDs) < maxListed {
		l.GIDs = append(l.GIDs, g)
	}
}

// comm parses "comm 0x... rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0"
// and the older "comm 0x... rank 1 nranks 2 cudaDev 0 busId f5000 - Init COMPLETE".
func (l *NCCLLog) comm(msg []byte) {
	l.initComplete(msg)
	f, ok := l.comms.get(msg)
	if !ok {
		f.read(msg)
		l.comms.put(msg, f)
	}
	if f.nRanks.ok {
		l.NRanks = f.nRanks.n
	} else if f.nranks.ok {
		l.NRanks = f.nranks.n
	}
	if f.nNodes.ok {
		l.NNodes = f.nNodes.n
	}
	if f.localRanks.ok {
		l.LocalRanks = f.localRanks.n
	}
	if f.commID {
		l.initRank(msg)
	}
}

// initComplete counts a communicator's "... - Init COMPLETE" line (every
// release from 2.4 ends it so, src/init.cc) and where the log stood then.
func (l *NCCLLog) initComplete(msg []byte) {
	e := len(msg)
	for e > 0 && (msg[e-1] == ' ' || msg[e-1] == '\r') {
		e--
	}
	if e >= len("Init COMPLETE") && string(msg[e-len("Init COMPLETE"):e]) == "Init COMPLETE" {
		l.initDone++
		l.infoAtInit, l.connAtInit = l.InfoLines, l.connLines
		if p := l.procEnv(); p != nil {
			p.Init = true
		}
	}
}

// AfterInit says how many "Init COMPLETE" lines the log holds and how
// many NCCL INFO lines came after the last one that are not connection
// lines (channels, "Connected all rings/trees": NCCL 2.22 and later
// connect at the first collective).
func (l *NCCLLog) AfterInit() (inits, other int64) {
	if l.initDone == 0 {
		return 0, 0
	}
	return l.initDone, (l.InfoLines - l.infoAtInit) - (l.connLines - l.connAtInit)
}

// commFields is what comm reads of a message: intAfter of " nRanks ",
// " nranks ", " nNodes " and " localRanks ", and whether " commId 0x"
// stands in it.
type commFields struct {
	nRanks, nranks, nNodes, localRanks keyInt
	commID                             bool
}

// keyInt is intAfter's answer for one key, once the key is seen.
type keyInt struct {
	seen, ok bool
	n        int
}

// at reads the number after the key's first occurrence.
func (k *keyInt) at(after []byte) {
	if !k.seen {
		k.seen = true
		k.n, k.ok = leadingInt(after)
	}
}

// read finds every key at its first occurrence, as intAfter and index
// do, in one pass: each key starts with a blank, so only the blanks of
// msg are tried (found eight bytes at a time), in order, by the byte
// after them, and the words compared as constants.
func (f *commFields) read(msg []byte) {
	for base := 0; base < len(msg); base += 8 {
		var m uint64
		if base+8 <= len(msg) {
			m = zeroBytes(binary.LittleEndian.Uint64(msg[base:base+8]) ^ blanks)
		} else {
			for k := base; k < len(msg); k++ {
				if msg[k] == ' ' {
					m |= 0x80 << (8 * (k - base))
				}
			}
		}
		for ; m != 0; m &= m - 1 {
			// only a blank before 'n', 'l' or 'c' can start a key: the
			// others (most) are passed over without a call
			k := base + bits.TrailingZeros64(m)/8
			if k+1 < len(msg) && keyStart[msg[k+1]] {
				f.word(msg[k:])
			}
		}
	}
}

// keyStart holds the bytes that follow the blank of a key word reads.
var keyStart = byteSet("nlc")

// word reads the key, if any, that starts at w's first byte (a blank).
func (f *commFields) word(w []byte) {
	if len(w) < 2 {
		return
	}
	switch w[1] {
	case 'n':
		switch {
		case hasPrefix(w, " nRanks "):
			f.nRanks.at(w[8:])
		case hasPrefix(w, " nranks "):
			f.nranks.at(w[8:])
		case hasPrefix(w, " nNodes "):
			f.nNodes.at(w[8:])
		}
	case 'l':
		if hasPrefix(w, " localRanks ") {
			f.localRanks.at(w[12:])
		}
	case 'c':
		f.commID = f.commID || hasPrefix(w, " commId 0x")
	}
}

// blanks is the byte ' ' in every byte of a word.
const blanks = 0x2020202020202020

// zeroBytes has the high bit of each byte of x that is zero set, and no
// other bit.
func zeroBytes(x uint64) uint64 {
	const low7 = 0x7f7f7f7f7f7f7f7f
	return ^((x&low7 + low7) | x | low7)
}

// hasPrefix is bytes.HasPrefix for a constant prefix: the compiler
// compares a short one with a load or two instead of a copy of it made
// for bytes.HasPrefix and a call of the runtime's comparison. A prefix
// over 16 bytes is still compared with a call: its last byte is compared
// first, which tells most messages that do not start with it.
func hasPrefix(b []byte, prefix string) bool {
	n := len(prefix)
	return len(b) >= n && (n <= 16 || b[n-1] == prefix[n-1]) && string(b[:n]) == prefix
}

// initRank reads a rank's GPU from "comm 0x... rank 1 nranks 2 cudaDev 0
// nvmlDev 0 busId 100000 commId 0x... - Init START" (init.cc) and keeps
// the first two ranks of one communicator that name one host and one
// busId: NCCL refuses them ("Duplicate GPU detected", hostHash and busId
// equal). Lines without a host are passed over.
func (l *NCCLLog) initRank(msg []byte) {
	if l.SharedGPU != nil || len(l.lastHost) == 0 {
		return
	}
	rank, ok := intAfter(msg, " rank ")
	bus, comm := wordAfter(msg, " busId "), wordAfter(msg, " commId ")
	if !ok || bus == nil || comm == nil {
		return
	}
	key := string(l.lastHost) + " " + string(comm) + " " + string(bus)
	if first, seen := l.gpuRank[key]; seen {
		if first != rank {
			l.SharedGPU = &NCCLSharedGPU{Host: string(l.lastHost), CommID: string(comm), BusID: string(bus), Ranks: [2]int{first, rank},
				Line: strings.ToValidUTF8(string(bytes.TrimSpace(msg)), "?")}
		}
		return
	}
	if l.gpuRank == nil {
		l.gpuRank = map[string]int{}
	}
	if len(l.gpuRank) < maxKeys {
		l.gpuRank[key] = rank
	}
}

// wordAfter is the run of non-blank bytes that follows key in msg, nil
// when key is absent or nothing follows it.
func wordAfter(msg []byte, key string) []byte {
	j := index(msg, key)
	if j < 0 {
		return nil
	}
	w := msg[j+len(key):]
	if e := bytes.IndexAny(w, " \t"); e >= 0 {
		w = w[:e]
	}
	if len(w) == 0 {
		return nil
	}
	return w
}

// intAfter reads the integer that follows key in msg.
func intAfter(msg []byte, key string) (int, bool) {
	j := index(msg, key)
	if j < 0 {
		return 0, false
	}
	return leadingInt(msg[j+len(key):])
}

// mergedDevs turns NCCL_IB_MERGE_NICS's "[0]={[0] mlx5_2:1/RoCE, [1]
// mlx5_3:1/RoCE} [1]={...}" into the plain "[0]mlx5_2:1/RoCE [1]mlx5_3:1/RoCE"
// list of the physical devices.
func mergedDevs(devs []byte) []byte {
	clean := bytes.Map(func(r rune) rune {
		if r == '{' || r == '}' || r == ',' || r == '=' {
			return ' '
		}
		return r
	}, devs)
	f := bytes.Fields(clean)
	var out []byte
	for i := 0; i+1 < len(f); i++ {
		if f[i][0] == '[' && f[i+1][0] != '[' {
			out = append(append(append(out, f[i]...), f[i+1]...), ' ')
			i++
		} else if string(f[i]) == "[RO]" {
			out = append(out, "[RO] "...)
		}
	}
	return out
}

// envLine parses "NCCL_IB_HCA set to mlx5_4" and
// "NCCL_SHM_DISABLE set by environment to 0.".
func (l *NCCLLog) envLine(msg []byte) {
	// every rank prints its variables, often more than once
	l.envKey = append(append(append(l.envKey[:0], l.cur...), '\n'), msg...)
	if gen, ok := l.envSeen.get(l.envKey); ok && gen == l.envGen {
		return
	}
	l.readEnvLine(msg)
	l.envSeen.put(l.envKey, l.envGen)
}

// readEnvLine is envLine without its memo.
func (l *NCCLLog) readEnvLine(msg []byte) {
	name, val, ok := cut(msg, " set by environment to ")
	if !ok {
		name, val, ok = cut(msg, " set to ")
	}
	if !ok || bytes.IndexByte(name, ' ') >= 0 {
		return
	}
	v := bytes.TrimSpace(val)
	v = bytes.TrimSuffix(v, []byte("."))
	// every rank prints the line: the job's setting changes only when the
	// value differs, each process's record is its own
	k, vs := l.str(name), l.str(v)
	if old, ok := l.Env[k]; !ok || old != vs {
		l.setEnv(k, vs)
	}
	l.procSetEnv(k, vs)
}

// commandEnv picks NCCL_X=v assignments out of a command line in the input
// (e.g. "NCCL_P2P_DISABLE=1 ./build/all_reduce_perf" or "-x NCCL_DEBUG=INFO").
func (l *NCCLLog) commandEnv(line []byte) {
	l.scratch = appendFields(l.scratch[:0], line)
	for _, f := range l.scratch {
		k, v, ok := bytes.Cut(f, []byte("="))
		if ok && hasPrefix(k, "NCCL_") && len(k) < 64 && isEnvName(k) {
			l.setEnv(string(k), string(v))
		}
	}
}

func isEnvName(k []byte) bool {
	for _, c := range k {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func (l *NCCLLog) setEnv(k, v string) {
	if l.Env == nil {
		l.Env = map[string]string{}
	}
	if old, ok := l.Env[k]; ok && old == v {
		return
	}
	if _, ok := l.Env[k]; ok || len(l.Env) < maxKeys {
		l.Env[k] = v
		l.envGen++
	}
}

// Finish copies the running counts into Transports; call it after the last Observe.
func (l *NCCLLog) Finish() {
	for k, n := range l.transport {
		l.Transports[k] = *n
	}
}

// TransportKinds sums Transports by kind: "NET/IB", "NET/Socket", "P2P",
// "SHM", "NET/<plugin>", "COLLNET"..., and reports whether any NET
// connection used GPUDirect RDMA.
func (l *NCCLLog) TransportKinds() (kinds map[string]int64, gdr bool) {
	kinds = map[string]int64{}
	for t, n := range l.Transports {
		parts := strings.Split(t, "/")
		k := parts[0]
		if k == "NET" && len(parts) > 1 {
			k = "NET/" + NetKind(parts[1])
		}
		kinds[k] += n
		if strings.Contains(t, "GDRDMA") {
			gdr = true
		}
	}
	return kinds, gdr
}

// NetKind names a net transport as the kind it is: the IB plugins NVIDIA
// ships ("IBext_v8", "IBext_v10", the SHARP/collnet "IBext") are IB, RDMA
// like the built-in one; other names are kept.
func NetKind(name string) string {
	if strings.HasPrefix(name, "IBext") {
		return "IB"
	}
	return name
}

// RDMA reports whether the log shows NCCL's network carrying data over
// RDMA: the IB transport, built in or a plugin.
func (l *NCCLLog) RDMA() bool {
	kinds, _ := l.TransportKinds()
	return NetKind(l.Network) == "IB" || kinds["NET/IB"] > 0
}

// SingleNode reports a log whose ranks all run on one node, and how it
// shows: NCCL's nNodes 1, or one host and no channel over the network.
func (l *NCCLLog) SingleNode() (bool, string) {
	kinds, _ := l.TransportKinds()
	net := int64(0)
	for k, n := range kinds {
		if strings.HasPrefix(k, "NET/") {
			net += n
		}
	}
	switch {
	case l.NNodes == 1:
		return true, "NCCL reports nNodes 1"
	case l.NNodes == 0 && len(l.Hosts) == 1 && net == 0 && len(l.Transports) > 0:
		return true, "one host, " + l.Hosts[0] + ", and no channel via NET"
	}
	return false, ""
}

// NetDevicesUsed lists the NET/IB device indices that carried channels
// (the n of "NET/IB/n"), sorted.
func (l *NCCLLog) NetDevicesUsed() []int { return l.NetDevices("IB") }

// NetDevices lists the device indices of the net transport of kind (as
// NetKind names it: "IB", "Socket") that carried channels, the n of
// "NET/<kind>/n", sorted.
func (l *NCCLLog) NetDevices(kind string) []int {
	seen := map[int]bool{}
	for t := range l.Transports {
		parts := strings.Split(t, "/")
		if len(parts) >= 3 && parts[0] == "NET" && NetKind(parts[1]) == kind {
			if n, err := strconv.Atoi(parts[2]); err == nil {
				seen[n] = true
			}
		}
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

func afterPrefix(msg []byte, word string) []byte {
	j := index(msg, word)
	if j < 0 {
		return nil
	}
	return msg[j+len(word):]
}

func stripIndex(f []byte) []byte {
	if len(f) > 0 && f[0] == '[' {
		if c := bytes.IndexByte(f, ']'); c > 0 {
			return f[c+1:]
		}
	}
	return f
}

func quoted(msg []byte) []byte {
	a := bytes.IndexByte(msg, '\'')
	if a < 0 {
		return nil
	}
	b := bytes.IndexByte(msg[a+1:], '\'')
	if b < 0 {
		return msg[a+1:]
	}
	return msg[a+1 : a+1+b]
}

// addUniqueBytes appends b to list (up to maxListed) unless it is listed,
// the string made only then (every rank prints the line).
func (l *NCCLLog) addUniqueBytes(list []string, b []byte) []string {
	for _, x := range list {
		if x == string(b) {
			return list
		}
	}
	if len(list) >= maxListed {
		return list
	}
	return append(list, l.str(b))
}

func leadingInt(b []byte) (int, bool) {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	n, i := 0, 0
	for ; i < len(b) && i < 12; i++ {
		d := b[i] - '0' // a byte: no digit below '0' either
		if d > 9 {
			break
		}
		n = n*10 + int(d)
	}
	return n, i > 0
}

// index is bytes.Index for the short keys of the handlers. bytes.Index
// tries every occurrence of a key's first byte, and most keys here start
// with a space; a brute-force search over windows of 64 bytes (the size
// the runtime searches that way) costs the same for any first byte.
func index(s []byte, key string) int {
	const window = 64
	n := len(key)
	if n >= window {
		return bytes.Index(s, []byte(key))
	}
	// the key's bytes on the stack, converted once
	var kb [window]byte
	k := kb[:copy(kb[:], key)]
	for off := 0; len(s)-off >= n; off += window - n + 1 {
		end := min(off+window, len(s))
		if j := bytes.Index(s[off:end], k); j >= 0 {
			return off + j
		}
		if end == len(s) {
			break
		}
	}
	return -1
}

// cut is bytes.Cut with index.
func cut(s []byte, sep string) (before, after []byte, found bool) {
	if i := index(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, nil, false
}

// nthFieldTo is appendFields(nil, s)[n] up to its first stop byte (all
// of it where it has none), without reading further.
func nthFieldTo(s []byte, n int, stop byte) ([]byte, bool) {
	i := 0
	for k := 0; ; k++ {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			return nil, false
		}
		j := i
		if k == n {
			for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != stop {
				j++
			}
			return s[i:j], true
		}
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		i = j
	}
}

// clInfoWord is "CL INFO " (the end of an opening's "NCCL " and the
// level) read as a little-endian word.
const clInfoWord = 'C' | 'L'<<8 | ' '<<16 | 'I'<<24 | 'N'<<32 | 'F'<<40 | 'O'<<48 | ' '<<56

// ObserveQuietLines reads the whole lines at the start of buf that
// Observe would read as quiet INFO lines of an opening kept (tagAt), up
// to the first it would not, and returns how many bytes and lines it
// read. It reads each exactly as Observe does (the same opening, host and
// message handlers) without first cutting it out of buf: the opening and
// "INFO " are compared where the line starts, and the newline is looked
// for only after them. It stops at a line that does not open plainly
// (plainStart: a tag or decoration the parsers strip first, or a header
// whose "#" a paste lost), is over MaxLineBytes, has no newline in buf,
// or holds a '\r' before its ending at or after offset cr of buf
// (len(buf) or more when there is none): the lines a reader hands on
// unchanged.
func (l *NCCLLog) ObserveQuietLines(buf []byte, cr int) (n, lines int) {
	// o is the opening of the line last read: the next is tried with it
	// first, then with the others kept. rest is what is left of buf, cr
	// is kept relative to it, and size is the length of the line last
	// read: few values live across the calls.
	k := l.lastOpen & (len(l.opens) - 1)
	o := &l.opens[k]
	rest := buf
	size := 0
	for len(rest) > 0 {
		if rest[0]-'a' > 'z'-'a' { // not plain: no opening need be tried
			break
		}
		ko, oo := k, o
		if !o.infoAt(rest) {
			if ko, oo, _ = l.infoOpeningAt(rest); oo == nil {
				break
			}
		}
		m := len(oo.b) + len("INFO ")
		i := bytes.IndexByte(rest[m:], '\n')
		if i < 0 || m+i+1 > MaxLineBytes {
			break
		}
		e := m + i
		// a '\r' in what is left of buf (most hold none): the line's
		// "\r\n" ending, or one before it
		if cr < len(rest) {
			if rest[e-1] == '\r' {
				e--
			}
			if cr < e {
				break
			}
		}
		msg := rest[m:e]
		c := uint16(0)
		if len(msg) > 0 {
			c = infoClass[msg[0]]
		}
		if c&classAlarm != 0 && mayAlarm(msg) && !quietAlarm(msg) {
			break
		}
		// Observe's INFO case, the opening known
		k, o = ko, oo
		l.lastOpen = k
		l.InfoLines++
		if o.hostGen != l.hostGen { // hostOf's first case, without its call
			if o.hosted { // and its second
				l.lastHost = o.hostCopy
				l.hostGen++
				o.hostGen = l.hostGen
			} else {
				l.hostOf(o, rest[:m-len("NCCL INFO ")])
			}
		}
		if len(msg) >= 2 && c&infoPair[msg[1]] != 0 {
			l.cur = rest[:m-len("NCCL INFO ")]
			l.info(msg)
		}
		size = m + i + 1
		rest = rest[size:]
		cr -= size
		lines++
	}
	n = len(buf) - len(rest)
	if lines > 0 {
		l.quietInfo = true
		l.cur = buf[n-size : n-size+len(o.b)-len("NCCL ")]
	}
	return n, lines
}

// The classes of an INFO message's first byte (infoClass).
const (
	// classAlarm: quietAlarm tells whether the message is quiet
	classAlarm = 1 << iota
	// classFirst is the first of the bits of infoHeads' first bytes
	classFirst
)

// mayAlarm: a message that starts with a byte of alarmFirst may be one
// quietAlarm finds a failure in: it has more than four bytes, and the
// byte at alarmAt of its first is alarmByte's ("Failed", "Call to" and
// "Could not open XML" (their fourth byte), "NET/Plugin",
// "ncclMaxSharedMem" and "ncclSocket", "socket"). Any other is quiet
// without quietAlarm's call.
func mayAlarm(msg []byte) bool {
	return len(msg) > 4 && msg[alarmAt[msg[0]]] == alarmByte[msg[0]]
}

// alarmAt and alarmByte are mayAlarm's byte of each first byte.
var alarmAt, alarmByte = func() (at, b [256]byte) {
	for _, w := range []string{"Failed", "Call to", "NET/Plugin", "nc", "so"} {
		k := 1
		switch w[0] {
		case 'N':
			k = 4 // "NET/IB" is none
		case 'C':
			k = 3 // "Call to" and "Could not open XML" share it
		}
		at[w[0]], b[w[0]] = byte(k), w[k]
	}
	return at, b
}()

// infoHeads are the first two bytes of the INFO messages info reads, of
// the prefixes its cases compare ("Channel ", "Connected all", "Could
// not enable P2P", "Ring ", "NET/", "NCCL version ", "NCCL_",
// "NVLS Head ", "ncclComm", "Using network ", "Bootstrap", "bootstrap.cc:", "[Rank ",
// "cudaDriverVersion ", "comm 0x"); a digit (its default's "16 coll
// channels") may be followed by any byte.
var infoHeads = [...]string{"Ch", "Co", "Ri", "NE", "NC", "NV", "nc", "Us", "Bo", "bo", "[R", "cu", "co"}

// infoClass holds, for an INFO message's first byte, classAlarm where it
// is one of alarmFirst, and a bit from classFirst on for each first byte
// of infoHeads (one for all the digits); infoPair[b] holds the bits of
// the first bytes b may follow in a message info reads. A quiet message
// whose first two bytes b0 b1 have infoClass[b0]&infoPair[b1] == 0
// (most) changes nothing in info and is passed over without a call.
var infoClass, infoPair = func() (c, pair [256]uint16) {
	for b := range c {
		if alarmFirst[b] {
			c[b] |= classAlarm
		}
	}
	next := uint16(classFirst)
	for _, h := range infoHeads {
		if c[h[0]]&^classAlarm == 0 {
			c[h[0]], next = c[h[0]]|next, next<<1
		}
		pair[h[1]] |= c[h[0]] &^ classAlarm
	}
	for d := '0'; d <= '9'; d++ {
		c[d] |= next
	}
	for b := range pair {
		pair[b] |= next
	}
	return c, pair
}()

// infoOpeningAt is openingAt for an INFO line: the plain opening kept
// that line starts with, followed by "INFO ", its index and where the
// message starts; nil when none.
func (l *NCCLLog) infoOpeningAt(line []byte) (int, *opening, int) {
	if len(line) >= 8*infoWords {
		// infoAt for each opening, the line's words read once: the
		// first (all of it an opening's, an opening having 15 bytes or
		// more) tells the hosts apart, the others the processes and
		// threads of one
		b := line[:8*infoWords]
		w0, w1, w2 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:])
		w3, w4, w5 := binary.LittleEndian.Uint64(b[24:]), binary.LittleEndian.Uint64(b[32:]), binary.LittleEndian.Uint64(b[40:])
		for j := range l.opens {
			o := &l.opens[j]
			if o.iw[0] != w0 || o.im[0] == 0 {
				continue
			}
			if (w1^o.iw[1])&o.im[1]|(w2^o.iw[2])&o.im[2]|(w3^o.iw[3])&o.im[3]|(w4^o.iw[4])&o.im[4]|(w5^o.iw[5])&o.im[5] == 0 {
				return j, o, len(o.b) + len("INFO ")
			}
		}
	}
	// an opening over infoWords words, or a line too short to read them
	k, o := l.openingAt(line)
	if o == nil || !o.plain {
		return 0, nil, 0
	}
	// "INFO " after the opening's "NCCL ": "CL INFO " compared as a word
	m := len(o.b) + len("INFO ")
	if len(line) < m || binary.LittleEndian.Uint64(line[m-8:m]) != clInfoWord {
		return 0, nil, 0
	}
	return k, o, m
}

// openingAt is the opening kept (tagAt) that line starts with, and its
// index; nil when none. The last one read is tried first, and an opening
// is compared whole (a call) only where its first word is the line's.
func (l *NCCLLog) openingAt(line []byte) (int, *opening) {
	if len(line) < 8 {
		return 0, nil
	}
	w := binary.LittleEndian.Uint64(line)
	k := l.lastOpen & (len(l.opens) - 1)
	if o := &l.opens[k]; o.w[0] == w && o.match(line) {
		return k, o
	}
	for j := range l.opens {
		if o := &l.opens[j]; o.w[0] == w && o.match(line) {
			return j, o
		}
	}
	return 0, nil
}
