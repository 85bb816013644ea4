package fix

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// obsBefore is what ObserveScript printed on a rig host before fix ran
// (management port plus one cabled port at MTU 1500, no rail addresses).
const obsBefore = `link enP2p1s0f1np1 1500 up 1 mlx5_core 0002:01:00.1
link enP7s7 1500 up 1 - - 10.243.129.10/24
link enp1s0f1np1 1500 up 1 mlx5_core 0000:01:00.1
sysctl net.core.rmem_max 4194304
sysctl net.ipv4.ip_local_port_range 32768	60999
absent /etc/netplan/40-cx7.yaml
file /etc/nccl.conf
TkNDTF9ERUJVRz1XQVJOCg==
sshif enP7s7
dgx DGX Spark
`

func TestParseObservation(t *testing.T) {
	o, err := ParseObservation([]byte(obsBefore))
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	want := Observation{
		Links: []ObservedLink{
			{Name: "enP2p1s0f1np1", MTU: 1500, OperState: "up", Carrier: &yes, Driver: "mlx5_core", PCIAddr: "0002:01:00.1", Addrs: []string{}},
			{Name: "enP7s7", MTU: 1500, OperState: "up", Carrier: &yes, Addrs: []string{"10.243.129.10/24"}},
			{Name: "enp1s0f1np1", MTU: 1500, OperState: "up", Carrier: &yes, Driver: "mlx5_core", PCIAddr: "0000:01:00.1", Addrs: []string{}},
		},
		Sysctls:  map[string]string{"net.core.rmem_max": "4194304", "net.ipv4.ip_local_port_range": "32768 60999"},
		Files:    map[string][]byte{"/etc/nccl.conf": []byte("NCCL_DEBUG=WARN\n")},
		SSHIface: "enP7s7",
		DGX:      "DGX Spark",
	}
	if d := cmp.Diff(want, o, cmp.Comparer(func(a, b []string) bool { return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b)) })); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, bad := range []string{"link x\n", "link e 15x0 up 1 - -\n", "file /etc/nccl.conf\n", "file /etc/nccl.conf\n!!!\n", "bogus line\n"} {
		if _, err := ParseObservation([]byte(bad)); err == nil {
			t.Errorf("ParseObservation(%q) = nil error", bad)
		}
	}
}

func FuzzParseObservation(f *testing.F) {
	f.Add([]byte(obsBefore))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := ParseObservation(b)
		if err == nil {
			o.Facts("h")
		}
	})
}

// TestRegressions: after a change the twins' MTUs differ and the management
// port lost its address: Problems, collateral and the doctor all say so.
func TestRegressions(t *testing.T) {
	before, _ := ParseObservation([]byte(obsBefore))
	after, err := ParseObservation([]byte(`link enP2p1s0f1np1 9000 up 1 mlx5_core 0002:01:00.1 192.168.101.10/24
link enP7s7 1500 up 1 - -
link enp1s0f1np1 1500 up 1 mlx5_core 0000:01:00.1 192.168.100.10/24
file /etc/netplan/40-cx7.yaml
bmV0d29yazoKICB2ZXJzaW9uOiAyCiAgZXRoZXJuZXRzOgogICAgZW5wMXMwZjFucDE6CiAgICAgIG10dTogOTAwMAogICAgICBhZGRyZXNzZXM6CiAgICAgICAgLSAxOTIuMTY4LjEwMC4xMC8yNAogICAgZW5QMnAxczBmMW5wMToKICAgICAgbXR1OiA5MDAwCiAgICAgIGFkZHJlc3NlczoKICAgICAgICAtIDE5Mi4xNjguMTAxLjEwLzI0Cg==
dgx DGX Spark
`))
	if err != nil {
		t.Fatal(err)
	}
	hp := HostPlan{Host: "spark-01", Rails: []Rail{
		{NetDev: "enp1s0f1np1", Port: 1, Addr: "192.168.100.10/24", MTU: 9000},
		{NetDev: "enP2p1s0f1np1", Port: 1, Twin: 1, Addr: "192.168.101.10/24", MTU: 9000},
	}}
	if d := cmp.Diff([]string{"enp1s0f1np1: mtu 1500, want 9000"}, Problems(hp, after)); d != "" {
		t.Errorf("Problems (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"enP7s7: lost 10.243.129.10/24"}, collateral(hp, before, after)); d != "" {
		t.Errorf("collateral (-want +got):\n%s", d)
	}
	// The file sets 9000 on both twins; the running enp1s0f1np1 is at 1500.
	want := []string{"doctor: spark.mtu-not-applied (enp1s0f1np1): MTU 1500 running; /etc/netplan/40-cx7.yaml sets 9000"}
	if d := cmp.Diff(want, doctorRegressions("spark-01", before, after)); d != "" {
		t.Errorf("doctorRegressions (-want +got):\n%s", d)
	}
}
