package results

import "testing"

// A net plugin's message without NCCL's opening is read where it starts
// the line (after blanks) with the plugin's own prefix; text that only
// mentions it is not.
func TestBareNetNote(t *testing.T) {
	cases := map[string]int{
		"NET/OFI Selected provider is tcp, fabric is 172.31.32.0/20 (found 1 nics)": 0,
		"  NET/OFI No eligible providers were found":                                2,
		"\tNET/Plugin : No plugin found, using internal implementation":             1,
		"NET/Plugin: Loaded net plugin AWS Libfabric (v6)":                          0,
		"the NET/OFI plugin selected tcp":                                           -1,
		"NET/OFIX something":                                                        -1,
		"NET/Plugins are optional":                                                  -1,
		"NET/IB : No device found.":                                                 -1,
		"":                                                                          -1,
	}
	for line, want := range cases {
		if got := BareNetNote([]byte(line)); got != want {
			t.Errorf("BareNetNote(%q) = %d, want %d", line, got, want)
		}
	}
}
