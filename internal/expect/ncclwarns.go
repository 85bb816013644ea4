package expect

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

// nccl-warns.tsv is the output of scripts/nccl-catalogue/catalogue.sh over
// the NCCL release tags v2.18.1-1 to v2.30.7-1 of github.com/NVIDIA/nccl:
// every format string passed to NCCL's WARN macro, where it is raised and
// the releases that have it.
//
//go:embed nccl-warns.tsv
var ncclWarnData []byte

// NCCLWarn is one WARN message format of NCCL's source.
type NCCLWarn struct {
	// Class says where it is raised: net-ib, socket-bootstrap, proxy,
	// transport, cuda, resource or init-config.
	Class string
	// Format is the printf format ("%?" where a macro or a stringified
	// expression stands).
	Format string
	// Where is "src/file.cc:line" in the newest release that has it.
	Where string
	// First and Last are the oldest and newest release that have it;
	// Versions lists them all.
	First, Last string
	Versions    []string
	// pieces are the literal parts of Format between its conversions;
	// anchoredStart and anchoredEnd say whether Format begins and ends
	// with a literal.
	pieces                     []string
	anchoredStart, anchoredEnd bool
	literal                    int
}

// NCCLWarnClasses are the classes of the catalogue, in the order reports name them.
var NCCLWarnClasses = []string{"net-ib", "socket-bootstrap", "proxy", "transport", "cuda", "resource", "init-config"}

// NCCLWarnClassText says in words where a class's messages are raised.
var NCCLWarnClassText = map[string]string{
	"net-ib":           "the InfiniBand/RoCE verbs network (NET/IB)",
	"socket-bootstrap": "sockets and bootstrap (NET/Socket, rendezvous, RAS)",
	"proxy":            "the proxy thread that drives network transfers",
	"transport":        "a transport between ranks (P2P, SHM, NET, CollNet, NVLS)",
	"cuda":             "a CUDA, NVML or GDRCopy call",
	"resource":         "a resource of the host (memory, shared memory, a system call)",
	"init-config":      "initialisation, topology or configuration",
}

// WarnCatalogue finds the NCCL format a WARN message was printed from.
// Lookup indexes formats by the first bytes of their leading literal, and
// matches the literal pieces in order with plain substring search: no
// backtracking, linear in the message.
type WarnCatalogue struct {
	entries []NCCLWarn
	byKey   map[string][]int // first keyLen bytes of the leading literal
	loose   []int            // formats whose leading literal is shorter
}

const warnKeyLen = 4

var ncclWarns = sync.OnceValues(func() (*WarnCatalogue, error) { return ParseNCCLWarns(ncclWarnData) })

// NCCLWarns returns the embedded catalogue (an error is a defect of the data
// file, which the tests read).
func NCCLWarns() (*WarnCatalogue, error) { return ncclWarns() }

// ParseNCCLWarns reads the catalogue's TSV: class, format, where, first,
// last, versions.
func ParseNCCLWarns(data []byte) (*WarnCatalogue, error) {
	c := &WarnCatalogue{byKey: map[string][]int{}}
	seen := map[string]bool{}
	for n, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 6 || f[0] == "" || f[1] == "" {
			return nil, fmt.Errorf("nccl-warns.tsv: line %d: want 6 tab-separated fields with a class and a format", n+1)
		}
		if _, ok := NCCLWarnClassText[f[0]]; !ok {
			return nil, fmt.Errorf("nccl-warns.tsv: line %d: unknown class %q", n+1, f[0])
		}
		if seen[f[1]] {
			continue // the same format raised in several places: the first (by class, file) names it
		}
		seen[f[1]] = true
		w := NCCLWarn{Class: f[0], Format: f[1], Where: f[2], First: f[3], Last: f[4], Versions: strings.Split(f[5], ",")}
		w.pieces, w.anchoredStart, w.anchoredEnd = formatPieces(unescapeTSV(f[1]))
		for _, p := range w.pieces {
			w.literal += len(p)
		}
		if w.literal < 4 {
			continue // "%s" alone and the like say nothing
		}
		i := len(c.entries)
		c.entries = append(c.entries, w)
		if w.anchoredStart && len(w.pieces[0]) >= warnKeyLen {
			k := w.pieces[0][:warnKeyLen]
			c.byKey[k] = append(c.byKey[k], i)
		} else {
			c.loose = append(c.loose, i)
		}
	}
	return c, nil
}

