package capture

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// Anonymizer replaces host names, MAC addresses and public IP addresses in
// snapshots with stand-ins (node-01, 02:00:00:00:00:01, 203.0.113.1,
// 2001:db8::1), the same stand-in for the same value across every snapshot
// it rewrites, so a cluster's snapshots still agree with each other.
// Private, link-local and loopback addresses are kept: they are what the
// audit is about. MACs are also replaced where they appear inside an
// IPv6 interface identifier or a link-local RoCE GID.
type Anonymizer struct {
	repl  map[string]string
	hosts int
	macs  int
	v4    int
	v6    int
}

// NewAnonymizer returns an Anonymizer with no replacements yet.
func NewAnonymizer() *Anonymizer { return &Anonymizer{repl: map[string]string{}} }

// Learn records what to replace in a node's evidence: its names (the one
// the user gave and its own host name), its interfaces' MACs and public
// addresses.
func (a *Anonymizer) Learn(user string, n *facts.Node) {
	a.host(user)
	if n == nil {
		return
	}
	a.host(n.Hostname)
	if short, _, ok := strings.Cut(n.Hostname, "."); ok {
		a.host(short)
	}
	for _, d := range n.NetDevs {
		a.mac(d.MAC)
		for _, ad := range d.Addrs {
			a.addr(ad.CIDR)
		}
	}
}

func (a *Anonymizer) host(name string) {
	if name == "" || name == "localhost" || a.repl[name] != "" {
		return
	}
	if ip, err := netip.ParseAddr(name); err == nil {
		a.addr(ip.String())
		return
	}
	a.hosts++
	a.repl[name] = fmt.Sprintf("node-%02d", a.hosts)
}

func (a *Anonymizer) mac(m string) {
	m = strings.ToLower(m)
	b, ok := parseMAC(m)
	if !ok || a.repl[m] != "" || m == "00:00:00:00:00:00" {
		return
	}
	a.macs++
	n := a.macs
	stand := [6]byte{0x02, 0, 0, byte(n >> 16), byte(n >> 8), byte(n)}
	a.repl[m] = macString(stand)
	a.repl[strings.ToUpper(m)] = strings.ToUpper(macString(stand))
	// EUI-64 as in a link-local address or GID: U/L bit flipped, ff:fe inserted
	a.repl[eui64(b, true)] = eui64(stand, true)
	a.repl[eui64(b, false)] = eui64(stand, false) // the padded form wins where both read alike
}

func (a *Anonymizer) addr(cidr string) {
	s, _, _ := strings.Cut(cidr, "/")
	ip, err := netip.ParseAddr(s)
	if err != nil || !public(ip) || a.repl[ip.String()] != "" {
		return
	}
	if ip.Is4() {
		a.v4++
		stand := standIn4(a.v4)
		a.repl[ip.String()] = stand.String()
		// the IPv4-mapped RoCE v2 GID of the address
		a.repl[gid4(ip)] = gid4(stand)
		return
	}
	a.v6++
	stand := netip.MustParseAddr(fmt.Sprintf("2001:db8::%x", a.v6))
	a.repl[ip.String()] = stand.String()
	a.repl[gid6(ip)] = gid6(stand)
}

// standIn4 is the n-th IPv4 stand-in: the documentation networks first
// (RFC 5737), then the reserved 240.0.0.0/4, never an address in use.
func standIn4(n int) netip.Addr {
	for _, net := range [][3]byte{{203, 0, 113}, {198, 51, 100}, {192, 0, 2}} {
		if n <= 254 {
			return netip.AddrFrom4([4]byte{net[0], net[1], net[2], byte(n)})
		}
		n -= 254
	}
	return netip.AddrFrom4([4]byte{240, byte(n >> 16), byte(n >> 8), byte(n)})
}

// public reports an address that identifies a site on the internet: not
// private (RFC 1918, ULA), shared (100.64/10), link-local, loopback or
// documentation.
func public(ip netip.Addr) bool {
	if !ip.IsGlobalUnicast() || ip.IsPrivate() {
		return false
	}
	for _, p := range []string{"100.64.0.0/10", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"} {
		if netip.MustParsePrefix(p).Contains(ip) {
			return false
		}
	}
	return true
}

// Rewrite replaces every learned value in s, in its data and manifest, and
// notes in the manifest that it was anonymized.
func (a *Anonymizer) Rewrite(s *snapshot.Snapshot) {
	keys := make([]string, 0, len(a.repl))
	for k := range a.repl {
		keys = append(keys, k)
	}
	// longest first, so spark-01.lab is replaced before spark-01
	slices.SortFunc(keys, func(x, y string) int { return len(y) - len(x) })
	for k, v := range s.Data {
		s.Data[k] = []byte(a.replace(string(v), keys))
	}
	s.Manifest.Host = a.replace(s.Manifest.Host, keys)
	s.Manifest.User = ""
	s.Manifest.Anonymized = true
}

// replace substitutes whole tokens only: a match must not continue a word
// (letters, digits, _ and -), so "spark" leaves "sparkrig" alone.
func (a *Anonymizer) replace(text string, keys []string) string {
	if text == "" || len(keys) == 0 {
		return text
	}
	var b strings.Builder
	i := 0
	last := 0
	for i < len(text) {
		if i > 0 && wordByte(text[i-1]) {
			i++
			continue
		}
		hit := ""
		for _, k := range keys {
			if strings.HasPrefix(text[i:], k) && (i+len(k) == len(text) || !wordByte(text[i+len(k)])) {
				hit = k
				break
			}
		}
		if hit == "" {
			i++
			continue
		}
		b.WriteString(text[last:i])
		b.WriteString(a.repl[hit])
		i += len(hit)
		last = i
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func parseMAC(m string) ([6]byte, bool) {
	var b [6]byte
	f := strings.Split(m, ":")
	if len(f) != 6 {
		return b, false
	}
	for i, x := range f {
		if _, err := fmt.Sscanf(x, "%02x", &b[i]); err != nil || len(x) != 2 {
			return b, false
		}
	}
	return b, true
}

func macString(b [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5])
}

// eui64 writes the interface identifier of a MAC as in a GID file
// (padded "a8bb:ccff:fedd:eeff") or an address ("a8bb:ccff:fedd:eeff"
// without leading zeros in each group).
func eui64(b [6]byte, short bool) string {
	g := [4]uint16{uint16(b[0]^0x02)<<8 | uint16(b[1]), uint16(b[2])<<8 | 0xff, 0xfe<<8 | uint16(b[3]), uint16(b[4])<<8 | uint16(b[5])}
	if short {
		return fmt.Sprintf("%x:%x:%x:%x", g[0], g[1], g[2], g[3])
	}
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g[0], g[1], g[2], g[3])
}

// gid4 is the IPv4-mapped GID of an address, as /sys shows it.
func gid4(ip netip.Addr) string {
	v := ip.As4()
	return fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", v[0], v[1], v[2], v[3])
}

// gid6 is an IPv6 address written as a GID: eight padded groups.
func gid6(ip netip.Addr) string {
	v := ip.As16()
	var g []string
	for i := 0; i < 16; i += 2 {
		g = append(g, fmt.Sprintf("%02x%02x", v[i], v[i+1]))
	}
	return strings.Join(g, ":")
}
