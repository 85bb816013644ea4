package bench

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/runner"
)

// A command that floods its output (a node's NCCL_DEBUG=TRACE, a binary
// looping on an error) is kept in bounded memory: the start and the end of
// what it wrote, which hold the tool's banner and its result table.
func TestStepOutputIsBounded(t *testing.T) {
	x := &Executor{T: runner.Local{}, RunDir: t.TempDir(), Grace: time.Second}
	const flood = 3 * MaxCmdOutput
	script := "echo first; head -c " + itoa(flood) + " /dev/zero | tr '\\0' x; echo; echo last"
	res := x.Run(context.Background(), Step{ID: "flood", Timeout: 60 * time.Second, Clients: []Cmd{
		{Host: "localhost", Role: RoleClient, Argv: []string{"sh", "-c", script + "; (" + script + ") >&2"}}}})
	if res.Status != StatusOK || len(res.Commands) != 1 {
		t.Fatalf("step %s %q", res.Status, res.Error)
	}
	for name, out := range map[string]string{"stdout": res.Commands[0].Stdout, "stderr": res.Commands[0].Stderr} {
		if len(out) > MaxCmdOutput+200 {
			t.Errorf("%s: %d bytes kept, more than %d", name, len(out), MaxCmdOutput)
		}
		if !strings.HasPrefix(out, "first\n") || !strings.HasSuffix(out, "\nlast\n") || !strings.Contains(out, "bytes of output left out") {
			t.Errorf("%s: %.40q … %q", name, out, out[max(len(out)-40, 0):])
		}
	}
}

// A short command that floods its output is stopped with an error.
func TestRunOutputIsBounded(t *testing.T) {
	out, err := run(context.Background(), runner.Local{}, "localhost", "head -c "+itoa(2*runner.MaxRunOutput)+" /dev/zero")
	if !errors.Is(err, runner.ErrTooMuchOutput) || len(out) > runner.MaxRunOutput {
		t.Errorf("%d bytes kept, error %v", len(out), err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// However the writes are cut, the buffer keeps exactly the first and the
// last MaxCmdOutput/2 bytes and says how many it left out.
func TestSyncBufferKeepsHeadAndTail(t *testing.T) {
	data := make([]byte, 2*MaxCmdOutput+12345)
	for i := range data {
		data[i] = byte(i % 251)
	}
	for _, chunk := range []int{1 << 10, 100_003, MaxCmdOutput/2 + 7, 3 * MaxCmdOutput} {
		var b syncBuffer
		for p := data; len(p) > 0; {
			k := min(chunk, len(p))
			b.Write(p[:k])
			p = p[k:]
		}
		half := MaxCmdOutput / 2
		want := string(data[:half]) + "\n[sparkrig: " + strconv.Itoa(len(data)-MaxCmdOutput) + " bytes of output left out]\n" + string(data[len(data)-half:])
		if got := b.String(); got != want {
			t.Errorf("chunks of %d: %d bytes kept, want %d", chunk, len(got), len(want))
		}
	}
	var b syncBuffer
	b.Write([]byte("short\n"))
	if got := b.String(); got != "short\n" {
		t.Errorf("short output %q", got)
	}
}
