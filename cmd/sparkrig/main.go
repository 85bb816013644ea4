// Command sparkrig audits, benchmarks and configures multi-node NVIDIA GPU clusters.
package main

import (
	"os"

	"github.com/sparkrig/sparkrig/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
