package runner

import (
	"context"

	"github.com/seed43ef5acb/runner/runner/event"
)

// emitPatch records the work tree after a step whose tools changed files
// and emits a patch event with the step set (changes since the base tree).
func (s *Session) emitPatch(ctx context.Context, t *turn) {
	if s.cfg.Snapshotter == nil {
		return
	}
	var touched []string
	all := false
	for _, tp := range t.msg.toolParts() {
		touched = append(touched, tp.touched...)
		all = all || tp.touchedAll
	}
	if len(touched) == 0 && !all {
		return
	}
	snap, err := s.cfg.Snapshotter.Track(ctx, touched, all)
	if err != nil {
		s.cfg.Logger.Warn("step snapshot failed", "step", t.step, "err", err)
		return
	}
	p := event.Patch{Step: &t.step, Tree: snap.Tree, Files: snap.Files, Tracking: snap.Tracking}
	for _, f := range snap.Files {
		p.Additions += f.Additions
		p.Deletions += f.Deletions
	}
	t.msg.Parts = append(t.msg.Parts, &Part{Kind: PartPatch, Step: t.step, Diff: &p})
	s.emit(p)
}
