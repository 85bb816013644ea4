package report

import "testing"

func TestHumanBytes(t *testing.T) {
	for in, want := range map[int64]string{
		1 << 20: "1M", 8 << 30: "8G", 512: "512B", 146052224 << 10: "139.3G", 3 << 19: "1.5M",
	} {
		if got := HumanBytes(in); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestSMArch(t *testing.T) {
	for in, want := range map[string]string{"12.1": "sm_121", "9.0": "sm_90", "10.0": "sm_100"} {
		if got := SMArch(in); got != want {
			t.Errorf("SMArch(%q) = %q, want %q", in, got, want)
		}
	}
}
