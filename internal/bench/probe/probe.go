// Package probe is sparkrig's own TCP benchmark: a short-lived server and a
// client that measure multi-stream throughput and round-trip latency between
// two nodes with nothing installed on them but the sparkrig binary.
//
// Protocol: every connection opens with one byte naming its kind.
//
//	'T' timed data: the client sends the test's duration (8 bytes, ns,
//	    big-endian), then writes until the server answers with 24 bytes:
//	    bytes received within the duration from the first byte, and the
//	    first- and last-byte times (Unix ns, server clock), big-endian. The
//	    server answers as the duration ends, whatever is still queued
//	    behind it, and the client then resets the connection: a test takes
//	    its duration, not the duration plus the time to drain the send
//	    buffers (seconds on a slow link).
//	'D' data (older clients, and this client against an older server,
//	    which closes a 'T' stream unanswered): the client writes until its
//	    duration ends, then half-closes; the server answers the same 24
//	    bytes at EOF.
//	'P' ping: the client writes PingSize-byte messages, the server echoes
//	    each; the client times the round trips.
//	'Q' quit: the server stops accepting and exits once streams are done.
package probe

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Connection kinds.
const (
	kindData  = 'D'
	kindTimed = 'T'
	kindPing  = 'P'
	kindQuit  = 'Q'
)

// PingSize is the size of one latency message, like a small RPC.
const PingSize = 64

// bufSize is the read and write size of a data stream; iperf3's TCP default.
const bufSize = 128 << 10

// ServerConfig tunes Serve.
type ServerConfig struct {
	// Once makes the server return after a client says quit.
	Once bool
	// Idle ends the server when no connection arrives for this long (default 60 s).
	Idle time.Duration
}

// Serve answers probe clients on l until a quit (with Once), an idle
// timeout, or l is closed.
func Serve(l net.Listener, cfg ServerConfig) error {
	if cfg.Idle <= 0 {
		cfg.Idle = 60 * time.Second
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	quit := make(chan struct{})
	var quitOnce sync.Once
	for {
		if tl, ok := l.(*net.TCPListener); ok {
			tl.SetDeadline(time.Now().Add(cfg.Idle))
		}
		c, err := l.Accept()
		if err != nil {
			select {
			case <-quit:
				return nil
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return fmt.Errorf("no client within %s", cfg.Idle)
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if serveConn(c) == kindQuit && cfg.Once {
				quitOnce.Do(func() { close(quit); l.Close() })
			}
		}()
	}
}

// serveConn handles one connection and returns its kind.
func serveConn(c net.Conn) byte {
	defer c.Close()
	var k [1]byte
	if _, err := io.ReadFull(c, k[:]); err != nil {
		return 0
	}
	switch k[0] {
	case kindData:
		sink(c)
	case kindTimed:
		timedSink(c)
	case kindPing:
		echo(c)
	}
	return k[0]
}

// sink counts what arrives until EOF and reports it.
func sink(c net.Conn) {
	buf := make([]byte, bufSize)
	var n uint64
	var first, last time.Time
	for {
		m, err := c.Read(buf)
		if m > 0 {
			if n == 0 {
				first = time.Now()
			}
			n += uint64(m)
		}
		if err != nil {
			break
		}
	}
	last = time.Now()
	if n == 0 {
		first = last
	}
	var out [24]byte
	binary.BigEndian.PutUint64(out[0:], n)
	binary.BigEndian.PutUint64(out[8:], uint64(first.UnixNano()))
	binary.BigEndian.PutUint64(out[16:], uint64(last.UnixNano()))
	c.Write(out[:])
}

// timedSink counts what arrives within the client's duration from the
// first byte, reports it as that duration ends, and discards the rest until
// the client resets the connection.
func timedSink(c net.Conn) {
	var hdr [8]byte
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return
	}
	d := time.Duration(binary.BigEndian.Uint64(hdr[:]))
	if d <= 0 || d > maxDuration {
		return
	}
	buf := make([]byte, bufSize)
	var n uint64
	var first, last time.Time
	for {
		m, err := c.Read(buf)
		now := time.Now()
		if m > 0 {
			if n == 0 {
				first = now
				c.SetReadDeadline(first.Add(d))
			}
			n += uint64(m)
			last = now
		}
		if err != nil {
			break // the duration ended (a read deadline) or the client went away
		}
	}
	if n == 0 {
		return
	}
	var out [24]byte
	binary.BigEndian.PutUint64(out[0:], n)
	binary.BigEndian.PutUint64(out[8:], uint64(first.UnixNano()))
	binary.BigEndian.PutUint64(out[16:], uint64(last.UnixNano()))
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(out[:]); err != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	io.Copy(io.Discard, c)
}

// maxDuration bounds the duration a client may ask a timed stream for.
const maxDuration = time.Hour

func echo(c net.Conn) {
	buf := make([]byte, PingSize)
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		if _, err := c.Write(buf); err != nil {
			return
		}
	}
}

