// Package testrig builds throw-away "hosts" for tests: Linux network
// namespaces joined by veth pairs that carry the DGX Spark's netdev names,
// each running a real OpenSSH server with its own host key, reachable from the
// test process over a private management bridge.
//
// What a namespace cannot fake (RDMA devices under /sys/class/infiniband,
// nvidia-smi, /etc/dgx-release, NCCL libraries) comes from each host's own
// fixture root: the files are laid over the real tree with overlayfs inside
// that host's private mount namespace, and recorded command outputs are
// replayed by stand-in executables. Nothing outside the rig's namespaces is
// changed, and every rig has its own name prefix and management subnet, so
// several test processes may run rigs at the same time.
//
// A rig needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN), iproute2, util-linux and
// /usr/sbin/sshd. New skips the test with a clear message when not root.
package testrig

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Config describes the hosts of a rig and how they are cabled.
type Config struct {
	Hosts []HostSpec
	// Links are the veth "cables" between hosts' data netdevs.
	Links []Link
}

// HostSpec describes one host.
type HostSpec struct {
	// Name is the host's name in the generated ssh_config and known_hosts
	// ("spark-01"). Names must be unique within a rig.
	Name string
	// NetDevs configures the host's data netdevs by name. A netdev named here
	// but in no Link is created without a peer (no carrier).
	NetDevs map[string]NetDev
	// Files are laid over the host's filesystem: absolute path → content.
	// Paths under /sys, /etc, /usr, /opt, /var, /root and /run are supported;
	// under /proc only files that exist.
	Files map[string]string
	// Standins are recorded command outputs replayed by stand-in executables
	// placed in /usr/local/bin on this host only.
	Standins []Standin
	// RDMA adds stand-in RoCE devices (/sys/class/infiniband) for the netdevs
	// with stand-in PCI functions, as a DGX Spark shows them.
	RDMA bool
	// Down takes the host's management link down: connections time out.
	Down bool
	// NoSSHD leaves the SSH server stopped: connections are refused.
	NoSSHD bool
	// HangAfterAuth makes the SSH server accept the key and then run a
	// command that never ends instead of the requested one.
	HangAfterAuth bool
	// UnknownHostKey leaves the host out of the rig's known_hosts file.
	UnknownHostKey bool
}

// NetDev is a data netdev's configuration.
type NetDev struct {
	MTU   int      // 0 means 1500
	Addrs []string // CIDRs, e.g. "192.168.100.10/24"
	// SpeedMbps is what /sys/class/net/<dev>/speed reports for netdevs with
	// a stand-in PCI function (0 means 200000, a Spark port).
	SpeedMbps int
	// Down leaves the netdev administratively down.
	Down bool
}

// Link is one veth pair: netdev ADev of host A faces netdev BDev of host B.
type Link struct {
	A, ADev string
	B, BDev string
}

// Rig is a running set of hosts.
type Rig struct {
	ID  string // unique prefix of every namespace and root-side link ("sr3fa9c1")
	Dir string // keys, configs and fixture roots
	// KeyPath is the user's private key (OpenSSH format, no passphrase),
	// accepted by every host as root.
	KeyPath string
	// KnownHosts lists every host's key (except UnknownHostKey hosts) under
	// both its name and its management address.
	KnownHosts string
	// SSHConfig is an OpenSSH client config with a Host block per host
	// (HostName, Port, User, IdentityFile, UserKnownHostsFile).
	SSHConfig string
	Hosts     []*Host

	state state
}

// Host is one running host.
type Host struct {
	Name string
	NS   string // network namespace name
	Addr string // management IPv4 address (reachable from the test process)
	Port int    // SSH port
	User string
	// HostKeyFingerprint is the SHA256 fingerprint of the host key, as
	// OpenSSH prints it ("SHA256:...").
	HostKeyFingerprint string
	// HostKeyLine is the public host key in authorized_keys format.
	HostKeyLine string
	Dir         string

	spec     HostSpec
	links    []Link
	pciMount string // overlay mounts of the stand-in PCI netdevs
	sshd     *exec.Cmd
	sshdPID  int
}

// New starts a rig for a test and tears it down when the test ends, also when
// it fails. It skips the test when not running as root.
func New(t testing.TB, cfg Config) *Rig {
	t.Helper()
	if reason := Unsupported(); reason != "" {
		t.Skip("testrig: " + reason)
	}
	r, err := Start(cfg)
	if err != nil {
		t.Fatalf("testrig: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("testrig: teardown: %v", err)
		}
	})
	return r
}

// Unsupported says why a rig cannot run here ("" when it can).
func Unsupported() string {
	if os.Geteuid() != 0 {
		return "needs root for network namespaces and sshd (run the tests as root, e.g. in CI)"
	}
	for _, p := range []string{"ip", "nsenter"} {
		if _, err := exec.LookPath(p); err != nil {
			return p + " not found (install iproute2 and util-linux)"
		}
	}
	if _, err := os.Stat(sshdPath); err != nil {
		return sshdPath + " not found (install openssh-server)"
	}
	return ""
}

