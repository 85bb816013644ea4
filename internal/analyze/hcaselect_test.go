package analyze

import (
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sparkrig/sparkrig/internal/report"
)

func readTrain(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/field/train/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Field case 283: NCCL_IB_HCA=ib0, the IPoIB netdev of mlx5_1, on two A800
// nodes; NET/IB finds no device and NCCL runs over NET/Socket. The filter
// ranks first and names the HCA under ib0 from the paste's ibdev2netdev.
func TestHCAFilterNetdevFieldCase(t *testing.T) {
	a := analyseText(readTrain(t, "283_ib_hca_set_to_netdev_name_falls_back_to_socket.txt"))
	if got := topCause(a); got != "nccl.ib-hca-matches-none" {
		t.Fatalf("first %q (%s)", got, flagIDs(a))
	}
	f := flagOf(a, "nccl.ib-hca-matches-none")
	for _, want := range []string{"NCCL_IB_HCA=ib0", `"NET/IB : No device found"`, "ib0 is the netdev of HCA mlx5_1 port 1", "NCCL uses NET/Socket"} {
		if !strings.Contains(f.Evidence, want) {
			t.Errorf("evidence %q lacks %q", f.Evidence, want)
		}
	}
	if !strings.Contains(f.Fix, "set NCCL_IB_HCA to =mlx5_1:1 ") {
		t.Errorf("fix %q", f.Fix)
	}
	if !strings.Contains(f.Message, "names ib0, a network interface") {
		t.Errorf("message %q", f.Message)
	}
	if hasFlag(a, "nccl.ib-no-device") {
		t.Errorf("the devices-not-visible reading stays beside it (%s)", flagIDs(a))
	}
}

// hcaFilterJob is a job of n ranks over hosts whose NCCL_IB_HCA is hca and
// whose NET/IB found no device (NCCL 2.20's lines), falling back to
// NET/Socket; with ibdev, each host prints ibdev2netdev first.
func hcaFilterJob(r *rand.Rand, n, hosts int, hca string, ibdev []string) []string {
	var out []string
	for h := range hosts {
		for _, l := range ibdev {
			out = append(out, fmt.Sprintf("node%03d: %s", h+1, l))
		}
	}
	for rank := range n {
		h := rank % hosts
		p := ncclPrefix(fmt.Sprintf("node%03d", h+1), rank, rank/hosts) + " NCCL INFO "
		addr := fmt.Sprintf("10.20.%d.%d", h, 10+r.Intn(200))
		out = append(out,
			p+"Bootstrap : Using eth0:"+addr+"<0>",
			p+"NCCL_IB_DISABLE set by environment to 0.",
			p+"NCCL_IB_HCA set to "+hca,
			p+"NET/IB : No device found.",
			p+"NET/Socket : Using [0]eth0:"+addr+"<0>",
			p+"Using network Socket",
			p+fmt.Sprintf("comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x5f0 - Init START", 0x11ea38e0+rank, rank, n, rank/hosts, rank/hosts, 0x18+rank/hosts),
		)
	}
	for rank := range n {
		h := rank % hosts
		p := ncclPrefix(fmt.Sprintf("node%03d", h+1), rank, rank/hosts) + " NCCL INFO "
		out = append(out, p+fmt.Sprintf("Channel 00/0 : %d[%d] -> %d[%d] [send] via NET/Socket/0", rank, rank/hosts, (rank+1)%n, ((rank+1)%n)/hosts))
	}
	return out
}

// netdevFilters are NCCL_IB_HCA values that name network interfaces only.
var netdevFilters = []string{"ib0", "ib1:1", "=ib0", "ens13np0", "enp1s0f0np0", "eno1", "eth2", "bond0", "enP2p1s0f1np1", "ib0,ib1", "=ib0:1,ib1:1"}

// Any rank count, any host count, any prefix: a filter of netdev names with
// no NET/IB device ranks first.
func TestHCAFilterNetdevAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(2831))
	for _, hca := range netdevFilters {
		for _, pre := range causePrefixes(r) {
			hosts := 1 + r.Intn(6)
			n := hosts * (1 + r.Intn(8))
			text := prefixed(pre, hcaFilterJob(r, n, hosts, hca, nil))
			a := analyseText(text)
			if got := topCause(a); got != "nccl.ib-hca-matches-none" {
				t.Fatalf("NCCL_IB_HCA=%s, %d ranks on %d hosts, behind %q: first %q (%s)\n%s", hca, n, hosts, pre, got, flagIDs(a), text)
			}
		}
	}
}

