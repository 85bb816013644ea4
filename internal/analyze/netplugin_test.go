package analyze

import (
	"fmt"
	"math/rand"
	"testing"
)

// netPluginLines are the INFO lines NCCL prints when it looks for its net
// plugin, per release: name is NCCL_NET_PLUGIN ("" when unset).
//   - 2.18 (src/net.cc): "Plugin name set by env to %s" (libnccl-net-<name>.so),
//     "NET/Plugin : Plugin load (%s) returned %d : %s", "NET/Plugin : No plugin
//     found, using internal implementation";
//   - 2.19 to 2.21: "NET/Plugin : dlerror=%s No plugin found (%s), using
//     internal implementation" with libnccl-net-<name>.so or libnccl-net.so;
//   - 2.22 to 2.29 (src/net.cc, then src/plugin/plugin_open.cc): the name as
//     given, then libnccl-net-<name>.so, each not found listed in
//     "NET/Plugin: Could not find:%s. Using internal net plugin.";
//   - 2.30: the same list without the fallback sentence, the second name only
//     for a bare name.
func netPluginLines(r *rand.Rand, release int, name string) []string {
	lib := "libnccl-net.so"
	if name != "" {
		lib = "libnccl-net-" + name + ".so"
	}
	dl := lib + ": cannot open shared object file: No such file or directory"
	switch release {
	case 18:
		if name == "" {
			return []string{"NET/Plugin : Plugin load (libnccl-net.so) returned 2 : " + dl, "NET/Plugin : No plugin found, using internal implementation"}
		}
		return []string{"Plugin name set by env to " + lib, fmt.Sprintf("NET/Plugin : Plugin load (%s) returned %d : %s", lib, 2, dl), "NET/Plugin : No plugin found, using internal implementation"}
	case 19:
		return []string{fmt.Sprintf("NET/Plugin : dlerror=%s No plugin found (%s), using internal implementation", dl, lib)}
	}
	list := " libnccl-net.so"
	if name != "" {
		list = " " + name + " " + lib
		if release >= 30 && (name[0] == '/' || r.Intn(2) == 0 && len(name) > 3 && name[:3] == "lib") {
			list = " " + name
		}
	}
	if release >= 30 {
		return []string{"NET/Plugin: Could not find:" + list}
	}
	return []string{"NET/Plugin: Could not find:" + list + ". Using internal net plugin."}
}

// A plugin NCCL_NET_PLUGIN names and NCCL cannot find is named, in every
// release's words, behind any prefix and in a job of any size; the default
// name not found (no plugin installed, NCCL's own transport in use) is not.
func TestNetPluginNamedNotFound(t *testing.T) {
	r := rand.New(rand.NewSource(1850))
	const id = "error.net-plugin-load-failed"
	names := []string{"ofi", "aws-ofi", "gIB", "/opt/amazon/ofi-nccl/lib/libnccl-net.so", "libnccl-net-ofi.so", "libfoo.so"}
	for _, release := range []int{18, 19, 22, 26, 30} {
		for _, pre := range causePrefixes(r) {
			name := names[r.Intn(len(names))]
			if release < 22 && (name[0] == '/' || name[:3] == "lib") {
				name = "ofi" // before 2.22 the name always became libnccl-net-<name>.so
			}
			rank := r.Intn(16)
			p := ncclPrefix(fmt.Sprintf("node%03d", rank%4), rank, rank/4) + " NCCL INFO "
			var lines []string
			for _, l := range netPluginLines(r, release, name) {
				lines = append(lines, p+l)
			}
			a := analyseText(prefixed(pre, lines))
			if got := topCause(a); got != id {
				t.Errorf("2.%d, NCCL_NET_PLUGIN=%s behind %q: first %q (%s)\n%q", release, name, pre, got, flagIDs(a), lines)
			}
			lines = lines[:0]
			for _, l := range netPluginLines(r, release, "") {
				lines = append(lines, p+l)
			}
			if a := analyseText(prefixed(pre, append(startup("node001", 0, 0, 0, fmt.Sprintf("2.%d.3", release)), lines...))); hasFlag(a, id) || alarm(a) {
				t.Errorf("2.%d, unset, behind %q: %s raised (%s)\n%q", release, pre, id, flagIDs(a), lines)
			}
		}
	}
}

// In a job of any rank and host count where any share of the ranks cannot
// find the plugin named, it ranks first.
func TestNetPluginNamedNotFoundAnyRanks(t *testing.T) {
	firstAnyRanksAnyPrefix(t, rand.New(rand.NewSource(1851)), []docSignatureCase{{"error.net-plugin-load-failed", func(r *rand.Rand, host string, rank, dev int) []string {
		release := []int{18, 19, 22, 26, 30}[r.Intn(5)]
		var out []string
		for _, l := range netPluginLines(r, release, []string{"ofi", "aws-ofi", "gIB"}[r.Intn(3)]) {
			out = append(out, ncclPrefix(host, rank, dev)+" NCCL INFO "+l)
		}
		return out
	}}}, 3)
}
