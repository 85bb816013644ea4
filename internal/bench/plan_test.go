package bench

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/tuning"
)

// Without a RoCE v2 IPv4 GID the index to pass cannot be known: both ends
// use rdma_cm (-R), which resolves the path from the IP address, and the
// server's readiness cannot be seen on a TCP port.
func TestPerftestUsesRDMACMWithoutGID(t *testing.T) {
	nodes := healthyPair()
	for _, d := range nodes[1].RDMA {
		for i := range d.Ports {
			d.Ports[i].GIDs = nil
		}
	}
	p, err := NewPlan(nodes, Options{Kinds: []string{KindRDMA}, Tools: Tools{Perftest: "/opt/perftest"}})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Steps[0]
	want := []string{
		"/opt/perftest/ib_write_bw -d rocep1s0f1 -i 1 -p 18515 -F -R --report_gbits -q 1 -D 10",
		"/opt/perftest/ib_write_bw -d rocep1s0f1 -i 1 -p 18515 -F -R --report_gbits -q 1 -D 10 192.168.100.10",
	}
	var got []string
	for _, c := range st.Commands() {
		got = append(got, CommandLine(c))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if st.Servers[0].ListenPort != 0 {
		t.Errorf("rdma_cm server watched on TCP port %d", st.Servers[0].ListenPort)
	}
	if len(p.Steps) != 5 || p.Steps[4].ID != "rdma/all/ib_write_bw" {
		t.Errorf("steps %v", p.Steps)
	}
}

func TestScriptQuotesEverything(t *testing.T) {
	c := Cmd{Argv: []string{"/x y/iperf3", "-c", "a'b"}, Env: []Var{{Name: "A", Value: "1 2"}}}
	if got, want := CommandLine(c), `'A=1 2' '/x y/iperf3' -c 'a'\''b'`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if s := Script(c, "/tmp/p.pid"); !strings.HasSuffix(s, ` sparkrig-bench /tmp/p.pid 0 env 'A=1 2' '/x y/iperf3' -c 'a'\''b'`) {
		t.Errorf("script ends %q", s[len(s)-80:])
	}
}

// FuzzMarkerFilter: the command's own stderr passes through unchanged
// around the wrapper's readiness line, however the writes are split.
func FuzzMarkerFilter(f *testing.F) {
	f.Add([]byte(" Couldn't listen on port\n"), []byte("iperf3: error - unable to start listener\n"), uint8(3))
	f.Add([]byte(""), []byte("Server listening on 5201 (test #1)\n"), uint8(1))
	f.Fuzz(func(t *testing.T, before, after []byte, split uint8) {
		if bytes.Contains(before, []byte(readyMarker)) || bytes.Contains(after, []byte(readyMarker)) || len(before) > 4000 {
			return
		}
		if len(before) > 0 && before[len(before)-1] != '\n' {
			before = append(before, '\n')
		}
		in := append(append(append([]byte{}, before...), readyMarker+"\n"...), after...)
		var out bytes.Buffer
		ready := make(chan string, 1)
		mf := &markerFilter{w: &out, found: ready}
		step := int(split%7) + 1
		for i := 0; i < len(in); i += step {
			mf.Write(in[i:min(len(in), i+step)])
		}
		if want := append(append([]byte{}, before...), after...); !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("got %q, want %q", out.Bytes(), want)
		}
		if len(ready) != 1 {
			t.Fatal("marker not reported")
		}
	})
}

// TestPortsWithinTheReservedSpan: every port a plan's servers listen on,
// and every port its clients connect to, lies in the span fix reserves
// (tuning.ReservedPorts) — perftest, the TCP test, qualify and the native
// collectives' rendezvous, on two Sparks with both ports cabled (4 rails).
func TestPortsWithinTheReservedSpan(t *testing.T) {
	addrs := func(o int) map[string]string {
		return map[string]string{"enp1s0f0np0": fmt.Sprintf("192.168.100.%d/24", o), "enP2p1s0f0np0": fmt.Sprintf("192.168.101.%d/24", o),
			"enp1s0f1np1": fmt.Sprintf("192.168.102.%d/24", o), "enP2p1s0f1np1": fmt.Sprintf("192.168.103.%d/24", o)}
	}
	nodes := []*facts.Node{sparkNode("spark-1", []int{0, 1}, addrs(10)), sparkNode("spark-2", []int{0, 1}, addrs(11))}
	p, err := NewPlan(nodes, Options{Kinds: []string{KindRDMA, KindTCP, KindQualify, KindNCCL}, NativeNCCL: "sparkrig", Native: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rails) != 4 {
		t.Fatalf("%d rails, want 4", len(p.Rails))
	}
	portArg := regexp.MustCompile(`^(?:.*:)?([0-9]{4,5})$`)
	var ports []int
	for _, st := range p.Steps {
		for _, c := range st.Commands() {
			if c.ListenPort != 0 {
				ports = append(ports, c.ListenPort)
			}
			for i, a := range c.Argv {
				if i == 0 || !slices.Contains([]string{"-p", "--port", "--listen", "--connect", "--rendezvous"}, c.Argv[i-1]) {
					continue
				}
				m := portArg.FindStringSubmatch(a)
				if m == nil {
					t.Fatalf("%s: %q after %s is no port", st.ID, a, c.Argv[i-1])
				}
				n, _ := strconv.Atoi(m[1])
				ports = append(ports, n)
			}
		}
	}
	if len(ports) < 20 {
		t.Fatalf("only %d ports in the plan", len(ports))
	}
	lo, hi := slices.Min(ports), slices.Max(ports)
	t.Logf("%d ports, %d..%d", len(ports), lo, hi)
	if lo < DefaultBasePort || hi >= DefaultBasePort+PortSpan {
		t.Errorf("ports %d..%d, outside %d..%d", lo, hi, DefaultBasePort, DefaultBasePort+PortSpan-1)
	}
	if got := tuning.ReservedPorts(); got != "18515-18814" {
		t.Errorf("tuning.ReservedPorts() = %q", got)
	}
}