// A name of no netdev shape that the paste's ibdev2netdev or rdma link
// lines show as a netdev is read as one too, and the HCA under it named.
func TestHCAFilterNamesHCAOfListedNetdev(t *testing.T) {
	r := rand.New(rand.NewSource(2832))
	for _, tc := range []struct {
		listing []string
		hca     string
		want    string
	}{
		{[]string{"mlx5_0 port 1 ==> ens13np0 (Up)", "mlx5_1 port 1 ==> ib0 (Up)", "mlx5_3 port 1 ==> ib1 (Up)"}, "ib1", "=mlx5_3:1 "},
		{[]string{"ibdev2netdev: rocep1s0f1 port 1 ==> enp1s0f1np1 (Up)", "roceP2p1s0f1 port 1 ==> enP2p1s0f1np1 (Up)"}, "enP2p1s0f1np1", "=roceP2p1s0f1:1 "},
		// rdma link (iproute2)
		{[]string{"link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens13np0 ", "link mlx5_2/1 state ACTIVE physical_state LINK_UP netdev storage0 "}, "storage0", "=mlx5_2:1 "},
		{[]string{"rdma device: link rocep1s0f0/1 state ACTIVE physical_state LINK_UP netdev fabric1 "}, "=fabric1", "=rocep1s0f0:1 "},
	} {
		for _, pre := range causePrefixes(r) {
			hosts := 1 + r.Intn(4)
			n := hosts * (1 + r.Intn(4))
			a := analyseText(prefixed(pre, hcaFilterJob(r, n, hosts, tc.hca, tc.listing)))
			if got := topCause(a); got != "nccl.ib-hca-matches-none" {
				t.Fatalf("NCCL_IB_HCA=%s behind %q: first %q (%s)", tc.hca, pre, got, flagIDs(a))
			}
			if f := flagOf(a, "nccl.ib-hca-matches-none"); !strings.Contains(f.Fix, tc.want) {
				t.Errorf("NCCL_IB_HCA=%s behind %q: fix %q lacks %q", tc.hca, pre, f.Fix, tc.want)
			}
		}
	}
}

// A paste of several nodes whose ibdev2netdev lines put the netdev on a
// different HCA on each: the fix names every one and sets the filter per
// node, never one HCA for every node.
func TestHCAFilterNetdevOnDifferentHCAs(t *testing.T) {
	r := rand.New(rand.NewSource(2834))
	listing := []string{"node001: mlx5_1 port 1 ==> ib0 (Up)", "node002: mlx5_4 port 1 ==> ib0 (Up)"}
	a := analyseText(prefixed("", hcaFilterJob(r, 4, 2, "ib0", listing)))
	f := flagOf(a, "nccl.ib-hca-matches-none")
	if f == nil || topCause(a) != "nccl.ib-hca-matches-none" {
		t.Fatalf("first %q (%s)", topCause(a), flagIDs(a))
	}
	if !strings.Contains(f.Fix, "on each node") || !strings.Contains(f.Fix, "mlx5_1:1, mlx5_4:1") || strings.Contains(f.Fix, "=mlx5_1") {
		t.Errorf("fix %q", f.Fix)
	}
	if !strings.Contains(f.Evidence, "ib0 is the netdev of HCA mlx5_1 port 1, ib0 is the netdev of HCA mlx5_4 port 1") {
		t.Errorf("evidence %q", f.Evidence)
	}
}

