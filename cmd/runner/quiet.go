package main

import "io"

// QuietFlag is --quiet for the commands that print progress on stderr.
type QuietFlag struct {
	Quiet bool `help:"Print no progress on stderr; warnings and errors still show."`
}

// progress is w, or io.Discard with --quiet.
func (q QuietFlag) progress(w io.Writer) io.Writer {
	if q.Quiet {
		return io.Discard
	}
	return w
}