// Host returns the host named name, or nil.
func (r *Rig) Host(name string) *Host {
	for _, h := range r.Hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// Names returns the hosts' names in order.
func (r *Rig) Names() []string {
	out := make([]string, len(r.Hosts))
	for i, h := range r.Hosts {
		out[i] = h.Name
	}
	return out
}

// Exec runs argv inside the host's network, mount and UTS namespaces (so it
// sees the host's netdevs, fixture files and name) and returns its combined
// output.
func (h *Host) Exec(ctx context.Context, argv ...string) ([]byte, error) {
	var full []string
	if h.sshdPID > 0 {
		full = append([]string{"nsenter", "-t", fmt.Sprint(h.sshdPID), "-n", "-m", "-u", "--"}, argv...)
	} else {
		full = append([]string{"ip", "netns", "exec", h.NS}, argv...)
	}
	out, err := exec.CommandContext(ctx, full[0], full[1:]...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s on %s: %w: %s", strings.Join(argv, " "), h.Name, err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// Start builds a rig. Call Close to tear it down; on error nothing is left.
func Start(cfg Config) (*Rig, error) {
	if err := validate(cfg); err != nil {
		return nil, err
	}
	sweepStale()
	r, err := allocate(cfg)
	if err != nil {
		return nil, err
	}
	if err := r.build(cfg); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func validate(cfg Config) error {
	if len(cfg.Hosts) == 0 {
		return fmt.Errorf("no hosts")
	}
	if len(cfg.Hosts) > 200 {
		return fmt.Errorf("%d hosts: at most 200", len(cfg.Hosts))
	}
	seen := map[string]bool{}
	for _, h := range cfg.Hosts {
		if h.Name == "" || strings.ContainsAny(h.Name, " \t\n,/:[]") {
			return fmt.Errorf("bad host name %q", h.Name)
		}
		if seen[h.Name] {
			return fmt.Errorf("host %q named twice", h.Name)
		}
		seen[h.Name] = true
	}
	ends := map[string]bool{}
	for _, l := range cfg.Links {
		for _, e := range [][2]string{{l.A, l.ADev}, {l.B, l.BDev}} {
			if !seen[e[0]] {
				return fmt.Errorf("link names unknown host %q", e[0])
			}
			if len(e[1]) == 0 || len(e[1]) > 15 {
				return fmt.Errorf("bad netdev name %q", e[1])
			}
			if ends[e[0]+"/"+e[1]] {
				return fmt.Errorf("netdev %s of %s is cabled twice", e[1], e[0])
			}
			ends[e[0]+"/"+e[1]] = true
		}
	}
	return nil
}

func (r *Rig) build(cfg Config) error {
	if err := r.writeKeys(); err != nil {
		return err
	}
	if err := r.buildNetwork(cfg); err != nil {
		return err
	}
	for _, h := range r.Hosts {
		h.links = cfg.Links
		if err := h.writeFixtures(); err != nil {
			return err
		}
	}
	if err := r.writeClientFiles(); err != nil {
		return err
	}
	if err := r.startSSHDs(); err != nil {
		return err
	}
	for _, h := range r.Hosts {
		if h.spec.Down {
			if _, err := h.Exec(context.Background(), "ip", "link", "set", mgmtDev, "down"); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close kills every process in the rig's namespaces, deletes the namespaces
// and the management bridge, and removes the rig's directory. It is safe to
// call more than once.
func (r *Rig) Close() error {
	return teardown(r.state)
}

// Cable returns the two links of one QSFP cable from physical port pa of host
// a to port pb of host b: on a DGX Spark each port is two PCIe functions
// ("twins"), so one cable is two netdev pairs.
func Cable(a string, pa int, b string, pb int) []Link {
	ta, tb := PortNetDevs(pa), PortNetDevs(pb)
	return []Link{{A: a, ADev: ta[0], B: b, BDev: tb[0]}, {A: a, ADev: ta[1], B: b, BDev: tb[1]}}
}

// PortNetDevs returns the twin netdev names of a Spark's physical QSFP port
// (0 or 1): first the function in PCI domain 0000, then the one in 0002.
func PortNetDevs(port int) [2]string {
	return [2]string{fmt.Sprintf("enp1s0f%dnp%d", port, port), fmt.Sprintf("enP2p1s0f%dnp%d", port, port)}
}

// waitTCP waits until addr accepts TCP connections or the deadline passes.
func waitTCP(ctx context.Context, addr string) error {
	var d netDialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sshd at %s did not come up: %w", addr, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func writeFile(p string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, mode)
}