// Filters that may name an HCA, exclude lists, a NET/IB that found
// devices, IB turned off: the filter rule stays quiet.
func TestHCAFilterDoesNotFire(t *testing.T) {
	r := rand.New(rand.NewSource(2833))
	for name, tc := range map[string]struct {
		lines []string
		first string
	}{
		"an HCA name, devices not visible":    {hcaFilterJob(r, 2, 2, "mlx5_0", nil), "nccl.net-socket"},
		"exact HCA ports":                     {hcaFilterJob(r, 4, 2, "=mlx5_0:1,mlx5_3:1", nil), "nccl.net-socket"},
		"an HCA prefix":                       {hcaFilterJob(r, 2, 2, "mlx5", nil), "nccl.net-socket"},
		"a persistent RDMA name":              {hcaFilterJob(r, 2, 2, "ibp12s0", nil), "nccl.net-socket"},
		"a RoCE persistent name":              {hcaFilterJob(r, 2, 2, "rocep1s0f1", nil), "nccl.net-socket"},
		"an exclude list of netdevs":          {hcaFilterJob(r, 2, 2, "^ib0", nil), "nccl.net-socket"},
		"a netdev beside an HCA name":         {hcaFilterJob(r, 2, 2, "mlx5_0,ib0", nil), "nccl.net-socket"},
		"an unlisted name of no netdev shape": {hcaFilterJob(r, 2, 2, "fabric1", []string{"mlx5_0 port 1 ==> ens13np0 (Up)"}), "nccl.net-socket"},
		// rdma-core's persistent names can give an HCA and its IPoIB
		// netdev one name: the entry names the HCA too
		"an HCA named as its netdev": {hcaFilterJob(r, 2, 2, "ibp59s0", []string{"ibp59s0 port 1 ==> ibp59s0 (Up)"}), "nccl.net-socket"},
		"a prefix of a listed HCA":   {hcaFilterJob(r, 2, 2, "ib", []string{"ib0 port 1 ==> ib0 (Up)"}), "nccl.net-socket"},
	} {
		a := analyseText(prefixed("", tc.lines))
		if hasFlag(a, "nccl.ib-hca-matches-none") {
			t.Errorf("%s: raised (%s)", name, flagIDs(a))
		}
		if tc.first != "" && firstFail(a) != tc.first {
			t.Errorf("%s: first %q, want %q (%s)", name, firstFail(a), tc.first, flagIDs(a))
		}
	}
	p := ncclPrefix("node001", 0, 0) + " NCCL INFO "
	for name, lines := range map[string][]string{
		"NET/IB found its devices": {p + "NCCL_IB_HCA set to ib0", p + "NET/IB : Using [0]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>", p + "Using network IB"},
		"IB turned off":            {p + "NCCL_IB_DISABLE set by environment to 1.", p + "NCCL_IB_HCA set to ib0", p + "NET/IB : No device found.", p + "NET/Socket : Using [0]eth0:10.0.0.1<0>", p + "Using network Socket"},
		"no filter":                {p + "NET/IB : No device found.", p + "NET/Socket : Using [0]eth0:10.0.0.1<0>", p + "Using network Socket"},
		"the filter, no failure":   {p + "NCCL_IB_HCA set to ib0", p + "NET/Socket : Using [0]eth0:10.0.0.1<0>", p + "Using network Socket"},
	} {
		if a := analyseText(prefixed("", lines)); hasFlag(a, "nccl.ib-hca-matches-none") {
			t.Errorf("%s: raised (%s)", name, flagIDs(a))
		}
	}
}

// netdevName takes interface names and leaves RDMA device names.
func TestNetdevName(t *testing.T) {
	for _, n := range []string{"ib0", "ib12", "eth0", "bond1", "em1", "ens13np0", "enp1s0f0", "eno1", "enP2p1s0f1np1", "enx0c42a1b2c3d4"} {
		if !netdevName.MatchString(n) {
			t.Errorf("%s: not read as a netdev", n)
		}
	}
	for _, n := range []string{"mlx5_0", "mlx5_bond_0", "mlx4_0", "bnxt_re0", "irdma0", "efa_0", "erdma_0", "hfi1_0", "qedr0", "rxe0", "siw0", "ibp12s0", "ibs1", "rocep1s0f1", "roceP2p1s0f1", "iwp3s0", "ib", "mlx5", "i40iw0", "hns_0", "ionic_0"} {
		if netdevName.MatchString(n) {
			t.Errorf("%s: read as a netdev", n)
		}
	}
}

