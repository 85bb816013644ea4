package capture_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/capture"
	"github.com/sparkrig/sparkrig/internal/check"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// audit is what doctor reports for one node: its findings without the host.
func audit(s *snapshot.Snapshot) []string {
	n := facts.FromSnapshot(s)
	fs, _ := check.Run(n, check.DetectProfile(n))
	var out []string
	for _, f := range fs {
		out = append(out, strings.Join([]string{string(f.Severity), f.ID, f.Subject, f.Observed, f.Expected}, " | "))
	}
	slices.Sort(out)
	return out
}

// TestAnonymizedArchiveAuditsAsTheOriginal: every node fixture, its host
// named with a common word ("ubuntu", "NVIDIA", "kernel"), anonymized,
// audits exactly as before, and the name is gone from the fields that name
// the host but not from os-release, nvidia-smi or the kernel log.
func TestAnonymizedArchiveAuditsAsTheOriginal(t *testing.T) {
	archives, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "nodes", "*.tar.gz"))
	if len(archives) == 0 {
		t.Fatal("no node fixtures")
	}
	for _, name := range []string{"ubuntu", "NVIDIA", "kernel"} {
		for _, p := range archives {
			s, err := snapshot.Read(p)
			if err != nil {
				t.Fatal(err)
			}
			old := strings.TrimSpace(string(s.Data["files/proc/sys/kernel/hostname"]))
			s.Manifest.Host = name
			s.Data["files/proc/sys/kernel/hostname"] = []byte(name + "\n")
			if u, ok := s.Data["cmds/uname.stdout"]; ok && old != "" {
				s.Data["cmds/uname.stdout"] = []byte(strings.Replace(string(u), " "+old+" ", " "+name+" ", 1))
			}
			before := audit(s)
			osRelease := string(s.Data["files/etc/os-release"])
			smi := string(s.Data["cmds/nvidia-smi-q.stdout"])
			a := capture.NewAnonymizer()
			a.Learn(name, s, facts.FromSnapshot(s))
			a.Rewrite(s)
			if after := audit(s); !slices.Equal(before, after) {
				t.Errorf("%s named %s audits differently anonymized:\nbefore %q\nafter  %q", filepath.Base(p), name, before, after)
			}
			if s.Manifest.Host != "node-01" || string(s.Data["files/proc/sys/kernel/hostname"]) != "node-01\n" {
				t.Errorf("%s: host %q, hostname %q", filepath.Base(p), s.Manifest.Host, s.Data["files/proc/sys/kernel/hostname"])
			}
			if u := string(s.Data["cmds/uname.stdout"]); u != "" && strings.Contains(u, " "+name+" ") {
				t.Errorf("%s: uname keeps the host name: %q", filepath.Base(p), u)
			}
			if string(s.Data["files/etc/os-release"]) != osRelease || string(s.Data["cmds/nvidia-smi-q.stdout"]) != smi {
				t.Errorf("%s named %s: os-release or nvidia-smi changed", filepath.Base(p), name)
			}
		}
	}
}

