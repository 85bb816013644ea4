package testrig

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// mgmtDev is the management netdev inside each host, named like the Spark's
// 10 GbE RJ45 port.
const mgmtDev = "enP7s7"

type netDialer = net.Dialer

// state is what teardown needs; it is also written to Dir/rig.json so that
// `rig.sh down` and the stale-rig sweep can find everything.
type state struct {
	ID     string   `json:"id"`
	Dir    string   `json:"dir"`
	Bridge string   `json:"bridge"`
	Subnet string   `json:"subnet"` // "10.213.7" (a /24)
	NSes   []string `json:"namespaces"`
	// OwnerPID and OwnerStart identify the process whose exit makes the rig
	// stale; OwnerPID 0 marks a rig kept on purpose (rig.sh up).
	OwnerPID   int    `json:"owner_pid"`
	OwnerStart string `json:"owner_start,omitempty"`
}

// KeepEnv, when set to 1 in the environment of the process calling Start,
// keeps the rig after that process exits (rig.sh up).
const KeepEnv = "SPARKRIG_TESTRIG_KEEP"

func rigsRoot() string { return filepath.Join(os.TempDir(), "sparkrig-testrig") }

// allocate picks a unique ID, a free management /24 and the rig directory,
// holding a lock so that concurrent test processes never pick the same subnet.
func allocate(cfg Config) (*Rig, error) {
	if err := os.MkdirAll(rigsRoot(), 0o755); err != nil {
		return nil, err
	}
	unlock, err := lock(filepath.Join(rigsRoot(), "lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	id, err := newID()
	if err != nil {
		return nil, err
	}
	subnet, err := freeSubnet()
	if err != nil {
		return nil, err
	}
	r := &Rig{ID: id, Dir: filepath.Join(rigsRoot(), id)}
	r.state = state{ID: id, Dir: r.Dir, Bridge: id + "b", Subnet: subnet}
	if os.Getenv(KeepEnv) != "1" {
		r.state.OwnerPID = os.Getpid()
		r.state.OwnerStart = procStart(os.Getpid())
	}
	for i, hs := range cfg.Hosts {
		h := &Host{
			Name: hs.Name, NS: fmt.Sprintf("%s-%d", id, i), Port: 22, User: "root",
			Addr: fmt.Sprintf("%s.%d", subnet, 10+i), Dir: filepath.Join(r.Dir, hs.Name), spec: hs,
		}
		r.Hosts = append(r.Hosts, h)
		r.state.NSes = append(r.state.NSes, h.NS)
	}
	r.state.NSes = append(r.state.NSes, id+"-void")
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := r.saveState(); err != nil {
		return nil, err
	}
	// The bridge carries the subnet from here on, so the next allocator sees it.
	bridge := fmt.Sprintf("link add %s type bridge\naddr add %s.1/24 dev %s\nlink set %s up\n", r.state.Bridge, subnet, r.state.Bridge, r.state.Bridge)
	if err := ipBatch("", bridge); err != nil {
		teardown(r.state)
		return nil, err
	}
	return r, nil
}

func (r *Rig) saveState() error {
	b, _ := json.MarshalIndent(r.state, "", "  ")
	return os.WriteFile(filepath.Join(r.Dir, "rig.json"), b, 0o644)
}

func newID() (string, error) {
	for range 20 {
		var b [3]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		id := "sr" + hex.EncodeToString(b[:])
		if _, err := os.Stat("/run/netns/" + id + "-0"); errors.Is(err, os.ErrNotExist) {
			if _, err := net.InterfaceByName(id + "b"); err != nil {
				return id, nil
			}
		}
	}
	return "", fmt.Errorf("no free rig id")
}

// freeSubnet returns a random 10.200-254.x /24 that no local address uses.
func freeSubnet() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	used := map[string]bool{}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			ip := ipn.IP.To4()
			used[fmt.Sprintf("%d.%d.%d", ip[0], ip[1], ip[2])] = true
		}
	}
	for range 100 {
		n, err := rand.Int(rand.Reader, big.NewInt(55*256))
		if err != nil {
			return "", err
		}
		s := fmt.Sprintf("10.%d.%d", 200+n.Int64()/256, n.Int64()%256)
		if !used[s] {
			return s, nil
		}
	}
	return "", fmt.Errorf("no free management subnet in 10.200.0.0/10")
}

func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// buildNetwork creates the namespaces, the management links and the data
// veths. Data veths are created directly inside their namespaces, so their
// Spark names never appear in the root namespace.
func (r *Rig) buildNetwork(cfg Config) error {
	var root strings.Builder
	for _, ns := range r.state.NSes {
		fmt.Fprintf(&root, "netns add %s\n", ns)
	}
	for i, h := range r.Hosts {
		m := fmt.Sprintf("%sm%d", r.ID, i)
		fmt.Fprintf(&root, "link add %s type veth peer name %s netns %s\n", m, mgmtDev, h.NS)
		fmt.Fprintf(&root, "link set %s master %s up\n", m, r.state.Bridge)
	}
	cabled := map[string]bool{}
	for _, l := range cfg.Links {
		a, b := r.Host(l.A), r.Host(l.B)
		fmt.Fprintf(&root, "link add %s netns %s mtu %d type veth peer name %s netns %s mtu %d\n",
			l.ADev, a.NS, a.mtu(l.ADev), l.BDev, b.NS, b.mtu(l.BDev))
		cabled[l.A+"/"+l.ADev], cabled[l.B+"/"+l.BDev] = true, true
	}
	void := 0
	for _, h := range r.Hosts {
		for _, dev := range sortedKeys(h.spec.NetDevs) {
			if !cabled[h.Name+"/"+dev] {
				fmt.Fprintf(&root, "link add %s netns %s mtu %d type veth peer name v%d netns %s-void\n", dev, h.NS, h.mtu(dev), void, r.ID)
				void++
			}
		}
	}
	if err := ipBatch("", root.String()); err != nil {
		return err
	}
	for i, h := range r.Hosts {
		if err := ipBatch(h.NS, h.nsScript(r.state.Subnet, i, cfg.Links)); err != nil {
			return err
		}
	}
	return r.waitCablesUp(cfg.Links)
}