// Field case 287: the two lines a DGX Spark write-up quotes (a QP timeout
// toward a twin that had only a link-local address). The quote shows the
// remote end only, and a direct-cabled DGX Spark pair is link-local at
// both ends by NVIDIA's own addressing: the line alone cannot tell that an
// end has no configured address, so the signature stays quiet; the
// timeout towards a link-local peer is what is read
// (rdma.qp-link-local-remote, qplinklocal_test.go).
func TestLinkLocalGIDFieldCase(t *testing.T) {
	a := analyseText(readTrain(t, "287_spark_link_local_twin_hcas_in_nccl_ib_hca_qp_timeout.txt"))
	if hasFlag(a, "error.ib-qp-link-local-gid") || topCause(a) != "rdma.qp-link-local-remote" {
		t.Fatalf("first %q (%s)", topCause(a), flagIDs(a))
	}
}

// linkLocalGIDCase builds NCCL's failed ibv_modify_qp line with a
// link-local IPv4 GID at one end (src/misc/ibvwrap.cc v2.24.3-1 to
// v2.30.7-1: the WARN, or the INFO of a retry), or the two-line quote of
// field case 287.
var linkLocalGIDCase = docSignatureCase{"error.ib-qp-link-local-gid", func(r *rand.Rand, host string, rank, dev int) []string {
	p := ncclPrefix(host, rank, dev)
	ll := fmt.Sprintf("::ffff:169.254.%d.%d", r.Intn(256), 1+r.Intn(254))
	fab := fmt.Sprintf("::ffff:10.20.%d.%d", r.Intn(8), 10+r.Intn(8))
	local, remote := fab, ll
	if r.Intn(3) == 0 {
		local, remote = ll, fab
	}
	errno := []string{"110 Connection timed out", "22 Invalid argument", "101 Network is unreachable"}[r.Intn(3)]
	msg := fmt.Sprintf("Call to ibv_modify_qp failed with %s, on dev rocep1s0f%d:1, curr state INIT, next state RTR, local GID index %d, local GID %s, remote GID %s", errno, dev%2, r.Intn(8), local, remote)
	return []string{p + fmt.Sprintf(" misc/ibvwrap.cc:%d NCCL WARN %s", 291+r.Intn(90), msg)}
}}

// Any rank count, any host count, any prefix: a link-local GID in a failed
// queue pair ranks first.
func TestLinkLocalGIDAnyRanksAnyPrefix(t *testing.T) {
	firstAnyRanksAnyPrefix(t, rand.New(rand.NewSource(2871)), []docSignatureCase{linkLocalGIDCase}, 3)
}

// GIDs of configured addresses, InfiniBand's fe80:: GIDs, addresses next
// to 169.254/16, and link-local addresses outside a GID do not raise it.
func TestLinkLocalGIDDoesNotFire(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	w := p + " misc/ibvwrap.cc:376 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index %d, local GID %s, remote GID %s"
	for name, line := range map[string]string{
		"fabric addresses":       fmt.Sprintf(w, 3, "::ffff:10.0.0.1", "::ffff:10.0.0.2"),
		"InfiniBand GIDs":        fmt.Sprintf(w, 0, "fe80::946d:ae03:fc:e52c", "fe80::946d:ae03:d5:383e"),
		"next to link-local":     fmt.Sprintf(w, 3, "::ffff:169.255.1.1", "::ffff:169.25.4.2"),
		"a public 169 address":   fmt.Sprintf(w, 3, "::ffff:169.2.54.1", "::ffff:169.25.40.2"),
		"a link-local bootstrap": p + " NCCL INFO Bootstrap : Using eth1:169.254.3.1<0>",
		"a link-local GID list":  p + " NCCL INFO NET/IB: IbDev 0 Port 1 qpn 704 mtu 5 GID 3 (0/FEA9FFFF00000000)",
		// a direct-cabled DGX Spark pair is link-local at both ends
		"both ends link-local": fmt.Sprintf(w, 3, "::ffff:169.254.10.1", "::ffff:169.254.20.2"),
		// a retry may still succeed
		"a retry":       p + " NCCL INFO Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.1, remote GID ::ffff:169.254.20.2, retrying 1/35 after 100 msec of sleep",
		"one end shown": "remote GID ::ffff:169.254.60.178",
	} {
		a := analyseText(prefixed("", []string{line}))
		if hasFlag(a, "error.ib-qp-link-local-gid") {
			t.Errorf("%s: raised (%s)", name, flagIDs(a))
		}
	}
}

