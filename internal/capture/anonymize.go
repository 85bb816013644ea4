package capture

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// Anonymizer replaces identities in snapshots with stand-ins (node-01,
// 02:00:00:00:00:01, 203.0.113.1, 2001:db8::1), the same stand-in for the
// same value across every snapshot it rewrites, so a cluster's snapshots
// still agree with each other and audit exactly as the originals.
//
// Identities are replaced where they are identities:
//   - host names in the fields that name the host (the manifest, hostname
//     files, uname's node name, /etc/hosts, the journal's host column, the
//     ping mesh's hosts), never as a word elsewhere: a node called "ubuntu"
//     leaves ID=ubuntu in os-release alone;
//   - the MACs of every interface (physical, veth, bond, bridge, VLAN),
//     of neighbours and gateways, wherever they appear, also inside an
//     IPv6 interface identifier or a link-local RoCE GID;
//   - public addresses of every interface, neighbour and gateway, the
//     public prefixes routes lead to, and the operator's own address in
//     SSH_CONNECTION, wherever they appear.
//
// Private, link-local and loopback addresses of the nodes are kept: they
// are what the audit is about.
type Anonymizer struct {
	repl  map[string]string // MACs, addresses and GIDs
	names map[string]string // host names
	// own are every node's interface addresses; clients the addresses
	// SSH sessions came from (replaced unless they are a node's own).
	own, clients map[string]bool
	hosts        int
	macs         int
	v4           int
	v6           int
}

// NewAnonymizer returns an Anonymizer with no replacements yet.
func NewAnonymizer() *Anonymizer {
	return &Anonymizer{repl: map[string]string{}, names: map[string]string{}, own: map[string]bool{}, clients: map[string]bool{}}
}

// Learn records what to replace in a node's evidence: its names (the one
// the user gave and its own host name), the MACs and public addresses of
// its interfaces, neighbours and gateways (from its facts and from the
// ip -j outputs its snapshot holds, virtual interfaces included), and the
// address its SSH session came from. Learn every node before Rewrite.
func (a *Anonymizer) Learn(user string, s *snapshot.Snapshot, n *facts.Node) {
	a.host(user)
	if n != nil {
		a.host(n.Hostname)
		if short, _, ok := strings.Cut(n.Hostname, "."); ok {
			a.host(short)
		}
		for _, d := range n.NetDevs {
			a.mac(d.MAC)
			for _, ad := range d.Addrs {
				a.ownAddr(ad.CIDR)
			}
		}
		for _, nb := range n.Neighbors {
			a.mac(nb.MAC)
			a.addr(nb.IP)
		}
		for _, r := range n.Routes {
			a.addr(r.Gateway)
			a.addr(r.Dst) // a route to a public network names the site as its address does
		}
	}
	if s == nil {
		return
	}
	if s.Manifest.Host != "" && s.Manifest.Host == user {
		a.host(s.Manifest.Host)
	}
	if b, _, ok := s.Cmd("ip-addr"); ok {
		a.learnIPJSON(b)
	}
	if b, _, ok := s.Cmd("ip-link"); ok {
		a.learnIPJSON(b)
	}
	if b, _, ok := s.Cmd("ip-neigh"); ok {
		a.learnIPJSON(b)
	}
	if b, _, ok := s.Cmd("ip-route"); ok {
		a.learnIPJSON(b)
	}
	if b, _, ok := s.Cmd("ssh-connection"); ok {
		// "client-address client-port server-address server-port"
		if f := strings.Fields(string(b)); len(f) == 4 {
			if ip, err := netip.ParseAddr(f[0]); err == nil && !ip.IsLoopback() {
				a.clients[ip.String()] = true
			}
			a.addr(f[2])
		}
	}
}

// learnIPJSON learns from ip -j output (addr, link, neigh, route): every
// link-layer address ("address", "permaddr", "lladdr"), every interface
// address ("local") as the node's own, and every neighbour or gateway
// ("dst" of a neighbour or a route, "gateway", "via").
func (a *Anonymizer) learnIPJSON(b []byte) {
	var entries []map[string]any
	if json.Unmarshal(b, &entries) != nil {
		return
	}
	str := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	for _, e := range entries {
		for _, k := range []string{"address", "permaddr", "lladdr"} {
			a.mac(str(e, k))
		}
		// a neighbour's address, or a route's destination prefix: a public
		// prefix identifies a site as a public address does
		a.addr(str(e, "dst"))
		a.addr(str(e, "gateway"))
		if via, ok := e["via"].(map[string]any); ok {
			a.addr(str(via, "host"))
		}
		if infos, ok := e["addr_info"].([]any); ok {
			for _, i := range infos {
				if m, ok := i.(map[string]any); ok {
					a.ownAddr(str(m, "local"))
				}
			}
		}
	}
}

func (a *Anonymizer) host(name string) {
	if name == "" || name == "localhost" || a.names[name] != "" {
		return
	}
	if ip, err := netip.ParseAddr(name); err == nil {
		a.addr(ip.String())
		return
	}
	a.hosts++
	a.names[name] = fmt.Sprintf("node-%02d", a.hosts)
}

