package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// A framework bound to a libnccl without an NCCL function it calls fails at
// import with the dynamic loader's "undefined symbol: nccl..." (field case
// 260, pytorch/pytorch#119932: libtorch_cuda.so needs ncclCommRegister,
// first declared in NCCL 2.19's nccl.h.in); named behind any prefix, from any
// number of ranks, in the loader's and Python's words.
func TestNCCLSymbolMissing(t *testing.T) {
	r := rand.New(rand.NewSource(260))
	const id = "error.nccl-symbol-missing"
	libs := []string{
		"/home/test/anaconda3/envs/myenv/lib/python3.9/site-packages/torch/lib/libtorch_cuda.so",
		"/usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so",
		"/opt/conda/lib/python3.11/site-packages/cupy_backends/cuda/libs/nccl.cpython-311-x86_64-linux-gnu.so",
		"libtorch_cuda.so.2.2",
	}
	syms := []string{"ncclCommRegister", "ncclCommSplit", "ncclCommInitRankConfig", "ncclRedOpCreatePreMulSum", "pncclAllReduce"}
	forms := []string{"ImportError: %s: undefined symbol: %s", "OSError: %s: undefined symbol: %s", "python: symbol lookup error: %s: undefined symbol: %s"}
	for _, pre := range causePrefixes(r) {
		for _, ranks := range []int{1, 2, 8} {
			var lines []string
			for i := 0; i < ranks; i++ {
				rp := ""
				if ranks > 1 {
					rp = fmt.Sprintf("[rank%d]: ", i)
				}
				lines = append(lines, rp+fmt.Sprintf(forms[r.Intn(len(forms))], libs[r.Intn(len(libs))], syms[r.Intn(len(syms))]))
			}
			if got := topCause(analyseText(prefixed(pre, lines))); got != id {
				t.Errorf("behind %q, %d ranks: first %q\n%q", pre, ranks, got, lines)
			}
		}
		// Another library's missing symbol is not NCCL's.
		other := []string{fmt.Sprintf(forms[r.Intn(len(forms))], libs[0], "cudaGetDriverEntryPointByVersion")}
		if a := analyseText(prefixed(pre, other)); hasFlag(a, id) {
			t.Errorf("behind %q: %s raised for a CUDA symbol (%s)", pre, id, flagIDs(a))
		}
	}
}

// A plugin of NCCL's own whose dlopen fails on an NCCL symbol is the
// plugin's failure, which NCCL goes on without, not a framework bound to
// the wrong libnccl: NCCL prints the dlerror in each release's words
// (src/net.cc v2.18.5-1 "NET/Plugin : Plugin load (%s) returned %d : %s",
// v2.19.3-1 "NET/Plugin : dlerror=%s No plugin found (%s), using internal
// implementation", src/plugin/plugin_open.cc v2.26.2-1 "%s/Plugin: %s",
// v2.30.7-1 "%s/Plugin: %s: %s" with the library first), for any of its
// plugin prefixes, behind any prefix. The net plugin's lines are named
// as its load failure; a framework's own line beside them still is
// error.nccl-symbol-missing.
func TestNCCLSymbolMissingNotOnPluginLoad(t *testing.T) {
	r := rand.New(rand.NewSource(2307))
	const id = "error.nccl-symbol-missing"
	kinds := map[string]string{"NET": "libnccl-net", "GIN": "libnccl-gin", "RMA": "libnccl-rma", "TUNER": "libnccl-tuner", "PROFILER": "libnccl-profiler", "ENV": "libnccl-env"}
	dirs := []string{"/opt/amazon/ofi-nccl/lib/", "/usr/lib/x86_64-linux-gnu/", "/opt/hpcx/nccl_rdma_sharp_plugin/lib/", ""}
	syms := []string{"ncclParamIbDisable", "ncclDebugLog", "ncclNetPlugin_v9", "ncclProfiler_v4"}
	for _, pre := range causePrefixes(r) {
		for kind, prefix := range kinds {
			lib := prefix + []string{".so", "-ofi.so", ".so.1"}[r.Intn(3)]
			dl := dirs[r.Intn(len(dirs))] + lib + ": undefined symbol: " + syms[r.Intn(len(syms))]
			p := ncclPrefix("node001", 0, 0) + " NCCL INFO "
			lines := []string{
				p + kind + "/Plugin: " + lib + ": " + dl,
				p + kind + "/Plugin: " + dl,
				kind + "/Plugin: " + lib + ": " + dl,
			}
			if kind == "NET" {
				lines = append(lines,
					p+"NET/Plugin : dlerror="+dl+" No plugin found ("+lib+"), using internal implementation",
					p+"NET/Plugin : Plugin load ("+lib+") returned 2 : "+dl,
					dl+" No plugin found ("+lib+"), using internal implementation")
			}
			for _, l := range lines {
				a := analyseText(prefixed(pre, []string{l}))
				if hasFlag(a, id) {
					t.Errorf("behind %q: %s raised on %q (%s)", pre, id, l, flagIDs(a))
				}
				if kind == "NET" && topCause(a) != "error.net-plugin-load-failed" {
					t.Errorf("behind %q: first %q on %q", pre, topCause(a), l)
				}
			}
			// the framework's own missing symbol beside it is still read
			both := []string{lines[0], "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister"}
			if got := topCause(analyseText(prefixed(pre, both))); got != id {
				t.Errorf("behind %q: with a framework's line, first %q", pre, got)
			}
		}
	}
	// libnccl itself and other libnccl-named libraries than the plugins'
	// prefix keep the signature: the loader names the library that needs
	// the symbol
	for _, l := range []string{
		"OSError: /usr/lib/x86_64-linux-gnu/libnccl.so.2: undefined symbol: ncclCommRegister",
		"ImportError: /opt/conda/lib/python3.11/site-packages/cupy_backends/cuda/libs/nccl.cpython-311-x86_64-linux-gnu.so: undefined symbol: ncclCommSplit",
	} {
		if a := analyseText(l + "\n"); !hasFlag(a, id) {
			t.Errorf("%q: %s not raised (%s)", l, id, flagIDs(a))
		}
	}
}