// Field case 289: eight IB HCAs and a bonded RoCE port in one list. The
// line alone shows no failure, and healthy machines print such lists (an
// Ethernet storage port beside IB rails): said as a note; beside a
// failure it is a cause.
func TestMixedLinkLayersFieldCase(t *testing.T) {
	text := readTrain(t, "289_nccl_net_ib_includes_mlx5_bond_roce_hca_exclude_with_ib_hca.txt")
	a := analyseText(text)
	if f := flagOf(a, "nccl.ib-mixed-link-layers"); f == nil || f.Severity != report.Info || topCause(a) != "" {
		t.Fatalf("alone: flag %+v, first %q (%s)", f, topCause(a), flagIDs(a))
	}
	a = analyseText(text + "node01:12:34 [0] transport/net_ib.cc:1234 NCCL WARN NET/IB : Got completion from peer 10.0.12.83<52345> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.12.82 remoteGid ::ffff:10.0.12.83\n")
	f := flagOf(a, "nccl.ib-mixed-link-layers")
	if f == nil || f.Severity != report.Warn {
		t.Fatalf("beside a failure: flag %+v (%s)", f, flagIDs(a))
	}
	if !strings.HasPrefix(f.Evidence, "NET/IB : Using [8]mlx5_bond_0:1/RoCE with [0]mlx5_0:1/IB ") {
		t.Errorf("evidence %q", f.Evidence)
	}
	if !strings.Contains(f.Fix, "set NCCL_IB_HCA to ^=mlx5_bond_0 ") || !strings.Contains(f.Message, "1 RoCE device beside 8") {
		t.Errorf("fix %q, message %q", f.Fix, f.Message)
	}
}

// mixedList is a "NET/IB : Using" list of ib InfiniBand and roce RoCE
// devices in a random order.
func mixedList(r *rand.Rand, ib, roce int) (string, []string) {
	var devs, roceNames []string
	for i := range ib {
		devs = append(devs, fmt.Sprintf("mlx5_%d:1/IB", i))
	}
	for i := range roce {
		n := []string{"mlx5_bond_%d", "mlx5_%d", "rocep%ds0f0"}[r.Intn(3)]
		name := fmt.Sprintf(n, 20+i)
		roceNames = append(roceNames, name)
		devs = append(devs, name+":1/RoCE")
	}
	r.Shuffle(len(devs), func(i, j int) { devs[i], devs[j] = devs[j], devs[i] })
	var b strings.Builder
	for i, d := range devs {
		fmt.Fprintf(&b, "[%d]%s ", i, d)
	}
	return strings.TrimSpace(b.String()), roceNames
}

