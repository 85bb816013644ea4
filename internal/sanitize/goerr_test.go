package sanitize

import "testing"

// TestPlain: Go's and cobra's words become a user's, and what each error
// says (the path, the host, the reason) is kept, once.
func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		"nosuch.tar.gz: stat nosuch.tar.gz: no such file or directory":                           "nosuch.tar.gz: no such file or directory",
		"unreachable: dial tcp 127.0.0.1:1: connect: connection refused":                         "unreachable: connection refused",
		"dial tcp: lookup spark-99.invalid on 127.0.0.53:53: no such host":                       "no such host spark-99.invalid (name lookup failed)",
		"requires at least 1 arg(s), only received 0":                                            "needs at least 1 argument, got 0",
		`--subnets: netip.ParsePrefix("10.0.0/33"): ParseAddr("10.0.0"): IPv4 address too short`: `--subnets: "10.0.0/33": ParseAddr("10.0.0"): IPv4 address too short`,
		`fork/exec /usr/bin/ib_write_bw: ; permission denied`:                                    "cannot run /usr/bin/ib_write_bw: permission denied",
		"write r.html: no such file or directory":                                                "write r.html: no such file or directory",
	} {
		if got := Plain(in); got != want {
			t.Errorf("Plain(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
