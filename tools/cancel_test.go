package tools

import (
	"context"
	"os"
	"testing"
	"time"
)

// contextWithCancelAfterFile returns a context cancelled as soon as file
// exists (the command under test has started its children).
func contextWithCancelAfterFile(t *testing.T, file string) (context.Context, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for ctx.Err() == nil {
			if fi, err := os.Stat(file); err == nil && fi.Size() > 0 {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return ctx, cancel
}