// Any rank count, any prefix, any mix: the smaller link layer's devices
// are named; a list of one link layer raises nothing.
func TestMixedLinkLayersAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(2891))
	for _, pre := range causePrefixes(r) {
		for range 4 {
			ib, roce := 3+r.Intn(7), 1+r.Intn(2)
			list, names := mixedList(r, ib, roce)
			hosts := 1 + r.Intn(4)
			n := hosts * (1 + r.Intn(8))
			var lines []string
			for rank := range n {
				p := ncclPrefix(fmt.Sprintf("node%03d", rank%hosts+1), rank, rank/hosts) + " NCCL INFO "
				lines = append(lines, p+"NET/IB : Using "+list+" [RO]; OOB ibp25s0:10.0.12.82<0>", p+"Using network IB")
			}
			a := analyseText(prefixed(pre, lines))
			f := flagOf(a, "nccl.ib-mixed-link-layers")
			if f == nil {
				t.Fatalf("%q behind %q: not raised (%s)", list, pre, flagIDs(a))
			}
			_, ex, _ := strings.Cut(f.Fix, "^=")
			ex, _, _ = strings.Cut(ex, " ")
			got := strings.Split(ex, ",")
			slices.Sort(got)
			slices.Sort(names)
			if !slices.Equal(got, names) {
				t.Errorf("%q: fix %q excludes %v, want %v", list, f.Fix, got, names)
			}
		}
	}
	for name, list := range map[string]string{
		"DGX Spark":   "[0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE",
		"eight IB":    "[0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB",
		"RoCE rails":  "[0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE [2]mlx5_4:1/RoCE [3]mlx5_5:1/RoCE",
		"one device":  "[0]mlx5_0:1/IB",
		"one of each": "[0]mlx5_0:1/RoCE [1]mlx5_2:1/IB",
		"merged RoCE": "[0]={[0] rocep1s0f1:1/RoCE [1] roceP2p1s0f1:1/RoCE} [RO]",
	} {
		p := ncclPrefix("node001", 0, 0) + " NCCL INFO "
		a := analyseText(prefixed("", []string{p + "NET/IB : Using " + list + "; OOB eth0:10.0.0.1<0>", p + "Using network IB"}))
		if hasFlag(a, "nccl.ib-mixed-link-layers") {
			t.Errorf("%s: raised (%s)", name, flagIDs(a))
		}
	}
}

// No other fixture raises the four rules.
func TestHCASelectionNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"nccl.ib-hca-matches-none", "error.ib-qp-link-local-gid", "nccl.ib-mixed-link-layers", "nccl.comm-id-unreachable"}, map[string]bool{
		"field/train/269_docker_bridge_nccl_comm_id_host_ip_no_interface_same_subnet_bind_failed.txt": true,
		"field/train/283_ib_hca_set_to_netdev_name_falls_back_to_socket.txt":                          true,
		"field/train/287_spark_link_local_twin_hcas_in_nccl_ib_hca_qp_timeout.txt":                    true,
		"field/train/289_nccl_net_ib_includes_mlx5_bond_roce_hca_exclude_with_ib_hca.txt":             true,
		// an Azure ND H100 v5 node's list: eight IB HCAs and mlx5_1, its
		// accelerated-networking Ethernet port (the thread's cause is the
		// topology file; the warning stands)
		"field/train/226_azure_ndv5_nonpersistent_mlx5_names_topo_file_busid_not_found.txt": true,
	})
}

// Field case 269 (NVIDIA/nccl#331): containers on Docker's bridge with
// NCCL_COMM_ID set to a host's address.
func TestCommIDUnreachableFieldCase(t *testing.T) {
	a := analyseText(readTrain(t, "269_docker_bridge_nccl_comm_id_host_ip_no_interface_same_subnet_bind_failed.txt"))
	if got := topCause(a); got != "nccl.comm-id-unreachable" {
		t.Fatalf("first %q (%s)", got, flagIDs(a))
	}
	f := flagOf(a, "nccl.comm-id-unreachable")
	want := "Net : No interface found in the same subnet as remote address 192.168.0.91<27030>; Call to bind failed : Cannot assign requested address; this rank bootstraps over eth0:172.17.0.3"
	if f.Evidence != want {
		t.Errorf("evidence %q", f.Evidence)
	}
	if !strings.Contains(f.Message, "(192.168.0.91, NCCL_COMM_ID)") {
		t.Errorf("message %q", f.Message)
	}
}

