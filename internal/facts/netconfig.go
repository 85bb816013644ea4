package facts

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// netplanDoc is the part of a netplan file (netplan.io reference, YAML v2)
// that says how an interface is addressed.
type netplanDoc struct {
	Network struct {
		Renderer  string                     `yaml:"renderer"`
		Ethernets map[string]netplanEthernet `yaml:"ethernets"`
	} `yaml:"network"`
}

type netplanEthernet struct {
	Addresses []any    `yaml:"addresses"`
	DHCP4     bool     `yaml:"dhcp4"`
	MTU       int      `yaml:"mtu"`
	LinkLocal []string `yaml:"link-local"`
}

// parseNetplan reads one netplan YAML file. Addresses may be plain strings or
// maps keyed by address (with lifetime or label options).
// ParseNetplan reads what one netplan file configures, per interface.
func ParseNetplan(source string, b []byte) ([]IfaceConfig, error) { return parseNetplan(source, b) }

func parseNetplan(source string, b []byte) ([]IfaceConfig, error) {
	var d netplanDoc
	if err := yaml.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	tool := "netplan"
	if d.Network.Renderer == "NetworkManager" {
		tool = "netplan (NetworkManager)"
	}
	out := []IfaceConfig{}
	for name, e := range d.Network.Ethernets {
		c := IfaceConfig{Name: name, Source: source, Tool: tool, Addrs: []string{}, DHCP4: e.DHCP4, MTU: e.MTU}
		for _, a := range e.Addresses {
			switch v := a.(type) {
			case string:
				c.Addrs = append(c.Addrs, v)
			case map[string]any:
				for k := range v {
					c.Addrs = append(c.Addrs, k)
				}
			}
		}
		for _, ll := range e.LinkLocal {
			if ll == "ipv4" {
				c.LinkLocal = true
			}
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// parseINI reads a keyfile (NetworkManager, systemd.network) into
// section → key → values; repeated keys keep every value.
func parseINI(b []byte) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	sec := ""
	for _, l := range lines(b) {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || l[0] == '#' || l[0] == ';':
		case l[0] == '[' && strings.HasSuffix(l, "]"):
			sec = strings.ToLower(l[1 : len(l)-1])
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				continue
			}
			if out[sec] == nil {
				out[sec] = map[string][]string{}
			}
			k = strings.TrimSpace(k)
			out[sec][k] = append(out[sec][k], strings.TrimSpace(v))
		}
	}
	return out
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// parseNMConnection reads a NetworkManager keyfile
// (/etc/NetworkManager/system-connections/*.nmconnection).
func parseNMConnection(source string, b []byte) (IfaceConfig, bool) {
	ini := parseINI(b)
	name := first(ini["connection"]["interface-name"])
	if name == "" {
		return IfaceConfig{}, false
	}
	c := IfaceConfig{Name: name, Source: source, Tool: "networkmanager", Addrs: []string{}}
	v4 := ini["ipv4"]
	switch first(v4["method"]) {
	case "auto":
		c.DHCP4 = true
	case "link-local":
		c.LinkLocal = true
	}
	for k, vs := range v4 {
		if strings.HasPrefix(k, "address") {
			for _, v := range vs {
				a, _, _ := strings.Cut(v, ",") // "192.168.100.10/24,192.168.100.1"
				c.Addrs = append(c.Addrs, a)
			}
		}
	}
	sort.Strings(c.Addrs)
	if m := atoiPtr(first(ini["ethernet"]["mtu"])); m != nil {
		c.MTU = *m
	}
	return c, true
}

// parseNetworkdNetwork reads a systemd-networkd .network file.
func parseNetworkdNetwork(source string, b []byte) (IfaceConfig, bool) {
	ini := parseINI(b)
	name := first(ini["match"]["Name"])
	if name == "" || strings.ContainsAny(name, "*? ") {
		return IfaceConfig{}, false
	}
	c := IfaceConfig{Name: name, Source: source, Tool: "networkd", Addrs: []string{}}
	nw := ini["network"]
	c.Addrs = append(c.Addrs, nw["Address"]...)
	c.Addrs = append(c.Addrs, ini["address"]["Address"]...)
	switch strings.ToLower(first(nw["DHCP"])) {
	case "yes", "true", "ipv4", "1":
		c.DHCP4 = true
	}
	switch strings.ToLower(first(nw["LinkLocalAddressing"])) {
	case "yes", "ipv4", "true":
		c.LinkLocal = true
	}
	if m := atoiPtr(first(ini["link"]["MTUBytes"])); m != nil {
		c.MTU = *m
	}
	return c, true
}
