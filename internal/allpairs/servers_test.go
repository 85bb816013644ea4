package allpairs

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/bench"
)

// serverDies answers the start of every probe server as bench's wrapper
// does (the ready line, then the server runs until its stdin ends), but
// host "dead" stops answering once its server listens: its session never
// returns, whatever its context, as an SSH session on a node that lost
// its power or network does until the kernel gives up on the connection.
type serverDies struct{ release chan struct{} }

func (d serverDies) Exec(ctx context.Context, host, cmdline string, stdin io.Reader, stdout, stderr io.Writer) error {
	if !strings.Contains(cmdline, "probe-server") {
		return nil
	}
	io.WriteString(stderr, readyLine+"\n")
	if host == "dead" {
		<-d.release
		return ctx.Err()
	}
	io.Copy(io.Discard, stdin)
	return nil
}

func (serverDies) String() string { return "stand-in, one host dies" }

// Stop gives up on the server of a node that died during the run instead
// of waiting for its session for ever.
func TestStopGivesUpOnADeadNodesServer(t *testing.T) {
	d := serverDies{release: make(chan struct{})}
	defer close(d.release)
	m := &Remote{X: &bench.Executor{T: d}, Hosts: []string{"live", "dead"}, Port: 18615, Probe: "/opt/sparkrig",
		Addr: func(node, peer int) string { return "10.0.0." + string(rune('1'+node)) }}
	if err := m.Servers(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { m.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(90 * time.Second):
		t.Fatal("Stop still waiting after 90 s on a node that stopped answering")
	}
}