// commIDJob: every rank of a job in containers bootstraps over its bridge
// address and warns that no interface shares the NCCL_COMM_ID subnet; the
// root rank's bind, or the other ranks' connects, fail (the forms of
// src/include/socket.h v2.4.8-1, src/misc/socket.cc v2.12 to v2.26; a
// "No route to host" names its cause itself, error.socket-no-route).
func commIDJob(r *rand.Rand, n, hosts int, bindFails bool) []string {
	id := fmt.Sprintf("192.168.%d.%d", r.Intn(256), 2+r.Intn(250))
	port := 20000 + r.Intn(30000)
	var out []string
	for rank := range n {
		h := rank % hosts
		pre := ncclPrefix(fmt.Sprintf("%012x", 0xe82c50601d13+h), rank, rank/hosts)
		out = append(out,
			pre+fmt.Sprintf(" misc/socket.cc:%d NCCL WARN Net : No interface found in the same subnet as remote address %s<%d>", 197+r.Intn(70), id, port),
			pre+fmt.Sprintf(" NCCL INFO Bootstrap : Using [0]eth0:172.17.0.%d<0>", 2+h))
		switch {
		case rank == 0 && bindFails:
			out = append(out, pre+fmt.Sprintf(" include/socket.h:333 NCCL WARN Call to bind failed%s Cannot assign requested address", []string{" :", ":"}[r.Intn(2)]),
				pre+" NCCL INFO bootstrap.cc:91 -> 2")
		case rank > 0 && !bindFails:
			form := []string{"Net : Connect to %s<%d> failed : Connection timed out", "socketStartConnect: Connect to %s<%d> failed : Connection refused"}[r.Intn(2)]
			out = append(out, pre+" misc/socket.cc:456 NCCL WARN "+fmt.Sprintf(form, id, port))
		}
	}
	return out
}

// Any rank count, any host count, any prefix, a bind or a connect failure:
// the address ranks first.
func TestCommIDUnreachableAnyRanksAnyPrefix(t *testing.T) {
	r := rand.New(rand.NewSource(2691))
	for _, pre := range causePrefixes(r) {
		for _, bind := range []bool{true, false} {
			hosts := 2 + r.Intn(5)
			n := hosts * (1 + r.Intn(4))
			text := prefixed(pre, commIDJob(r, n, hosts, bind))
			a := analyseText(text)
			if got := topCause(a); got != "nccl.comm-id-unreachable" {
				t.Fatalf("bind %v, %d ranks on %d hosts, behind %q: first %q (%s)\n%s", bind, n, hosts, pre, got, flagIDs(a), text)
			}
		}
	}
}

// The WARN alone (an address reached through a gateway), a failure at
// another address, a bind failure of another kind: no flag.
func TestCommIDUnreachableDoesNotFire(t *testing.T) {
	p := ncclPrefix("node001", 0, 0)
	warn := p + " misc/socket.cc:238 NCCL WARN Net : No interface found in the same subnet as remote address 10.1.2.3<29500>"
	for name, lines := range map[string][]string{
		"the WARN alone":          append([]string{warn}, startup("node001", 0, 0, 0, "2.18.6")...),
		"another address refused": {warn, p + " misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.1.9.3<29500> failed : Connection refused"},
		"a port in use":           {warn, p + " misc/socket.cc:437 NCCL WARN Call to bind failed : Address already in use"},
		"a bind failure alone":    {p + " include/socket.h:333 NCCL WARN Call to bind failed : Cannot assign requested address"},
	} {
		if a := analyseText(prefixed("", lines)); hasFlag(a, "nccl.comm-id-unreachable") {
			t.Errorf("%s: raised (%s)", name, flagIDs(a))
		}
	}
}