// ClientConfig is what a client measures.
type ClientConfig struct {
	Addr     string        // server host:port
	Bind     string        // local address to send from ("" for any)
	Streams  int           // parallel data streams (default 4)
	Duration time.Duration // data phase (default 10 s)
	Pings    int           // round trips timed (default 1000)
	// Quit tells the server to exit afterwards.
	Quit bool
}

// Result is one probe run, as the client prints it (JSON).
type Result struct {
	Tool       string    `json:"tool"` // "sparkrig-probe"
	Server     string    `json:"server"`
	Streams    int       `json:"streams"`
	DurationS  float64   `json:"duration_s"`
	Bytes      uint64    `json:"bytes"`
	Gbps       float64   `json:"throughput_gbps"`
	StreamGbps []float64 `json:"stream_gbps"`
	RTT        RTT       `json:"rtt_us"`
}

// RTT summarises the round trips in microseconds.
type RTT struct {
	Samples int     `json:"samples"`
	Min     float64 `json:"min"`
	Avg     float64 `json:"avg"`
	P50     float64 `json:"p50"`
	P99     float64 `json:"p99"`
	Max     float64 `json:"max"`
}

// Parse reads a client's JSON output.
func Parse(data []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("probe output: %w", err)
	}
	if r.Tool != "sparkrig-probe" {
		return r, fmt.Errorf("probe output: not a sparkrig-probe result")
	}
	return r, nil
}

// Run measures round trips, then throughput, against a probe server.
func Run(cfg ClientConfig) (Result, error) {
	if cfg.Streams <= 0 {
		cfg.Streams = 4
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.Pings <= 0 {
		cfg.Pings = 1000
	}
	res := Result{Tool: "sparkrig-probe", Server: cfg.Addr, Streams: cfg.Streams}
	d := dialer(cfg.Bind)
	rtt, err := pings(d, cfg.Addr, cfg.Pings)
	if err != nil {
		return res, err
	}
	res.RTT = rtt
	if err := throughput(d, cfg, &res); err != nil {
		return res, err
	}
	if cfg.Quit {
		if c, err := d.Dial("tcp", cfg.Addr); err == nil {
			c.Write([]byte{kindQuit})
			c.Close()
		}
	}
	return res, nil
}

func dialer(bind string) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if bind != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(bind)}
	}
	return d
}

func open(d *net.Dialer, addr string, kind byte) (net.Conn, error) {
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect to probe server %s: %w", addr, err)
	}
	if _, err := c.Write([]byte{kind}); err != nil {
		c.Close()
		return nil, fmt.Errorf("probe server %s: %w", addr, err)
	}
	return c, nil
}

