package allpairs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparkrig/sparkrig/internal/bench"
)

// readyLine is what bench's wrapper writes on stderr once its command's
// port listens (or when it cannot tell, without ss).
const readyLine = "sparkrig-bench-ready"

// Servers starts one probe server on every node for the whole run, on the
// node's address (all-pairs: one address serves every peer), so a round
// starts only its clients. They end when Stop closes their sessions'
// stdin (bench's wrapper then stops them) or, failing that, by the
// executor's cleanup of the pid files in its scratch directory.
func (p *Remote) Servers(ctx context.Context, runDir string) error {
	type srv struct {
		stdin *io.PipeWriter
		done  chan struct{}
	}
	ready := make(chan error, len(p.Hosts))
	for i, h := range p.Hosts {
		listen := fmt.Sprintf("%s:%d", p.Addr(i, -1), p.Port)
		c := bench.Cmd{Host: h, Role: bench.RoleServer, ListenPort: p.Port,
			Argv: []string{p.Probe, "bench", "probe-server", "--listen", listen, "--idle", "10m"}}
		pr, pw := io.Pipe()
		s := srv{stdin: pw, done: make(chan struct{})}
		w := &readyWriter{ready: ready}
		script := bench.Script(c, path.Join(runDir, "allpairs-server-"+strconv.Itoa(i)+".pid"))
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		go func() {
			defer close(s.done)
			err := p.X.T.Exec(sctx, h, script, pr, io.Discard, w)
			pr.Close()
			w.fail(fmt.Errorf("probe server on %s ended: %v %s", h, err, strings.TrimSpace(w.tail())))
		}()
		p.stop = append(p.stop, func() { pw.Close() }, func() { awaitServer(s.done, cancel) })
	}
	deadline := time.After(30 * time.Second)
	for range p.Hosts {
		select {
		case err := <-ready:
			if err != nil {
				return err
			}
		case <-deadline:
			return fmt.Errorf("probe servers did not listen within 30 s")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.persistent = true
	return nil
}

// Stop ends the servers Servers started: every session's stdin closed
// first, then all waited for at once, so they end together.
func (p *Remote) Stop() {
	for i := 0; i < len(p.stop); i += 2 {
		p.stop[i]()
	}
	var wg sync.WaitGroup
	for i := 1; i < len(p.stop); i += 2 {
		wg.Go(p.stop[i])
	}
	wg.Wait()
	p.stop, p.persistent = nil, false
}

// awaitServer waits for a server's session to end once its stdin is
// closed. A node that stopped answering (its power or network lost: no
// reset comes) would hold it until the kernel gives up on the connection,
// many minutes: its session is cancelled after bench.AbandonAfter and left
// to end on its own after as long again; the executor's keeper there
// stops the server if the node comes back.
func awaitServer(done <-chan struct{}, cancel context.CancelFunc) {
	defer cancel()
	select {
	case <-done:
		return
	case <-time.After(bench.AbandonAfter):
	}
	cancel()
	select {
	case <-done:
	case <-time.After(bench.AbandonAfter):
	}
}

// readyWriter reports once, on ready, whether the server listens.
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	once  sync.Once
	ready chan<- error
}

func (w *readyWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() < 64<<10 {
		w.buf.Write(b)
	}
	if bytes.Contains(w.buf.Bytes(), []byte(readyLine)) {
		w.once.Do(func() { w.ready <- nil })
	}
	return len(b), nil
}

func (w *readyWriter) fail(err error) { w.once.Do(func() { w.ready <- err }) }

func (w *readyWriter) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := strings.ReplaceAll(w.buf.String(), readyLine, "")
	if len(s) > 200 {
		s = s[len(s)-200:]
	}
	return s
}
