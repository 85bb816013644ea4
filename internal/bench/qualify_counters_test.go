package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseCounters reads counterScript's grep output: a netdev statistic
// as recorded on this machine's loopback, RDMA port counters in the sysfs
// layout, and lines that are neither.
func TestParseCounters(t *testing.T) {
	out := "lo/statistics/rx_bytes:11007434917\n" +
		"rocep1s0f1/ports/1/counters/symbol_error:12\n" +
		"rocep1s0f1/ports/1/hw_counters/out_of_buffer:0\n" +
		"lo/statistics/rx_bytes_weird:not-a-number\n" +
		"stray line\n" +
		"a/b:7\n"
	want := map[string]Counter{
		"lo rx_bytes":                {Host: "h", Dev: "lo", Name: "rx_bytes", After: 11007434917},
		"rocep1s0f1/1 symbol_error":  {Host: "h", Dev: "rocep1s0f1/1", Name: "symbol_error", After: 12},
		"rocep1s0f1/1 out_of_buffer": {Host: "h", Dev: "rocep1s0f1/1", Name: "out_of_buffer"},
	}
	if d := cmp.Diff(want, parseCounters("h", []byte(out))); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
