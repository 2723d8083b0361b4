// Command hello prints a greeting for its first argument.
package main

import (
	"fmt"
	"os"

	"example.com/hello"
)

func main() {
	name := ""
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	fmt.Println(hello.Greeting(name))
}
