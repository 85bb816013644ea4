package fix

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sparkrig/sparkrig/internal/facts"
)

// persistNeeds says what of a rail no configuration holds yet.
type persistNeeds struct {
	addr, mtu, dhcpOff, routes bool
}

func (p persistNeeds) any() bool { return p.addr || p.mtu || p.dhcpOff || p.routes }

// needs compares a rail with what the node's persistent configuration (any
// netplan, NetworkManager, networkd or ifupdown file) already holds for its
// netdev.
func needs(n *facts.Node, r Rail) persistNeeds {
	var out persistNeeds
	out.addr = r.Addr != ""
	out.mtu = true
	out.routes = len(r.Routes) > 0
	for _, c := range n.NetConfig {
		if c.Name != r.NetDev {
			continue
		}
		if slices.Contains(c.Addrs, r.Addr) {
			out.addr = false
		}
		if c.MTU == r.MTU {
			out.mtu = false
		}
		if c.DHCP4 {
			out.dhcpOff = true
		}
	}
	return out
}

// railNotes says, per rail, what fix does with its address and where other
// files still hold something that would fight the plan.
func railNotes(n *facts.Node, rails []Rail) []string {
	var notes []string
	for _, r := range rails {
		need := needs(n, r)
		if need.addr && r.Addr != "" && strings.HasPrefix(r.Change, "keep ") {
			notes = append(notes, fmt.Sprintf("%s: persist %s (set now, not in any config)", r.NetDev, r.Addr))
		}
		for _, c := range n.NetConfig {
			if c.Name != r.NetDev || c.Source == NetplanPath {
				continue
			}
			for _, a := range c.Addrs {
				if a != r.Addr && isIPv4CIDR(a) {
					notes = append(notes, fmt.Sprintf("%s: %s still configures %s; remove it there, or both addresses come back at boot", r.NetDev, c.Source, a))
				}
			}
			if c.DHCP4 {
				notes = append(notes, fmt.Sprintf("%s: %s turns DHCP on; turn it off there (netplan reads files in name order, and a later one wins)", r.NetDev, c.Source))
			}
		}
	}
	return notes
}

func isIPv4CIDR(s string) bool {
	p, err := netip.ParsePrefix(s)
	return err == nil && p.Addr().Is4()
}

// mergeNetplan edits /etc/netplan/40-cx7.yaml in place: for each rail that
// needs it, the netdev's IPv4 addresses, its MTU and dhcp4: false; every
// other key, interface and comment the user wrote stays. With nothing to
// change it returns cur unchanged.
func mergeNetplan(cur []byte, rails []Rail, needOf func(Rail) persistNeeds) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(cur, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", NetplanPath, err)
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s is not a YAML mapping", NetplanPath)
	}
	changed := false
	network := child(doc.Content[0], "network", &changed)
	if v := mapGet(network, "version"); v == nil {
		mapSet(network, "version", scalar("2"))
		changed = true
	}
	eth := child(network, "ethernets", &changed)
	for _, r := range rails {
		need := needOf(r)
		if !need.any() {
			continue
		}
		stanza := mapGet(eth, r.NetDev)
		if stanza == nil || stanza.Kind != yaml.MappingNode { // absent, or "name:" with nothing under it
			stanza = &yaml.Node{Kind: yaml.MappingNode}
			mapSet(eth, r.NetDev, stanza)
			stanza.HeadComment = fmt.Sprintf("port %d twin %d -> %s (sparkrig fix)", r.Port, r.Twin, strings.Join(r.Peers, ", "))
			need.dhcpOff = true
			changed = true
		}
		if need.dhcpOff {
			if v := mapGet(stanza, "dhcp4"); v == nil || truthy(v.Value) {
				mapSet(stanza, "dhcp4", scalar("false"))
				changed = true
			}
		}
		// MTU: set where no file holds it yet, corrected where this one is wrong.
		if v := mapGet(stanza, "mtu"); (need.mtu || v != nil) && (v == nil || v.Value != strconv.Itoa(r.MTU)) {
			mapSet(stanza, "mtu", scalar(strconv.Itoa(r.MTU)))
			changed = true
		}
		if r.Addr != "" && setIPv4(stanza, r.Addr) {
			changed = true
		}
		if addRoutes(stanza, r.Routes) {
			changed = true
		}
	}
	if !changed {
		return cur, nil
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// addRoutes adds the routes the stanza lacks (by destination), keeping
// every route it has; it reports whether anything changed.
func addRoutes(stanza *yaml.Node, routes []Route) bool {
	if len(routes) == 0 {
		return false
	}
	list := mapGet(stanza, "routes")
	if list == nil || list.Kind != yaml.SequenceNode {
		list = &yaml.Node{Kind: yaml.SequenceNode}
		mapSet(stanza, "routes", list)
	}
	have := map[string]bool{}
	for _, e := range list.Content {
		if to := mapGet(e, "to"); to != nil {
			have[to.Value] = true
		}
	}
	changed := false
	for _, r := range routes {
		if have[r.To] {
			continue
		}
		e := &yaml.Node{Kind: yaml.MappingNode}
		mapSet(e, "to", scalar(r.To))
		mapSet(e, "via", scalar(r.Via))
		list.Content = append(list.Content, e)
		changed = true
	}
	return changed
}

// setIPv4 makes addr the stanza's only IPv4 address, keeping IPv6 ones and
// the list's style; it reports whether anything changed.
func setIPv4(stanza *yaml.Node, addr string) bool {
	list := mapGet(stanza, "addresses")
	if list == nil {
		mapSet(stanza, "addresses", &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{scalar(addr)}})
		return true
	}
	if list.Kind != yaml.SequenceNode {
		list.Kind, list.Tag, list.Value, list.Content = yaml.SequenceNode, "", "", nil
	}
	var kept []*yaml.Node
	have := false
	for _, it := range list.Content {
		switch {
		case it.Value == addr:
			have = true
			kept = append(kept, it)
		case isIPv4CIDR(it.Value):
		default:
			kept = append(kept, it)
		}
	}
	if have && len(kept) == len(list.Content) {
		return false
	}
	if !have {
		kept = append([]*yaml.Node{scalar(addr)}, kept...)
	}
	list.Content = kept
	return true
}

func truthy(v string) bool {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "ipv4", "1":
		return true
	}
	return false
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

// child returns the mapping under key, creating it when absent.
func child(m *yaml.Node, key string, changed *bool) *yaml.Node {
	if v := mapGet(m, key); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode}
	mapSet(m, key, v)
	*changed = true
	return v
}

func mapGet(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func mapSet(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}
