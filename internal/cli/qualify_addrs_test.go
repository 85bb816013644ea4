package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/runner"
)

// floodingNode answers every command with endless output until stopped,
// as a broken or hostile node may.
type floodingNode struct{}

func (floodingNode) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	line := []byte(strings.Repeat("eth0 UP 10.0.0.1/24 ", 50) + "\n")
	for written := 0; written < 256<<20; written += len(line) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if _, err := stdout.Write(line); err != nil {
			return err
		}
	}
	return nil
}

func (floodingNode) String() string { return "flooding" }

// A node whose address listing never ends is refused with an error once
// its output passes the bound, instead of being held whole.
func TestNodeAddrsBoundsWhatANodeSends(t *testing.T) {
	_, err := nodeAddrs(context.Background(), floodingNode{}, []string{"node-1"}, 60*time.Second)
	if !errors.Is(err, runner.ErrTooMuchOutput) || !strings.Contains(err.Error(), "node-1") {
		t.Fatalf("error %v, want one naming node-1 and its output past the bound", err)
	}
}