// Len is the number of distinct formats kept for matching.
func (c *WarnCatalogue) Len() int { return len(c.entries) }

func unescapeTSV(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return strings.NewReplacer(`\t`, "\t", `\n`, "", `\\`, `\`, `\"`, `"`).Replace(s)
}

// formatPieces splits a printf format into the literal text between its
// conversions. "%%" is a literal "%".
func formatPieces(format string) (pieces []string, start, end bool) {
	var b strings.Builder
	start, end = true, true
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		// a conversion: flags, width, precision, length, verb (or "?")
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0123456789.*hlLqjzt", format[j]) >= 0 {
			j++
		}
		if j < len(format) {
			j++ // the verb
		}
		if i == 0 {
			start = false
		}
		if j >= len(format) {
			end = false
		}
		pieces = append(pieces, b.String())
		b.Reset()
		i = j - 1
	}
	pieces = append(pieces, b.String())
	// drop the empty pieces around adjacent conversions, keeping the anchors' meaning
	out := pieces[:0]
	for k, p := range pieces {
		if p != "" || k == 0 && start || k == len(pieces)-1 && end {
			out = append(out, p)
		}
	}
	for k := range out {
		out[k] = strings.TrimSpace(out[k]) // NCCL trims; a paste may lose spaces at an end
	}
	return out, start, end
}

// match reports whether msg can be printed from the format.
func (w *NCCLWarn) match(msg string) bool {
	pos := 0
	for k, p := range w.pieces {
		switch {
		case p == "":
			continue
		case k == 0 && w.anchoredStart:
			if !strings.HasPrefix(msg, p) {
				return false
			}
			pos = len(p)
		case k == len(w.pieces)-1 && w.anchoredEnd:
			if len(msg)-len(p) < pos || !strings.HasSuffix(msg, p) {
				return false
			}
			pos = len(msg)
		default:
			i := strings.Index(msg[pos:], p)
			if i < 0 {
				return false
			}
			pos += i + len(p)
		}
	}
	return true
}

// Match returns the most specific format (the most literal text) that msg,
// a WARN line's text after "NCCL WARN ", can have been printed from.
func (c *WarnCatalogue) Match(msg string) (*NCCLWarn, bool) {
	msg = strings.TrimSpace(msg)
	best := -1
	try := func(i int) {
		w := &c.entries[i]
		if (best < 0 || w.literal > c.entries[best].literal) && w.match(msg) {
			best = i
		}
	}
	if len(msg) >= warnKeyLen {
		for _, i := range c.byKey[msg[:warnKeyLen]] {
			try(i)
		}
	}
	for _, i := range c.loose {
		try(i)
	}
	if best < 0 {
		return nil, false
	}
	return &c.entries[best], true
}

// MostlyArgs reports whether most of msg stands where the format has a
// conversion ("Failed to open %s" read over "Failed to open
// libibverbs.so[.1]"): the match then says little of where msg comes from.
func (w *NCCLWarn) MostlyArgs(msg string) bool {
	return 2*w.literal < len(strings.TrimSpace(msg))
}

// NCCLWarnClassOf tells the class of a WARN message the catalogue does not
// hold (an older release's wording, a network plugin's message) from the
// subsystem it names; "" when it names none.
func NCCLWarnClassOf(msg string) string {
	for _, k := range warnClassWords {
		if strings.Contains(msg, k.word) {
			return k.class
		}
	}
	return ""
}

// warnClassWords are the subsystem prefixes NCCL and its network plugins
// put in their messages ("NET/IB : …", "Net : Call to recv …" before 2.12).
var warnClassWords = []struct{ word, class string }{
	{"NET/IB", "net-ib"}, {"ibv_", "net-ib"}, {"libibverbs", "net-ib"}, {"NET/OFI", "net-ib"}, {"NET/Plugin", "init-config"},
	{"NET/Socket", "socket-bootstrap"}, {"Net : ", "socket-bootstrap"}, {"socket", "socket-bootstrap"}, {"Socket", "socket-bootstrap"}, {"Bootstrap", "socket-bootstrap"}, {"bootstrap", "socket-bootstrap"},
	{"Proxy", "proxy"}, {"proxy", "proxy"},
	{"Cuda", "cuda"}, {"CUDA", "cuda"}, {"NVML", "cuda"},
	{"P2P", "transport"}, {"SHM", "transport"}, {"NVLS", "transport"}, {"CollNet", "transport"},
	{"/dev/shm", "resource"}, {"alloc", "resource"},
}
