package gpu

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// The bindings rest on purego loading libraries from a CGO_ENABLED=0 binary
// and on calls with more arguments than registers (cublasGemmEx takes 19).
// libc stands in for the CUDA libraries here: every Linux CI machine has it.
func TestLoadWithoutCgoStandinLibc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	var getpid func() int32
	var snprintf func(buf *byte, n uint64, format string,
		a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16 int32) int32
	if _, err := open("libc.so.6", []binding{{"getpid", &getpid}, {"snprintf", &snprintf}}); err != nil {
		t.Fatal(err)
	}
	if got := getpid(); int(got) != os.Getpid() {
		t.Fatalf("getpid through purego = %d, want %d", got, os.Getpid())
	}
	var buf [128]byte
	n := snprintf(&buf[0], uint64(len(buf)), "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d",
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, -1, 15, 16)
	want := "1 2 3 4 5 6 7 8 9 10 11 12 13 -1 15 16"
	if got := cString(buf[:]); got != want || int(n) != len(want) {
		t.Fatalf("19-argument call: %q (%d), want %q", got, n, want)
	}
	_, err := open("libc.so.6", []binding{{"no_such_symbol_sparkrig", &getpid}})
	if err == nil || !strings.HasPrefix(err.Error(), "load libc.so.6: symbol no_such_symbol_sparkrig: ") {
		t.Fatalf("missing symbol: %v", err)
	}
}
