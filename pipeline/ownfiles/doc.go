// Package ownfiles guards the runner's own files where a command can
// reach them, puts back what a command changed and names it for the
// runner_state gate (pipeline/gate). It holds three guards:
//   - Modes: the modes of the runner's directories (modes.go);
//   - State: earlier runs' records under .runner (state.go);
//   - this run's out dir, mirrored by internal/mirror (outdir.go).
//
// The pipeline decides where each is armed: which sandbox layers leave
// the files within a command's reach.
//
// Imports: internal/safefs (reads and writes that never follow a
// symlink) and internal/mirror (the out dir's copy).
package ownfiles