// TestAnonymizeReplacesEveryIdentity: MACs and public addresses of virtual
// interfaces (veth, bond, bridge, VLAN), the gateway's and neighbours' MACs
// and public addresses, and the operator's address in SSH_CONNECTION are
// replaced; the node's private addresses and the server side of
// SSH_CONNECTION are kept.
func TestAnonymizeReplacesEveryIdentity(t *testing.T) {
	s := snapshot.New("spark-01")
	s.AddCmd(snapshot.Item{Name: "ip-addr"}, []byte(`[`+
		`{"ifname":"enp1s0f1np1","link_type":"ether","address":"4c:bb:47:2c:8e:1b","addr_info":[{"family":"inet","local":"192.168.100.10","prefixlen":24}]},`+
		`{"ifname":"veth1a2b","link_type":"ether","address":"de:ad:be:ef:00:01","addr_info":[{"family":"inet","local":"81.2.69.161","prefixlen":32}]},`+
		`{"ifname":"bond0","link_type":"ether","address":"de:ad:be:ef:00:02","addr_info":[{"family":"inet6","local":"2a00:1450:4001:80b::200e","prefixlen":64}]},`+
		`{"ifname":"br0","link_type":"ether","address":"de:ad:be:ef:00:03","addr_info":[]},`+
		`{"ifname":"enP7s7.100","link_type":"ether","address":"de:ad:be:ef:00:04","addr_info":[{"family":"inet","local":"81.2.69.162","prefixlen":28}]}]`), nil)
	s.AddCmd(snapshot.Item{Name: "ip-neigh"}, []byte(`[{"dst":"81.2.69.1","dev":"enP7s7.100","lladdr":"00:1b:21:aa:bb:cc","state":["REACHABLE"]},{"dst":"192.168.100.11","dev":"enp1s0f1np1","lladdr":"4c:bb:47:2c:8e:2b","state":["REACHABLE"]}]`), nil)
	s.AddCmd(snapshot.Item{Name: "ip-route"}, []byte(`[{"dst":"default","gateway":"81.2.69.1","dev":"enP7s7.100"},{"dst":"192.168.100.0/24","dev":"enp1s0f1np1","prefsrc":"192.168.100.10"}]`), nil)
	s.AddCmd(snapshot.Item{Name: "ssh-connection"}, []byte("10.20.30.40 53422 192.168.100.10 22\n"), nil)
	s.AddCmd(snapshot.Item{Name: "env"}, []byte("SSH_CONNECTION=10.20.30.40 53422 192.168.100.10 22\n"), nil)
	a := capture.NewAnonymizer()
	a.Learn("spark-01", s, facts.FromSnapshot(s))
	a.Rewrite(s)
	var all strings.Builder
	for _, b := range s.Data {
		all.Write(b)
	}
	for _, gone := range []string{"de:ad:be:ef:00:0", "4c:bb:47:2c:8e:1b", "4c:bb:47:2c:8e:2b", "00:1b:21:aa:bb:cc", "81.2.69.", "2a00:1450", "10.20.30.40"} {
		if strings.Contains(all.String(), gone) {
			t.Errorf("%s survived:\n%s", gone, all.String())
		}
	}
	for _, kept := range []string{"192.168.100.10", "192.168.100.11", "53422 192.168.100.10 22"} {
		if !strings.Contains(all.String(), kept) {
			t.Errorf("%s was replaced:\n%s", kept, all.String())
		}
	}
}

// A route to a public network names the site as well as an address in it
// does: its prefix is replaced, the private rails' routes are kept.
func TestAnonymizeReplacesPublicRoutePrefixes(t *testing.T) {
	s := snapshot.New("spark-01")
	s.AddCmd(snapshot.Item{Name: "ip-route"}, []byte(`[`+
		`{"dst":"default","gateway":"192.168.1.1","dev":"enP7s7"},`+
		`{"dst":"93.184.216.0/24","gateway":"192.168.1.254","dev":"enP7s7","proto":"static"},`+
		`{"dst":"2a00:1450:4001:80b::/64","dev":"enP7s7","proto":"static"},`+
		`{"dst":"192.168.100.0/24","dev":"enp1s0f1np1","proto":"kernel","prefsrc":"192.168.100.10"}]`), nil)
	s.AddFile("/etc/netplan/50-uplink.yaml", []byte("network:\n  ethernets:\n    enP7s7:\n      routes:\n        - to: 93.184.216.0/24\n          via: 192.168.1.254\n"))
	a := capture.NewAnonymizer()
	a.Learn("spark-01", s, facts.FromSnapshot(s))
	a.Rewrite(s)
	var all strings.Builder
	for _, b := range s.Data {
		all.Write(b)
	}
	for _, gone := range []string{"93.184.216.", "2a00:1450"} {
		if strings.Contains(all.String(), gone) {
			t.Errorf("%s survived:\n%s", gone, all.String())
		}
	}
	for _, kept := range []string{"192.168.100.0/24", "192.168.1.254", `"dst":"default"`} {
		if !strings.Contains(all.String(), kept) {
			t.Errorf("%s was replaced:\n%s", kept, all.String())
		}
	}
}
