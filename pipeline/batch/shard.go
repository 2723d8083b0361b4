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

// ShardAuto is the --shard value that takes the index and the count from
// the CI engine's variables (GitLab CI, Buildkite).
const ShardAuto = "auto"

// shardEngine is one CI engine's parallel-job variables.
type shardEngine struct {
	name, index, count string
	base               int // the index of the first job: 0, or 1 for GitLab
}

// shardEngines are the engines whose parallel jobs give a shard index:
//   - Kubernetes Indexed Jobs set JOB_COMPLETION_INDEX (0-based) and no count.
//   - GitLab CI's parallel: N sets CI_NODE_INDEX (1-based) and CI_NODE_TOTAL.
//   - Buildkite's parallelism sets BUILDKITE_PARALLEL_JOB (0-based) and
//     BUILDKITE_PARALLEL_JOB_COUNT.
var shardEngines = []shardEngine{
	{name: "a Kubernetes Indexed Job", index: "JOB_COMPLETION_INDEX"},
	{name: "GitLab CI", index: "CI_NODE_INDEX", count: "CI_NODE_TOTAL", base: 1},
	{name: "Buildkite", index: "BUILDKITE_PARALLEL_JOB", count: "BUILDKITE_PARALLEL_JOB_COUNT"},
}

// ShardEnvNames lists the variables ResolveShard reads, for messages.
func ShardEnvNames() string {
	var names []string
	for _, e := range shardEngines {
		names = append(names, "$"+e.index)
		if e.count != "" {
			names = append(names, "$"+e.count)
		}
	}
	return strings.Join(names, ", ")
}

// ResolveShard decides the shard from the command line and the environment
// (getenv; "" for an unset variable):
//   - --shard I/N (flag) wins; --shards, when given too, must agree.
//   - --shard auto takes I and N from GitLab CI or Buildkite (shardEngines).
//   - --shards N alone takes I from the one engine whose index is set.
//   - Anything else is no sharding, whatever the environment holds.
//
// An engine's count that disagrees with --shards, two engines whose
// shards differ, or an index out of range is an ErrBadShard naming the
// variables.
func ResolveShard(flag string, shards int, getenv func(string) string) (Shard, error) {
	if flag != "" && flag != ShardAuto {
		s, err := ParseShard(flag)
		if err != nil {
			return Shard{}, err
		}
		if shards != 0 && shards != s.Count {
			return Shard{}, fmt.Errorf("%w: --shard %s and --shards %d disagree", ErrBadShard, flag, shards)
		}
		return s, nil
	}
	if flag == "" && shards == 0 {
		return Shard{}, nil
	}
	var found []Shard
	var from []string
	for _, e := range shardEngines {
		s, ok, err := e.shard(shards, getenv)
		if err != nil {
			return Shard{}, err
		}
		if !ok {
			continue
		}
		if len(found) > 0 && s != found[0] {
			return Shard{}, fmt.Errorf("%w: %s says shard %s but %s says %s; unset one, or give --shard I/N",
				ErrBadShard, from[0], found[0], e.vars(), s)
		}
		found, from = append(found, s), append(from, e.vars())
	}
	if len(found) == 0 {
		if flag == ShardAuto {
			return Shard{}, fmt.Errorf("%w: --shard auto found no index and count in %s; "+
				"in a Kubernetes Indexed Job give --shards N (Kubernetes sets no count), elsewhere --shard I/N",
				ErrBadShard, ShardEnvNames())
		}
		return Shard{}, fmt.Errorf("%w: --shards %d needs --shard I/%d or an index in %s",
			ErrBadShard, shards, shards, ShardEnvNames())
	}
	return found[0], nil
}

// vars names the engine's variables, for messages.
func (e shardEngine) vars() string {
	if e.count == "" {
		return "$" + e.index
	}
	return "$" + e.index + "/$" + e.count
}

// shard reads the engine's variables: ok is false when its index is unset,
// or (with shards 0, --shard auto) when it gives no count.
func (e shardEngine) shard(shards int, getenv func(string) string) (Shard, bool, error) {
	is := strings.TrimSpace(getenv(e.index))
	if is == "" {
		return Shard{}, false, nil
	}
	i, err := strconv.Atoi(is)
	if err != nil {
		return Shard{}, false, fmt.Errorf("%w: %s %q (%s) is not a number", ErrBadShard, e.index, is, e.name)
	}
	n := shards
	if e.count != "" {
		if cs := strings.TrimSpace(getenv(e.count)); cs != "" {
			c, err := strconv.Atoi(cs)
			if err != nil {
				return Shard{}, false, fmt.Errorf("%w: %s %q (%s) is not a number", ErrBadShard, e.count, cs, e.name)
			}
			if shards != 0 && c != shards {
				return Shard{}, false, fmt.Errorf("%w: --shards %d but %s=%d (%s); make them agree, or drop --shards",
					ErrBadShard, shards, e.count, c, e.name)
			}
			n = c
		}
	}
	if n == 0 {
		return Shard{}, false, nil
	}
	s := Shard{Index: i - e.base, Count: n}
	if err := s.Validate(); err != nil {
		return Shard{}, false, fmt.Errorf("%w (from %s=%s, %s, which counts from %d)", err, e.index, is, e.name, e.base)
	}
	return s, true, nil
}
