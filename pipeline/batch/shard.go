package batch

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is a 0-based slice Index of Count of a manifest. The zero value
// (Count 0) means "no sharding": everything.
type Shard struct {
	Index, Count int
}

// ParseShard parses "I/N" with 0 ≤ I < N. An empty string is no sharding.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%w: %q: expected I/N, e.g. 0/4", ErrBadShard, s)
	}
	sh := Shard{Index: i, Count: n}
	return sh, sh.Validate()
}

// Validate checks 0 ≤ Index < Count, or the zero value.
func (s Shard) Validate() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("%w: %d/%d: need 0 ≤ I < N", ErrBadShard, s.Index, s.Count)
	}
	return nil
}

// String formats the shard as "I/N" ("" for no sharding).
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// ShardIndices returns the manifest positions of shard s among total
// repositories: Index, Index+Count, Index+2·Count, … (round robin, so
// shards stay balanced when neighbouring repositories are alike). Every
// position belongs to exactly one shard.
func ShardIndices(total int, s Shard) []int {
	if s.Count <= 1 {
		s = Shard{Index: 0, Count: 1}
	}
	out := make([]int, 0, total/s.Count+1)
	for i := s.Index; i < total; i += s.Count {
		out = append(out, i)
	}
	return out
}

// ResolveShard decides the shard from the command line and environment:
// flag is --shard ("I/N" or ""), shards is --shards (0 when not given) and
// completionIndex is $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's pod
// index; "" when unset). --shard wins; --shards N alone takes its index
// from completionIndex. Anything else is no sharding.
func ResolveShard(flag string, shards int, completionIndex string) (Shard, error) {
	if flag != "" {
		s, err := ParseShard(flag)
		if err != nil {
			return Shard{}, err
		}
		if shards != 0 && shards != s.Count {
			return Shard{}, fmt.Errorf("%w: --shard %s and --shards %d disagree", ErrBadShard, flag, shards)
		}
		return s, nil
	}
	if shards == 0 {
		return Shard{}, nil
	}
	if completionIndex == "" {
		return Shard{}, fmt.Errorf("%w: --shards %d needs --shard I/%d or $JOB_COMPLETION_INDEX", ErrBadShard, shards, shards)
	}
	i, err := strconv.Atoi(strings.TrimSpace(completionIndex))
	if err != nil {
		return Shard{}, fmt.Errorf("%w: JOB_COMPLETION_INDEX %q is not a number", ErrBadShard, completionIndex)
	}
	s := Shard{Index: i, Count: shards}
	if err := s.Validate(); err != nil {
		return Shard{}, err
	}
	return s, nil
}
