// Command runner is the headless runner for AI coding agents.
package main

import (
	"fmt"
	"os"
)

func main() { os.Exit(run()) }

func run() int {
	fmt.Fprintln(os.Stderr, "runner: under construction")
	return 2
}
