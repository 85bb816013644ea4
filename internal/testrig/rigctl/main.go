// Command rigctl starts and stops a test rig by hand (see testrig/rig.sh).
//
//	rigctl up [-n 2] [-layout pair|ring|none]   prints the rig directory
//	rigctl down DIR
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/sparkrig/sparkrig/internal/testrig"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rigctl up [-n N] [-layout pair|ring|none] | rigctl down DIR")
		os.Exit(3)
	}
	switch os.Args[1] {
	case "up":
		fs := flag.NewFlagSet("up", flag.ExitOnError)
		n := fs.Int("n", 2, "number of hosts")
		layout := fs.String("layout", "pair", "pair, ring or none")
		fs.Parse(os.Args[2:])
		if reason := testrig.Unsupported(); reason != "" {
			fail(reason)
		}
		cfg, err := testrig.Sparks(*n, *layout)
		if err != nil {
			fail(err.Error())
		}
		os.Setenv(testrig.KeepEnv, "1")
		r, err := testrig.Start(cfg)
		if err != nil {
			fail(err.Error())
		}
		fmt.Printf("rig %s with %d hosts in %s\n", r.ID, len(r.Hosts), r.Dir)
		for _, h := range r.Hosts {
			fmt.Printf("  %-10s %s  (ip netns exec %s ...)\n", h.Name, h.Addr, h.NS)
		}
		fmt.Printf("try:  ssh -F %s %s uname -a\nstop: testrig/rig.sh down %s\n", r.SSHConfig, r.Hosts[0].Name, r.Dir)
	case "down":
		if len(os.Args) != 3 {
			fail("usage: rigctl down DIR")
		}
		if err := testrig.Destroy(os.Args[2]); err != nil {
			fail(err.Error())
		}
	default:
		fail("unknown subcommand " + os.Args[1])
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "rigctl: "+msg)
	os.Exit(3)
}