// waitCablesUp waits until every cable whose two ends were set up shows
// operstate up at both ends. A veth reports up a moment after both of its
// ends are: a test that reads the hosts at once would otherwise see a twin
// down that nobody took down. The wait is bounded (30 s) and generous.
func (r *Rig) waitCablesUp(links []Link) error {
	type end struct{ ns, dev string }
	var ends []end
	for _, l := range links {
		a, b := r.Host(l.A), r.Host(l.B)
		if a == nil || b == nil || a.spec.NetDevs[l.ADev].Down || b.spec.NetDevs[l.BDev].Down {
			continue
		}
		ends = append(ends, end{a.NS, l.ADev}, end{b.NS, l.BDev})
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, e := range ends {
		for {
			out, err := exec.Command("ip", "-n", e.ns, "-o", "link", "show", "dev", e.dev).Output()
			if err == nil && strings.Contains(string(out), "state UP") {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s in %s is not up after 30 s: %s", e.dev, e.ns, strings.TrimSpace(string(out)))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

func (h *Host) mtu(dev string) int {
	if m := h.spec.NetDevs[dev].MTU; m > 0 {
		return m
	}
	return 1500
}

// nsScript configures addresses and link state inside the host's namespace.
func (h *Host) nsScript(subnet string, i int, links []Link) string {
	var b strings.Builder
	fmt.Fprintf(&b, "link set lo up\naddr add %s.%d/24 dev %s\nlink set %s up\n", subnet, 10+i, mgmtDev, mgmtDev)
	for _, d := range h.netdevs(links) {
		nd := h.spec.NetDevs[d]
		for _, a := range nd.Addrs {
			fmt.Fprintf(&b, "addr add %s dev %s\n", a, d)
		}
		if !nd.Down {
			fmt.Fprintf(&b, "link set %s up\n", d)
		}
	}
	return b.String()
}

// ipBatch runs `ip [-n ns] -batch -` with script on stdin.
func ipBatch(ns, script string) error {
	args := []string{"-batch", "-"}
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	cmd := exec.Command("ip", args...)
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// teardown kills every process in the rig's namespaces and deletes them, the
// bridge and the directory. Errors about things already gone are ignored.
func teardown(s state) error {
	var errs []error
	for _, ns := range s.NSes {
		killNS(ns)
	}
	var b strings.Builder
	for _, ns := range s.NSes {
		if _, err := os.Stat("/run/netns/" + ns); err == nil {
			fmt.Fprintf(&b, "netns del %s\n", ns)
		}
	}
	if _, err := net.InterfaceByName(s.Bridge); err == nil {
		fmt.Fprintf(&b, "link del %s\n", s.Bridge)
	}
	if b.Len() > 0 {
		cmd := exec.Command("ip", "-force", "-batch", "-")
		cmd.Stdin = strings.NewReader(b.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip: %v: %s", err, bytes.TrimSpace(out)))
		}
	}
	if s.Dir != "" && strings.HasPrefix(s.Dir, rigsRoot()+"/sr") {
		if err := os.RemoveAll(s.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// killNS SIGKILLs every process in the namespace and waits (briefly) for them
// to be gone, so that `netns del` frees everything.
func killNS(ns string) {
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err != nil {
		return
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != os.Getpid() {
			pids = append(pids, pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range pids {
		for time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil && !zombie(pid) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// procStart returns the start time of pid (field 22 of /proc/pid/stat), to
// tell a live owner from a recycled PID.
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// sweepStale tears down rigs whose owning process has exited without
// cleaning up (a test binary killed by a timeout, say).
func sweepStale() {
	paths, _ := filepath.Glob(filepath.Join(rigsRoot(), "sr*", "rig.json"))
	for _, p := range paths {
		s, err := loadState(filepath.Dir(p))
		if err != nil || s.OwnerPID == 0 {
			continue
		}
		if procStart(s.OwnerPID) != s.OwnerStart || s.OwnerStart == "" {
			teardown(s)
		}
	}
}

// loadState reads a rig's state from its directory (for rig.sh down).
func loadState(dir string) (state, error) {
	var s state
	b, err := os.ReadFile(filepath.Join(dir, "rig.json"))
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", dir, err)
	}
	return s, nil
}

// Destroy tears down the rig whose directory is dir (rig.sh down).
func Destroy(dir string) error {
	s, err := loadState(dir)
	if err != nil {
		return err
	}
	return teardown(s)
}