func pings(d *net.Dialer, addr string, n int) (RTT, error) {
	c, err := open(d, addr, kindPing)
	if err != nil {
		return RTT{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	msg := make([]byte, PingSize)
	got := make([]byte, PingSize)
	samples := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		binary.BigEndian.PutUint64(msg, uint64(i))
		t0 := time.Now()
		if _, err := c.Write(msg); err != nil {
			return RTT{}, fmt.Errorf("ping %s: %w", addr, err)
		}
		if _, err := io.ReadFull(c, got); err != nil {
			return RTT{}, fmt.Errorf("ping %s: %w", addr, err)
		}
		samples = append(samples, float64(time.Since(t0).Nanoseconds())/1e3)
	}
	return summarise(samples), nil
}

func summarise(s []float64) RTT {
	if len(s) == 0 {
		return RTT{}
	}
	sort.Float64s(s)
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	pct := func(p float64) float64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return RTT{Samples: len(s), Min: s[0], Avg: sum / float64(len(s)), P50: pct(0.50), P99: pct(0.99), Max: s[len(s)-1]}
}

type streamReport struct {
	bytes       uint64
	first, last int64
	err         error
	refused     bool // closed unanswered: the server does not know the stream's kind
}

func throughput(d *net.Dialer, cfg ClientConfig, res *Result) error {
	reports, err := streams(d, cfg, kindTimed)
	if errors.Is(err, errNoTimedStreams) {
		// a sparkrig from before timed streams serves this node: measure
		// the way it knows, the queued data drained at the end
		reports, err = streams(d, cfg, kindData)
	}
	if err != nil {
		return err
	}
	var first, last int64
	for _, r := range reports {
		res.Bytes += r.bytes
		if first == 0 || r.first < first {
			first = r.first
		}
		last = max(last, r.last)
		res.StreamGbps = append(res.StreamGbps, gbps(r.bytes, r.last-r.first))
	}
	res.DurationS = float64(last-first) / 1e9
	res.Gbps = gbps(res.Bytes, last-first)
	return nil
}

// errNoTimedStreams is a server closing a timed stream unanswered within
// its duration: a sparkrig older than timed streams, which closes a
// connection of a kind it does not know.
var errNoTimedStreams = errors.New("the server closed a timed stream unanswered")

// streams runs cfg.Streams data streams of kind at once and returns their
// reports, or the first stream's error.
func streams(d *net.Dialer, cfg ClientConfig, kind byte) ([]streamReport, error) {
	conns := make([]net.Conn, cfg.Streams)
	for i := range conns {
		var c net.Conn
		var err error
		if kind == kindTimed {
			c, err = openTimed(d, cfg.Addr, cfg.Duration)
		} else {
			c, err = open(d, cfg.Addr, kind)
		}
		if err != nil {
			for _, o := range conns[:i] {
				o.Close()
			}
			return nil, err
		}
		conns[i] = c
	}
	reports := make([]streamReport, len(conns))
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if kind == kindTimed {
				// the server answers as the duration ends; the deadline
				// only bounds a server that never does
				reports[i] = send(c, start, start.Add(cfg.Duration+30*time.Second), cfg.Duration)
			} else {
				reports[i] = sendDrained(c, start.Add(cfg.Duration))
			}
		}()
	}
	wg.Wait()
	for i, r := range reports {
		if r.refused {
			return nil, errNoTimedStreams
		}
		if r.err != nil {
			return nil, fmt.Errorf("stream %d to %s: %w", i, cfg.Addr, r.err)
		}
	}
	return reports, nil
}

// openTimed opens a timed data stream of duration d.
func openTimed(dl *net.Dialer, addr string, d time.Duration) (net.Conn, error) {
	c, err := open(dl, addr, kindTimed)
	if err != nil {
		return nil, err
	}
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(d))
	if _, err := c.Write(hdr[:]); err != nil {
		c.Close()
		return nil, fmt.Errorf("probe server %s: %w", addr, err)
	}
	return c, nil
}

// send writes until the server reports its count (or the deadline passes),
// then resets the connection: what is still queued is dropped, not drained.
// A stream the server closes or resets unanswered before its duration d
// from start is refused: the server does not know timed streams.
func send(c net.Conn, start, deadline time.Time, d time.Duration) streamReport {
	buf := make([]byte, bufSize)
	for i := range buf {
		buf[i] = byte(i)
	}
	var out [24]byte
	type answer struct {
		n   int
		err error
	}
	got := make(chan answer, 1)
	go func() {
		c.SetReadDeadline(deadline)
		n, err := io.ReadFull(c, out[:])
		got <- answer{n, err}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.Close() // ends a write blocked on a full buffer
	}()
	c.SetWriteDeadline(deadline)
	var werr error
	for {
		if _, werr = c.Write(buf); werr != nil {
			break
		}
	}
	a := <-got
	if a.err != nil {
		if a.n == 0 && time.Since(start) < d && (errors.Is(a.err, io.EOF) || errors.Is(a.err, syscall.ECONNRESET)) {
			return streamReport{refused: true}
		}
		err := a.err
		if werr != nil && !errors.Is(werr, net.ErrClosed) {
			err = werr // the server went away: the write says why
		}
		return streamReport{err: fmt.Errorf("reading the server's count: %w", err)}
	}
	return report(out)
}

// sendDrained is a data stream of a server without timed streams: it
// writes until the deadline, half-closes, and reads the server's count
// once the server has read everything still queued.
func sendDrained(c net.Conn, deadline time.Time) streamReport {
	defer c.Close()
	buf := make([]byte, bufSize)
	for i := range buf {
		buf[i] = byte(i)
	}
	c.SetWriteDeadline(deadline)
	for {
		if _, err := c.Write(buf); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			return streamReport{err: err}
		}
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var out [24]byte
	if _, err := io.ReadFull(c, out[:]); err != nil {
		return streamReport{err: fmt.Errorf("reading the server's count: %w", err)}
	}
	return report(out)
}

// report reads a server's 24-byte count.
func report(out [24]byte) streamReport {
	return streamReport{bytes: binary.BigEndian.Uint64(out[0:]),
		first: int64(binary.BigEndian.Uint64(out[8:])), last: int64(binary.BigEndian.Uint64(out[16:]))}
}

func gbps(bytes uint64, ns int64) float64 {
	if ns <= 0 {
		return 0
	}
	return float64(bytes) * 8 / float64(ns)
}
