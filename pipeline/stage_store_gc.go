package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// storeGC marks this run's store used and, when it is one of the user's
// cache (not a --isolate or batch store of its own), collects the old
// ones beside it. It never fails the run.
func (r *execRun) storeGC(ctx context.Context) error {
	if r.store == nil || r.isolated || r.opts.SnapshotDir != "" {
		return skip("the store is the run's own")
	}
	now := time.Now()
	_ = os.Chtimes(filepath.Join(r.store.Dir(), "lock"), now, now)
	removed, err := snapshot.CollectStores(ctx, filepath.Dir(r.store.Dir()), now, snapshot.DefaultStorePolicy())
	if err != nil {
		r.log.Warn("collect snapshot stores", "error", err)
	}
	if len(removed) > 0 {
		r.log.Info("removed old snapshot stores", "dirs", removed)
	}
	return nil
}
