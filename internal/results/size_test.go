package results

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"1M": 1 << 20, "8G": 8 << 30, "256K": 256 << 10, "1048576": 1 << 20, "2GiB": 2 << 30, "64m": 64 << 20, "0": 0, "1T": 1 << 40,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "M", "1.5G", "-1M", "1X", "99999999999T"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1M", "8G", "64M", "1048576", "2GiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseSize(s); err == nil && v < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, v)
		}
	})
}
