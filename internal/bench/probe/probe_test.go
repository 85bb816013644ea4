package probe

import (
	"io"
	"math"
	"net"
	"testing"
	"time"
)

func TestProbeLoopback(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(l, ServerConfig{Once: true, Idle: 10 * time.Second}) }()
	res, err := Run(ClientConfig{Addr: l.Addr().String(), Bind: "127.0.0.1", Streams: 3, Duration: 300 * time.Millisecond, Pings: 200, Quit: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Streams != 3 || len(res.StreamGbps) != 3 || res.Bytes == 0 || res.Gbps <= 0 {
		t.Errorf("throughput result %+v", res)
	}
	if want := float64(res.Bytes) * 8 / (res.DurationS * 1e9); math.Abs(res.Gbps-want) > want*1e-6 {
		t.Errorf("%.6f Gb/s from %d bytes in %.6f s, want %.6f", res.Gbps, res.Bytes, res.DurationS, want)
	}
	if res.DurationS < 0.25 || res.DurationS > 5 {
		t.Errorf("duration %.3f s, want about 0.3 s", res.DurationS)
	}
	if r := res.RTT; r.Samples != 200 || !(r.Min > 0 && r.Min <= r.P50 && r.P50 <= r.P99 && r.P99 <= r.Max) {
		t.Errorf("rtt %+v", r)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("server: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("server still running after quit")
	}
}

func TestServeIdleTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := Serve(l, ServerConfig{Idle: 50 * time.Millisecond}); err == nil {
		t.Fatal("idle server returned no error")
	}
}

func TestParseRejectsOtherJSON(t *testing.T) {
	if _, err := Parse([]byte(`{"start":{}}`)); err == nil {
		t.Error("iperf3-like JSON accepted as a probe result")
	}
	if _, err := Parse([]byte(`{"tool":"sparkrig-probe","streams":2,"throughput_gbps":9.5}`)); err != nil {
		t.Error(err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"tool":"sparkrig-probe","server":"10.0.0.1:18615","streams":4,"duration_s":10.0,"bytes":12,"throughput_gbps":9.5,"stream_gbps":[2.4],"rtt_us":{"samples":1000,"min":11.2}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err == nil && r.Tool != "sparkrig-probe" {
			t.Fatalf("accepted %q", data)
		}
	})
}

func TestSummarise(t *testing.T) {
	got := summarise([]float64{5, 1, 3, 2, 4})
	if want := (RTT{Samples: 5, Min: 1, Avg: 3, P50: 3, P99: 5, Max: 5}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := summarise(nil); got != (RTT{}) {
		t.Errorf("no samples: %+v", got)
	}
}

// slowListener hands out connections whose reads take at most 8 KiB every
// 8 ms (about 1 MB/s): a link much slower than the sender, which fills
// the kernel's buffers between them.
type slowListener struct{ net.Listener }

func (l slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	return slowConn{c}, err
}

type slowConn struct{ net.Conn }

func (c slowConn) Read(b []byte) (int, error) {
	time.Sleep(8 * time.Millisecond)
	return c.Conn.Read(b[:min(len(b), 8<<10)])
}

// A timed stream is judged on what arrived within its duration and ends
// as the duration does: what the sender still has queued (seconds of it
// at this rate) is dropped, not drained.
func TestTimedStreamEndsWithItsDuration(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go Serve(slowListener{l}, ServerConfig{Idle: 30 * time.Second})
	defer l.Close()
	const d = time.Second
	start := time.Now()
	res, err := Run(ClientConfig{Addr: l.Addr().String(), Streams: 2, Duration: d, Pings: 1})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// Each stream counts for d from its own first byte; the two start
	// within moments of each other, so the window they span together is d
	// and that skew, far below the seconds a drained queue would add.
	const skew = 500 * time.Millisecond
	if res.DurationS <= 0.5 || res.DurationS > (d+skew).Seconds() {
		t.Errorf("window %.3f s, want at most %s from the first byte (and %s of skew between the streams' starts)", res.DurationS, d, skew)
	}
	// at 1 MB/s a stream's queue of a few MB would take seconds to drain
	if took > d+10*time.Second {
		t.Errorf("took %s for a %s test", took, d)
	}
	t.Logf("%d bytes, %.3f Gb/s in %.3f s; the run took %s", res.Bytes, res.Gbps, res.DurationS, took)
}

// servePreTimed stands in for the probe server of a sparkrig released
// before timed streams (its serveConn as of commit bbae6de): it knows data
// ('D'), ping and quit, and closes a connection of any other kind at once.
// It is what a client meets where --probe-path names an older sparkrig on
// one node.
func servePreTimed(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			var k [1]byte
			if _, err := io.ReadFull(c, k[:]); err != nil {
				return
			}
			switch k[0] {
			case kindData:
				sink(c)
			case kindPing:
				echo(c)
			}
		}()
	}
}

// A server from before timed streams closes a timed stream unanswered: the
// client measures the way that server knows (its streams drained at the
// end) instead of failing with a reset that would name the node bad.
func TestClientMeasuresAgainstAServerWithoutTimedStreams(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go servePreTimed(l)
	res, err := Run(ClientConfig{Addr: l.Addr().String(), Streams: 2, Duration: time.Second, Pings: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes == 0 || res.Gbps <= 0 || len(res.StreamGbps) != 2 || res.DurationS < 0.5 {
		t.Errorf("result %+v", res)
	}
}
