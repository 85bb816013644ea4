package fix

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// Observation is what fix reads from a live host before planning and after
// applying: its netdevs, the sysctls it tunes, the files it owns and the
// interface the SSH session arrives on.
type Observation struct {
	Links    []ObservedLink
	Sysctls  map[string]string
	Files    map[string][]byte // absent files are not in the map
	SSHIface string
	DGX      string // DGX_NAME from /etc/dgx-release, "" if none
}

// ObservedLink is one netdev as the kernel reports it.
type ObservedLink struct {
	Name      string
	MTU       int
	OperState string
	Carrier   *bool
	Driver    string
	PCIAddr   string
	Addrs     []string // IPv4 CIDRs, global scope
}

// Paths returns the files fix owns, in a fixed order.
func Paths() []string { return []string{NetplanPath, SysctlPath, NCCLConf, EnvPath} }

func sysctlKeys() []string {
	var ks []string
	for _, s := range append(append([]sysctlSetting(nil), sysctlSettings...), ringSysctls...) {
		ks = append(ks, s.Key)
	}
	return append(ks, reservedPortsKey)
}

// ObserveScript is the POSIX sh that prints an Observation. It only reads.
func ObserveScript() string {
	var b strings.Builder
	b.WriteString(`for d in /sys/class/net/*; do
  n=${d##*/}; [ "$n" = lo ] && continue
  drv=$(readlink "$d/device/driver" 2>/dev/null); drv=${drv##*/}; pci=$(readlink "$d/device" 2>/dev/null); pci=${pci##*/}
  printf 'link %s %s %s %s %s %s' "$n" "$(cat "$d/mtu" 2>/dev/null || echo 0)" "$(cat "$d/operstate" 2>/dev/null || echo unknown)" "$(cat "$d/carrier" 2>/dev/null || echo -)" "${drv:--}" "${pci:--}"
  ip -o -4 addr show dev "$n" scope global 2>/dev/null | awk '{printf " %s", $4}'
  echo
done
`)
	for _, k := range sysctlKeys() {
		fmt.Fprintf(&b, "printf 'sysctl %s %%s\\n' \"$(sysctl -n %s 2>/dev/null | tr '\\t' ' ')\"\n", k, k)
	}
	for _, p := range Paths() {
		fmt.Fprintf(&b, "if [ -r %[1]s ]; then echo 'file %[1]s'; base64 < %[1]s | tr -d '\\n'; echo; else echo 'absent %[1]s'; fi\n", p)
	}
	b.WriteString(`if [ -n "${SPARKRIG_SSH_FROM:-}" ]; then echo "sshif $(ip -o route get "$SPARKRIG_SSH_FROM" 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p')"; fi
if [ -r /etc/dgx-release ]; then echo "dgx $(sed -n 's/^DGX_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/dgx-release)"; fi
`)
	return b.String()
}

// ParseObservation reads ObserveScript's output.
func ParseObservation(out []byte) (Observation, error) {
	o := Observation{Sysctls: map[string]string{}, Files: map[string][]byte{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "link":
			l, err := parseLink(rest)
			if err != nil {
				return o, err
			}
			o.Links = append(o.Links, l)
		case "sysctl":
			k, v, _ := strings.Cut(rest, " ")
			if v = strings.Join(strings.Fields(v), " "); v != "" {
				o.Sysctls[k] = v
			}
		case "file":
			if !sc.Scan() {
				return o, fmt.Errorf("observation: %s has no content line", rest)
			}
			b, err := base64.StdEncoding.DecodeString(sc.Text())
			if err != nil {
				return o, fmt.Errorf("observation: %s: %w", rest, err)
			}
			o.Files[rest] = b
		case "sshif":
			o.SSHIface = strings.TrimSpace(rest)
		case "dgx":
			o.DGX = strings.TrimSpace(rest)
		case "absent", "":
		default:
			return o, fmt.Errorf("observation: unexpected line %q", sc.Text())
		}
	}
	return o, sc.Err()
}

func parseLink(s string) (ObservedLink, error) {
	f := strings.Fields(s)
	if len(f) < 6 {
		return ObservedLink{}, fmt.Errorf("observation: short link line %q", s)
	}
	mtu, err := strconv.Atoi(f[1])
	if err != nil {
		return ObservedLink{}, fmt.Errorf("observation: bad MTU in %q", s)
	}
	l := ObservedLink{Name: f[0], MTU: mtu, OperState: f[2], Driver: dash(f[4]), PCIAddr: dash(f[5]), Addrs: f[6:]}
	if f[3] == "0" || f[3] == "1" {
		c := f[3] == "1"
		l.Carrier = &c
	}
	return l, nil
}

// Link returns the observed netdev named name.
func (o Observation) Link(name string) (ObservedLink, bool) {
	for _, l := range o.Links {
		if l.Name == name {
			return l, true
		}
	}
	return ObservedLink{}, false
}

// Facts turns an observation into the facts planning needs.
func (o Observation) Facts(host string) *facts.Node {
	n := &facts.Node{Host: host, Sysctls: map[string]string{}, Sources: map[string]facts.SourceStatus{}}
	for _, l := range o.Links {
		d := facts.NetDev{Name: l.Name, MTU: l.MTU, OperState: l.OperState, Carrier: l.Carrier, Driver: l.Driver, PCIAddr: l.PCIAddr, Addrs: []facts.Addr{}}
		for _, a := range l.Addrs {
			d.Addrs = append(d.Addrs, facts.Addr{CIDR: a, Family: "inet", Scope: "global"})
		}
		n.NetDevs = append(n.NetDevs, d)
	}
	sort.Slice(n.NetDevs, func(i, j int) bool { return n.NetDevs[i].Name < n.NetDevs[j].Name })
	for k, v := range o.Sysctls {
		n.Sysctls[k] = v
	}
	if o.DGX != "" {
		n.DGX = &facts.DGXRelease{Name: o.DGX}
	}
	for _, src := range []string{facts.SrcNetSysfs, facts.SrcIPAddr, facts.SrcSysctl, facts.SrcNetConfig} {
		n.Sources[src] = facts.SourceStatus{Status: "ok"}
	}
	if b, ok := o.Files[NetplanPath]; ok {
		n.NetConfig = netplanConfig(b)
	}
	if b, ok := o.Files[NCCLConf]; ok {
		n.NCCL.ConfFile = facts.ParseKeyValues(b)
		n.Sources[facts.SrcNCCLConf] = facts.SourceStatus{Status: "ok"}
	}
	return n
}

func dash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}
