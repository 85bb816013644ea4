package facts

import (
	"strconv"
	"strings"
)

// parseIBState reads a port's state or phys_state ("4: ACTIVE", "5: LinkUp")
// and returns the name.
func parseIBState(b []byte) string {
	s := trimValue(b)
	if _, name, ok := strings.Cut(s, ":"); ok {
		return strings.TrimSpace(name)
	}
	return s
}

// parseIBRate reads a port's rate ("200 Gb/sec (4X HDR)") in Gb/s; 0 if unknown.
func parseIBRate(b []byte) int {
	f := strings.Fields(trimValue(b))
	if len(f) == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return int(v)
}

// gidIPv4 returns the IPv4 address of an IPv4-mapped GID
// ("0000:0000:0000:0000:0000:ffff:c0a8:640a" → "192.168.100.10").
func gidIPv4(gid string) string {
	g := strings.ToLower(strings.TrimSpace(gid))
	const prefix = "0000:0000:0000:0000:0000:ffff:"
	if !strings.HasPrefix(g, prefix) {
		return ""
	}
	rest := strings.Split(strings.TrimPrefix(g, prefix), ":")
	if len(rest) != 2 {
		return ""
	}
	var o []string
	for _, h := range rest {
		n, err := strconv.ParseUint(h, 16, 16)
		if err != nil {
			return ""
		}
		o = append(o, strconv.Itoa(int(n>>8)), strconv.Itoa(int(n&0xff)))
	}
	return strings.Join(o, ".")
}

// emptyGID reports an unused GID table entry.
func emptyGID(g string) bool {
	return strings.Trim(strings.TrimSpace(g), "0:") == ""
}

// parseIbdev2netdev reads ibdev2netdev output ("rocep1s0f0 port 1 ==>
// enp1s0f0np0 (Up)") into RDMA device → netdev. Text after the closing
// parenthesis (a pasted next prompt) is ignored.
func parseIbdev2netdev(b []byte) map[string]string {
	out := map[string]string{}
	for _, l := range lines(b) {
		left, right, ok := strings.Cut(l, "==>")
		if !ok {
			continue
		}
		lf, rf := strings.Fields(left), strings.Fields(right)
		if len(lf) == 0 || len(rf) == 0 {
			continue
		}
		out[lf[0]] = rf[0]
	}
	return out
}

// parseIbvDevinfo reads `ibv_devinfo` (with or without -v): devices, firmware,
// board id and per-port state, active rate is not printed there and stays 0.
func parseIbvDevinfo(b []byte) []RDMADev {
	var devs []RDMADev
	var dev *RDMADev
	var port *RDMAPort
	for _, l := range lines(b) {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case k == "hca_id":
			devs = append(devs, RDMADev{Name: v, Ports: []RDMAPort{}})
			dev, port = &devs[len(devs)-1], nil
		case dev == nil:
		case k == "fw_ver":
			dev.FWVer = v
		case k == "board_id":
			dev.BoardID = v
		case k == "port":
			n := atoiPtr(v)
			if n == nil {
				continue
			}
			dev.Ports = append(dev.Ports, RDMAPort{Num: *n, GIDs: []GID{}})
			port = &dev.Ports[len(dev.Ports)-1]
		case port == nil:
		case k == "state":
			port.State = strings.TrimPrefix(strings.Fields(v + " x")[0], "PORT_")
		case k == "link_layer":
			port.LinkLayer = v
		}
	}
	return devs
}
