package results

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Iperf3Result is what sparkrig reads from `iperf3 -J`, client or server side.
type Iperf3Result struct {
	Version  string `json:"version,omitempty"`
	Role     string `json:"role"`     // "client" or "server"
	Protocol string `json:"protocol"` // "TCP" or "UDP"
	Streams  int    `json:"streams"`
	Reverse  bool   `json:"reverse,omitempty"`
	Remote   string `json:"remote,omitempty"`
	// DurationS is the requested test length; OmitS the omitted warm-up seconds.
	DurationS float64 `json:"duration_s,omitempty"`
	OmitS     float64 `json:"omit_s,omitempty"`
	// Intervals and OmittedIntervals count the per-second reports.
	Intervals        int `json:"intervals"`
	OmittedIntervals int `json:"omitted_intervals"`
	// SentGbps and ReceivedGbps come from end.sum_sent and end.sum_received
	// (for UDP, end.sum); the received rate is what crossed the wire.
	SentGbps     float64  `json:"sent_gbps"`
	ReceivedGbps float64  `json:"received_gbps"`
	Retransmits  *int64   `json:"retransmits,omitempty"`
	JitterMS     *float64 `json:"jitter_ms,omitempty"`
	LostPercent  *float64 `json:"lost_percent,omitempty"`
	// MinIntervalGbps and MaxIntervalGbps span the non-omitted intervals.
	MinIntervalGbps float64 `json:"min_interval_gbps"`
	MaxIntervalGbps float64 `json:"max_interval_gbps"`
	CongestionCtl   string  `json:"congestion,omitempty"`
	Error           string  `json:"error,omitempty"`
}

type iperfSum struct {
	BitsPerSecond float64  `json:"bits_per_second"`
	Retransmits   *int64   `json:"retransmits"`
	Omitted       bool     `json:"omitted"`
	JitterMS      *float64 `json:"jitter_ms"`
	LostPercent   *float64 `json:"lost_percent"`
}

type iperfDoc struct {
	Start struct {
		Version    string                 `json:"version"`
		Connecting *struct{ Host string } `json:"connecting_to"`
		Accepted   *struct{ Host string } `json:"accepted_connection"`
		TestStart  struct {
			Protocol   string  `json:"protocol"`
			NumStreams int     `json:"num_streams"`
			Omit       float64 `json:"omit"`
			Duration   float64 `json:"duration"`
			Reverse    int     `json:"reverse"`
		} `json:"test_start"`
	} `json:"start"`
	Intervals []struct {
		Sum iperfSum `json:"sum"`
	} `json:"intervals"`
	End struct {
		SumSent     *iperfSum         `json:"sum_sent"`
		SumReceived *iperfSum         `json:"sum_received"`
		Sum         *iperfSum         `json:"sum"`
		Streams     []json.RawMessage `json:"streams"`
		SenderCC    string            `json:"sender_tcp_congestion"`
	} `json:"end"`
	Error string `json:"error"`
}

// ErrNotIperf3 is returned for JSON that is not iperf3 output.
var ErrNotIperf3 = errors.New("not iperf3 -J output (no start.test_start)")

// ParseIperf3 reads one `iperf3 -J` document.
func ParseIperf3(data []byte) (Iperf3Result, error) {
	var d iperfDoc
	if err := json.Unmarshal(data, &d); err != nil {
		return Iperf3Result{}, fmt.Errorf("iperf3 JSON: %w", err)
	}
	ts := d.Start.TestStart
	if ts.Protocol == "" && d.Error == "" {
		return Iperf3Result{}, ErrNotIperf3
	}
	r := Iperf3Result{
		Version: d.Start.Version, Protocol: ts.Protocol, Streams: ts.NumStreams,
		Reverse: ts.Reverse != 0, DurationS: ts.Duration, OmitS: ts.Omit,
		CongestionCtl: d.End.SenderCC, Error: d.Error, Role: "client",
	}
	if d.Start.Connecting != nil {
		r.Remote = d.Start.Connecting.Host
	} else if d.Start.Accepted != nil {
		r.Role, r.Remote = "server", d.Start.Accepted.Host
	}
	first := true
	for _, iv := range d.Intervals {
		if iv.Sum.Omitted {
			r.OmittedIntervals++
			continue
		}
		r.Intervals++
		g := iv.Sum.BitsPerSecond / 1e9
		if first || g < r.MinIntervalGbps {
			r.MinIntervalGbps = g
		}
		if g > r.MaxIntervalGbps {
			r.MaxIntervalGbps = g
		}
		first = false
	}
	if s := d.End.SumSent; s != nil {
		r.SentGbps, r.Retransmits = s.BitsPerSecond/1e9, s.Retransmits
	}
	if s := d.End.SumReceived; s != nil {
		r.ReceivedGbps = s.BitsPerSecond / 1e9
	}
	if s := d.End.Sum; s != nil && d.End.SumSent == nil {
		// UDP: one sum with jitter and loss; what arrived is the sent rate less the loss
		r.SentGbps, r.JitterMS, r.LostPercent = s.BitsPerSecond/1e9, s.JitterMS, s.LostPercent
		r.ReceivedGbps = r.SentGbps
		if s.LostPercent != nil {
			r.ReceivedGbps = r.SentGbps * (1 - *s.LostPercent/100)
		}
	}
	if r.Streams == 0 {
		r.Streams = len(d.End.Streams)
	}
	return r, nil
}