func (a *Anonymizer) mac(m string) {
	m = strings.ToLower(m)
	b, ok := parseMAC(m)
	if !ok || a.repl[m] != "" || m == "00:00:00:00:00:00" || m == "ff:ff:ff:ff:ff:ff" {
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

// ownAddr records one of a node's interface addresses (kept unless public).
func (a *Anonymizer) ownAddr(cidr string) {
	s, _, _ := strings.Cut(cidr, "/")
	if ip, err := netip.ParseAddr(s); err == nil {
		a.own[ip.String()] = true
		a.addr(ip.String())
	}
}

func (a *Anonymizer) addr(cidr string) {
	s, _, _ := strings.Cut(cidr, "/")
	ip, err := netip.ParseAddr(s)
	if err != nil || !public(ip) {
		return
	}
	a.standIn(ip)
}

// standIn records a stand-in for ip, public or not.
func (a *Anonymizer) standIn(ip netip.Addr) {
	if a.repl[ip.String()] != "" {
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
	for c := range a.clients {
		if !a.own[c] { // the operator's machine, not a node reached from itself
			a.standIn(netip.MustParseAddr(c))
		}
	}
	keys := make([]string, 0, len(a.repl))
	for k := range a.repl {
		keys = append(keys, k)
	}
	// longest first, so a GID is replaced before the MAC inside it
	slices.SortFunc(keys, func(x, y string) int { return len(y) - len(x) })
	idx := byFirstByte(keys)
	for k, v := range s.Data {
		text := a.replace(string(v), idx)
		if rename, ok := hostFields[k]; ok {
			text = rename(a, text)
		}
		s.Data[k] = []byte(text)
	}
	s.Manifest.Host = a.name(s.Manifest.Host)
	s.Manifest.User = ""
	s.Manifest.Anonymized = true
}

// name is a host name's stand-in, a full name's by its first label
// ("spark-01.lab.example" is node-01 when spark-01 is), or name itself.
func (a *Anonymizer) name(n string) string {
	if r := a.names[n]; r != "" {
		return r
	}
	if short, _, ok := strings.Cut(n, "."); ok && a.names[short] != "" {
		return a.names[short]
	}
	return n
}

// hostFields are the data keys that name a host, and how to rename in each.
var hostFields = map[string]func(a *Anonymizer, text string) string{
	"files/etc/hostname":               renameWhole,
	"files/proc/sys/kernel/hostname":   renameWhole,
	"files/etc/hosts":                  renameHostsFile,
	snapshot.CmdKey("uname", "stdout"): func(a *Anonymizer, t string) string { return renameField(a, t, 1) },
	// short-format journal lines: "Nov 22 03:00:00 spark-01 kernel: ..."
	snapshot.CmdKey("journal-kernel", "stdout"):   func(a *Anonymizer, t string) string { return renameField(a, t, 3) },
	snapshot.CmdKey(facts.PingEvidence, "stdout"): renamePingHosts,
}

func renameWhole(a *Anonymizer, t string) string {
	v := strings.TrimSpace(t)
	if r := a.name(v); r != v {
		return strings.Replace(t, v, r, 1)
	}
	return t
}

// renameField renames the i-th space-separated field of every line.
func renameField(a *Anonymizer, t string, i int) string {
	lines := strings.Split(t, "\n")
	for j, l := range lines {
		f := strings.SplitAfter(l, " ")
		k, n := 0, 0
		for ; k < len(f); k++ {
			if strings.TrimSpace(f[k]) == "" {
				continue
			}
			if n == i {
				break
			}
			n++
		}
		if k < len(f) {
			w := strings.TrimRight(f[k], " ")
			f[k] = a.name(w) + f[k][len(w):]
			lines[j] = strings.Join(f, "")
		}
	}
	return strings.Join(lines, "\n")
}

// renameHostsFile renames the names (every field after the address) of
// /etc/hosts lines.
func renameHostsFile(a *Anonymizer, t string) string {
	lines := strings.Split(t, "\n")
	for j, l := range lines {
		body, comment, _ := strings.Cut(l, "#")
		f := strings.Fields(body)
		if len(f) < 2 {
			continue
		}
		changed := false
		for k := 1; k < len(f); k++ {
			if r := a.name(f[k]); r != f[k] {
				f[k], changed = r, true
			}
		}
		if changed {
			lines[j] = strings.Join(f, " ")
			if strings.Contains(l, "#") {
				lines[j] += " #" + comment
			}
		}
	}
	return strings.Join(lines, "\n")
}

var pingHost = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`("Host":\s*")([^"\\]*)(")`) })

func renamePingHosts(a *Anonymizer, t string) string {
	return pingHost().ReplaceAllStringFunc(t, func(m string) string {
		p := pingHost().FindStringSubmatch(m)
		return p[1] + a.name(p[2]) + p[3]
	})
}

// byFirstByte groups keys (longest first) by their first byte.
func byFirstByte(keys []string) map[byte][]string {
	idx := map[byte][]string{}
	for _, k := range keys {
		idx[k[0]] = append(idx[k[0]], k)
	}
	return idx
}

// replace substitutes whole tokens only: a match must not continue a word
// (letters, digits, _ and -), so "spark" leaves "sparkrig" alone.
func (a *Anonymizer) replace(text string, idx map[byte][]string) string {
	if text == "" || len(idx) == 0 {
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
		for _, k := range idx[text[i]] {
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
