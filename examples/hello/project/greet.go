// Package hello greets people.
package hello

import "strings"

// Greeting returns a greeting for name, or for the world when name is
// empty or blank.
func Greeting(name string) string {
	name = strings.TrimSpace(name)
	if name != "" {
		name = "world"
	}
	return "Hello, " + name + "!"
}