// aws-ofi-nccl's fi_av_insert of a peer's address failing ("Unable to insert
// remote address into address vector", v1.11.1-aws src/nccl_ofi_sendrecv.c
// and src/nccl_ofi_rdma.c with RC %d, v1.21.1 with RC as fi_strerror, its CM
// with "for device."; NCCL_OFI_WARN prefixes "NET/OFI ") is named behind
// NCCL's WARN prefix or a framework's rank tag, from any number of ranks.
func TestOFIAVInsertFailed(t *testing.T) {
	r := rand.New(rand.NewSource(251))
	const id = "error.ofi-av-insert-failed"
	msgs := []string{
		"NET/OFI Unable to insert remote address into address vector for device %d. RC: 0",
		"NET/OFI Unable to insert remote address into address vector for device %d. RC: Invalid argument",
		"NET/OFI CM: Unable to insert remote address into address vector for device.",
	}
	for _, pre := range causePrefixes(r) {
		for _, ranks := range []int{1, 2, 16} {
			var lines []string
			for i := 0; i < ranks; i++ {
				m := msgs[r.Intn(len(msgs))]
				if r.Intn(2) == 0 {
					m = fmt.Sprintf(m, i%8)
				}
				if r.Intn(2) == 0 {
					lines = append(lines, fmt.Sprintf("[rank%d]: ncclInternalError: Internal check failed.", i), fmt.Sprintf("[rank%d]: Last error:", i), fmt.Sprintf("[rank%d]: %s", i, m))
					continue
				}
				lines = append(lines, ncclPrefix(fmt.Sprintf("ip-10-0-%d-%d", i/8, 10+i/8), i, i%8)+" nccl_net_ofi_rdma_connect:4859 NCCL WARN "+m)
			}
			if got := topCause(analyseText(prefixed(pre, lines))); got != id {
				t.Errorf("behind %q, %d ranks: first %q\n%q", pre, ranks, got, lines)
			}
		}
	}
}

