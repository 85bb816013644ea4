package facts

import "testing"

// pingSample is the ping output a fixture under testdata/ping holds.
func pingSample(t testing.TB, name string) []byte {
	return []byte(verbatim(t, "ping/"+name)[0])
}

func TestParsePing(t *testing.T) {
	for _, tt := range []struct {
		file string
		want PingStats
	}{
		{"01_iputils_df-9000_both-ends-9000_ok.txt", PingStats{Sent: 3, Received: 3, AvgRTTms: 0.047}},
		{"02_iputils_df-9000_far-end-1500_100pct-loss.txt", PingStats{Sent: 3}},
		{"03_iputils_df-9000_local-mtu-1500_message-too-long.txt", PingStats{Sent: 1}},
		{"04_iputils_no-such-peer_100pct-loss.txt", PingStats{Sent: 3}},
	} {
		got, ok := ParsePing(pingSample(t, tt.file))
		if !ok || got != tt.want {
			t.Errorf("%s: %+v %v", tt.file, got, ok)
		}
	}
	if _, ok := ParsePing([]byte("ping: invalid argument: '-M'\n")); ok {
		t.Error("parsed an option error")
	}
}

func FuzzParsePing(f *testing.F) {
	for _, n := range []string{"01_iputils_df-9000_both-ends-9000_ok.txt", "02_iputils_df-9000_far-end-1500_100pct-loss.txt", "03_iputils_df-9000_local-mtu-1500_message-too-long.txt"} {
		f.Add(pingSample(f, n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, ok := ParsePing(b); ok && (s.Sent < 0 || s.Received < 0) {
			t.Errorf("negative counts %+v", s)
		}
		ParsePingScript([]PingTarget{{}}, b)
	})
}
