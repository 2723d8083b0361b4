// Package victim is the repository a malicious test lives in.
package victim

// Add is what the honest test checks.
func Add(a, b int) int { return a + b }
