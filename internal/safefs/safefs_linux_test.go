package safefs

import "testing"

// TestComponentWalk runs the tests again with openat2 taken for missing
// (an old kernel, a seccomp filter): the O_NOFOLLOW walk per component
// must hold as well.
func TestComponentWalk(t *testing.T) {
	openat2Missing.Store(true)
	defer openat2Missing.Store(false)
	t.Run("stay beneath", TestRepairsStayBeneath)
	t.Run("reads", TestReadsRefuseLinksAndFIFOs)
	t.Run("walk", TestWalkDoesNotFollow)
}