// The filter's remedy never names a port a listing shows down: NCCL uses
// only ACTIVE ports (src/transport/net_ib/init.cc v2.30.7-1), so a down
// port named in NCCL_IB_HCA finds no device either. Field case 283's
// listing: ens17np0 is the netdev of mlx5_2 port 1, "(Down)" in
// ibdev2netdev and "state DOWN" in rdma link.
func TestHCAFilterFixNamesOnlyUpPorts(t *testing.T) {
	r := rand.New(rand.NewSource(2835))
	listing283 := []string{
		"ibdev2netdev: mlx5_0 port 1 ==> ens13np0 (Up)",
		"mlx5_1 port 1 ==> ib0 (Up)",
		"mlx5_2 port 1 ==> ens17np0 (Down)",
		"mlx5_3 port 1 ==> ib1 (Up)",
		"rdma device: link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens13np0 ",
		"link mlx5_2/1 state DOWN physical_state DISABLED netdev ens17np0 ",
	}
	for _, tc := range []struct {
		listing       []string
		hca           string
		want, notWant []string
	}{
		// the named netdev's port is down: the ports shown up instead
		{listing283, "ens17np0", []string{"=mlx5_0:1,mlx5_1:1,mlx5_3:1 ", "the port under ens17np0 is down"}, []string{"mlx5_2"}},
		// ib0 up on one node, down on the other: per node, the up one only
		{[]string{"node001: mlx5_1 port 1 ==> ib0 (Up)", "node002: mlx5_4 port 1 ==> ib0 (Down)"}, "ib0", []string{"on each node to the active HCA port under ib0 there (this paste shows mlx5_1:1 up;", "the port under ib0 is down"}, []string{"mlx5_4", "=mlx5_1"}},
		// rdma link alone says it
		{[]string{"link mlx5_2/1 state DOWN physical_state DISABLED netdev ens17np0 ", "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens13np0 "}, "ens17np0", []string{"=mlx5_0:1 "}, []string{"mlx5_2"}},
		// one up, one down: the up one only
		{listing283, "ib0,ens17np0", []string{"=mlx5_1:1 (the HCA port under ib0;", "the port under ens17np0 is down"}, []string{"mlx5_2"}},
		// up in ibdev2netdev, INIT in rdma link: not ACTIVE, so down
		{[]string{"mlx5_4 port 1 ==> ib3 (Up)", "link mlx5_4/1 state INIT physical_state LINK_UP netdev ib3 "}, "ib3", []string{"active HCA ports (rdma link: state ACTIVE"}, []string{"mlx5_4"}},
		// nothing shown up anywhere
		{[]string{"mlx5_2 port 1 ==> ens17np0 (Down)"}, "ens17np0", []string{"active HCA ports", "is down"}, []string{"=mlx5"}},
	} {
		for _, pre := range causePrefixes(r) {
			hosts := 1 + r.Intn(4)
			n := hosts * (1 + r.Intn(4))
			a := analyseText(prefixed(pre, hcaFilterJob(r, n, hosts, tc.hca, tc.listing)))
			if got := topCause(a); got != "nccl.ib-hca-matches-none" {
				t.Fatalf("NCCL_IB_HCA=%s behind %q: first %q (%s)", tc.hca, pre, got, flagIDs(a))
			}
			f := flagOf(a, "nccl.ib-hca-matches-none")
			for _, w := range tc.want {
				if !strings.Contains(f.Fix, w) {
					t.Errorf("NCCL_IB_HCA=%s behind %q: fix %q lacks %q", tc.hca, pre, f.Fix, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(f.Fix, w) {
					t.Errorf("NCCL_IB_HCA=%s behind %q: fix %q names %q, a port shown down", tc.hca, pre, f.Fix, w)
				}
			}
		}
	}
}

// Listings read with their state: ibdev2netdev's (Up)/(Down), rdma link's
// state (ACTIVE up, anything else down), a port listed twice keeping down.
func TestRDMAPortsState(t *testing.T) {
	var r rdmaPorts
	for _, l := range []string{
		"mlx5_0 port 1 ==> ens13np0 (Up)",
		"mlx5_2 port 1 ==> ens17np0 (Down)",
		"mlx5_5 port 1 ==> ib5",
		"link mlx5_3/1 state ARMED physical_state LINK_UP netdev ib1 ",
		"link mlx5_0/1 state DOWN physical_state DISABLED netdev ens13np0 ",
		"link mlx5_6/1 subnet_prefix fe80:0000:0000:0000 lid 5 sm_lid 6 lmc 0 state ACTIVE physical_state LINK_UP netdev ib6 ",
	} {
		r.observe([]byte(l))
	}
	want := map[string]portState{"mlx5_0": portDown, "mlx5_2": portDown, "mlx5_5": portStateUnknown, "mlx5_3": portDown, "mlx5_6": portUp}
	if len(r.ports) != len(want) {
		t.Fatalf("ports %+v", r.ports)
	}
	for _, p := range r.ports {
		if p.state != want[p.hca] {
			t.Errorf("%s: state %d, want %d", p.hca, p.state, want[p.hca])
		}
	}
	if got := r.up(); !slices.Equal(got, []string{"mlx5_6:1"}) {
		t.Errorf("up %v", got)
	}
}
