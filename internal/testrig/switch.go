package testrig

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// SwitchPort is one host's data port on the rig's switch.
type SwitchPort struct {
	Host string
	Dev  string // the host's netdev ("enp1s0f1np1")
	Addr string // its CIDR on the switch's segment
	MTU  int    // 0 means 1500
}

// Switch is a Linux bridge in a namespace of its own, a veth from each
// port's host plugged into it: every host reaches every other through it,
// as nodes on one Ethernet switch do.
type Switch struct {
	NS string
	// Ports maps a host to the bridge-side end of its veth: shaping that
	// end's egress slows what the switch sends to the host.
	Ports map[string]string
}

// AddSwitch adds a switch with the given ports to a running rig. The
// switch's namespace goes with the rig at teardown.
func (r *Rig) AddSwitch(ports []SwitchPort) (*Switch, error) {
	sw := &Switch{NS: r.ID + "-sw", Ports: map[string]string{}}
	r.state.NSes = append(r.state.NSes, sw.NS)
	if err := r.saveState(); err != nil {
		return nil, err
	}
	var root strings.Builder
	fmt.Fprintf(&root, "netns add %s\n", sw.NS)
	for i, p := range ports {
		h := r.Host(p.Host)
		if h == nil {
			return nil, fmt.Errorf("switch port on unknown host %q", p.Host)
		}
		if len(p.Dev) == 0 || len(p.Dev) > 15 {
			return nil, fmt.Errorf("bad netdev name %q", p.Dev)
		}
		mtu := p.MTU
		if mtu == 0 {
			mtu = 1500
		}
		port := fmt.Sprintf("p%d", i)
		sw.Ports[p.Host] = port
		fmt.Fprintf(&root, "link add %s netns %s mtu %d type veth peer name %s netns %s mtu %d\n", p.Dev, h.NS, mtu, port, sw.NS, mtu)
	}
	if err := ipBatch("", root.String()); err != nil {
		return nil, err
	}
	var in strings.Builder
	in.WriteString("link set lo up\nlink add sw0 type bridge\nlink set sw0 up\n")
	for _, p := range ports {
		fmt.Fprintf(&in, "link set %s master sw0 up\n", sw.Ports[p.Host])
	}
	if err := ipBatch(sw.NS, in.String()); err != nil {
		return nil, err
	}
	for _, p := range ports {
		h := r.Host(p.Host)
		if err := ipBatch(h.NS, fmt.Sprintf("addr add %s dev %s\nlink set %s up\n", p.Addr, p.Dev, p.Dev)); err != nil {
			return nil, err
		}
	}
	// operstate follows carrier a moment later: wait until every port is
	// UP, as a switch's ports are before anyone uses them
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range ports {
		h := r.Host(p.Host)
		for {
			out, _ := exec.Command("ip", "-n", h.NS, "-br", "link", "show", "dev", p.Dev).Output()
			if f := strings.Fields(string(out)); len(f) > 1 && f[1] == "UP" {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%s %s did not come up: %s", p.Host, p.Dev, strings.TrimSpace(string(out)))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return sw, nil
}

// Exec runs argv in the switch's namespace and returns its combined output.
func (s *Switch) Exec(ctx context.Context, argv ...string) ([]byte, error) {
	full := append([]string{"ip", "netns", "exec", s.NS}, argv...)
	out, err := exec.CommandContext(ctx, full[0], full[1:]...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s on the switch: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}
