package allpairs

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/fixture"
)

func TestParseAddrsRecorded(t *testing.T) {
	b := fixture.Blocks(fixture.Read(t, "testdata/03_ip-br-addr-link_dgx-spark_hutch_cx7-unconfigured-link-local.txt"))[0]
	got := ParseAddrs(b)
	want := []string{"lo UNKNOWN 127.0.0.1/8", "enP7s7 UP 192.168.1.163/24", "enp1s0f1np1 UP 169.254.127.30/16", "docker0 DOWN 172.17.0.1/16"}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i, a := range got {
		if s := a.Dev + " " + a.State + " " + a.Prefix.String(); s != want[i] {
			t.Fatalf("%d: %q, want %q", i, s, want[i])
		}
	}
}

func TestFindSegment(t *testing.T) {
	hutch := ParseAddrs(fixture.Blocks(fixture.Read(t, "testdata/03_ip-br-addr-link_dgx-spark_hutch_cx7-unconfigured-link-local.txt"))[0])
	starsky := ParseAddrs(fixture.Blocks(fixture.Read(t, "testdata/04_ip-br-addr-link_dgx-spark_starsky_cx7-unconfigured-link-local.txt"))[0])
	seg, err := FindSegment([]string{"hutch", "starsky"}, [][]Addr{hutch, starsky}, netip.Prefix{})
	// the two share only their LAN; the CX-7 twins are link-local
	if err != nil || seg.Subnet.String() != "192.168.1.0/24" || seg.Addrs[0].Dev != "enP7s7" || seg.Addrs[0].Prefix.Addr().String() != "192.168.1.163" {
		t.Fatalf("%v %+v", err, seg)
	}
	// docker0's one address on every host is no segment
	up := func(s string) []Addr { return ParseAddrs([]byte(s)) }
	a := up("docker0 UP 172.17.0.1/16\neth1 UP 10.9.0.1/24\n")
	b := up("docker0 UP 172.17.0.1/16\neth1 UP 10.9.0.2/24\n")
	c := up("docker0 UP 172.17.0.1/16\n")
	// two subnets with every node: the user says which
	m1 := up("enP7s7 UP 10.1.0.1/24\neth1 UP 10.9.0.1/24\n")
	m2 := up("enP7s7 UP 10.1.0.2/24\neth1 UP 10.9.0.2/24\n")
	if _, err := FindSegment([]string{"a", "b"}, [][]Addr{m1, m2}, netip.Prefix{}); err == nil ||
		err.Error() != "2 subnets hold 2 nodes each: 10.1.0.0/24 (enP7s7), 10.9.0.0/24 (eth1); pick one with --subnet" {
		t.Fatalf("%v", err)
	}
	if seg, err := FindSegment([]string{"a", "b"}, [][]Addr{m1, m2}, netip.MustParsePrefix("10.9.0.0/16")); err != nil || seg.Addrs[1].Prefix.String() != "10.9.0.2/24" {
		t.Fatalf("%v %+v", err, seg)
	}
	if _, err := FindSegment([]string{"a", "b", "c"}, [][]Addr{a, b, c}, netip.Prefix{}); err == nil || !strings.Contains(err.Error(), "c: no address in 10.9.0.0/24") {
		t.Fatalf("%v", err)
	}
	if _, err := FindSegment([]string{"a", "b"}, [][]Addr{a, b}, netip.MustParsePrefix("10.8.0.0/16")); err == nil || !strings.Contains(err.Error(), "no node has an address in 10.8.0.0/16") {
		t.Fatalf("%v", err)
	}
}

func TestCableAddrsOfARingCable(t *testing.T) {
	a := ParseAddrs([]byte("lo UNKNOWN 127.0.0.1/8\nenP7s7 UP 10.1.0.1/24\nenp1s0f0np0 UP 192.168.100.10/24\nenp1s0f1np1 UP 192.168.101.10/24\n"))
	b := ParseAddrs([]byte("enP7s7 UP 10.1.0.2/24\nenp1s0f0np0 UP 192.168.102.11/24\nenp1s0f1np1 UP 192.168.100.11/24\n"))
	c := ParseAddrs([]byte("enP7s7 UP 10.1.0.3/24\nenp1s0f1np1 UP 192.168.103.12/24\n"))
	// the management subnet is everyone's: the cable's own is 192.168.100/24
	x, y, ok := CableAddrs([][]Addr{a, b, c}, 0, 1)
	if !ok || x.Dev != "enp1s0f0np0" || y.Prefix.String() != "192.168.100.11/24" {
		t.Fatalf("%v %+v %+v", ok, x, y)
	}
	if _, _, ok := CableAddrs([][]Addr{a, b, c}, 0, 2); ok {
		t.Fatal("no cable between a and c")
	}
}