// The dynamic loader's reason a net plugin it found did not load (a symbol
// version of another libfabric, an undefined symbol), ahead of NCCL 2.19 to
// 2.21's "No plugin found (%s), using internal implementation" (field case
// 254, a paste that starts inside the dlerror text), is named behind any
// prefix; the default name not found is not (TestNetPluginNamedNotFound).
func TestNetPluginDlerrorFragment(t *testing.T) {
	r := rand.New(rand.NewSource(254))
	const id = "error.net-plugin-load-failed"
	dl := []string{
		"version `EFA_1.2' not found (required by /opt/amazon/efa/lib/libfabric.so.1)",
		"/opt/amazon/efa/lib/libfabric.so.1: version `FABRIC_1.7' not found (required by /opt/conda/lib/libnccl-net.so)",
		"/opt/aws-ofi-nccl/lib/libnccl-net.so: undefined symbol: fi_mr_regattr",
	}
	for _, pre := range causePrefixes(r) {
		d := dl[r.Intn(len(dl))]
		for _, line := range []string{
			d + " No plugin found (libnccl-net.so), using internal implementation",
			ncclPrefix("node001", 0, 0) + " NCCL INFO NET/Plugin : dlerror=" + d + " No plugin found (libnccl-net.so), using internal implementation",
		} {
			if got := topCause(analyseText(prefixed(pre, []string{line}))); got != id {
				t.Errorf("behind %q: first %q\n%q", pre, got, line)
			}
		}
	}
}

// No other fixture raises the two library signatures.
func TestLibLoadSignaturesNothingNewOnFixtures(t *testing.T) {
	noneRaisedOnFixtures(t, []string{"error.nccl-symbol-missing", "error.ofi-av-insert-failed"}, map[string]bool{
		"field/train/251_p5_torch_efa_unable_to_insert_remote_address_av_outbound_sg.txt":             true,
		"field/train/260_pytorch_2_2_import_undefined_symbol_ncclcommregister_conflicting_nccl.txt":   true,
		"field/train/286_import_torch_undefined_symbol_ncclmemfree_cu11_cu12_nccl_both_installed.txt": true,
	})
}

// A plugin that is there but whose own dependency the loader cannot find
// (the dlerror names another library than the plugin), in each release's
// words (2.18 "Plugin load (%s) returned %d : %s", 2.19 "dlerror=%s No plugin
// found (%s)", 2.21 "Plugin load returned %d : %s : when loading %s", 2.22 to
// 2.27 "NET/Plugin: %s", 2.28 on "NET/Plugin: %s: %s"), is named behind any
// prefix; the plugin itself not found is not (TestNetPluginNamedNotFound).
func TestNetPluginDependencyMissing(t *testing.T) {
	r := rand.New(rand.NewSource(1851))
	const id = "error.net-plugin-load-failed"
	deps := []string{"libfabric.so.1", "libibverbs.so.1", "/opt/amazon/efa/lib/libefa.so.1", "libcudart.so.12"}
	for _, pre := range causePrefixes(r) {
		d := deps[r.Intn(len(deps))] + ": cannot open shared object file: No such file or directory"
		p := ncclPrefix("node002", 1, 1) + " NCCL INFO "
		for release, lines := range map[int][]string{
			18: {p + "NET/Plugin : Plugin load (libnccl-net.so) returned 2 : " + d, p + "NET/Plugin : No plugin found, using internal implementation"},
			19: {p + "NET/Plugin : dlerror=" + d + " No plugin found (libnccl-net.so), using internal implementation"},
			21: {p + "NET/Plugin: Plugin load returned 2 : " + d + " : when loading libnccl-net.so", p + "NET/Plugin: Using internal network plugin."},
			22: {p + "NET/Plugin: " + d, p + "NET/Plugin: Using internal network plugin."},
			28: {p + "NET/Plugin: libnccl-net.so: " + d, p + "NET/Plugin: Using internal net plugin."},
			0:  {d + " No plugin found (libnccl-net.so), using internal implementation"},
		} {
			if got := topCause(analyseText(prefixed(pre, lines))); got != id {
				t.Errorf("2.%d behind %q: first %q\n%q", release, pre, got, lines)
			}
		}
	}
}

// The default plugin simply absent, named with a path whose last directory
// reads like the start of a library name (lib/, li/, l/), is not a
// dependency of the plugin failing.
func TestNetPluginAbsentBehindLibDirectory(t *testing.T) {
	for _, dir := range []string{"/usr/lib/", "/opt/li/", "/l/", "/usr/lib/x86_64-linux-gnu/"} {
		line := ncclPrefix("node001", 0, 0) + " NCCL INFO NET/Plugin : dlerror=" + dir + "libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation"
		if a := analyseText(prefixed("", append(startup("node001", 0, 0, 0, "2.19.3"), line))); hasFlag(a, "error.net-plugin-load-failed") {
			t.Errorf("%s: raised (%s)", dir, flagIDs(a))
		}
	}
}
