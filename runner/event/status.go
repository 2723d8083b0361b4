package event

// Status is how a run ended: the "status" of run.finished. The values are
// the Status constants; a log carries them as JSON strings.
type Status string

// Run statuses (run.finished "status").
const (
	StatusSuccess        Status = "success"
	StatusFailed         Status = "failed"
	StatusError          Status = "error"
	StatusCancelled      Status = "cancelled"
	StatusMaxSteps       Status = "max_steps"
	StatusBudgetExceeded Status = "budget_exceeded"
	StatusTimeout        Status = "timeout"
	StatusBlocked        Status = "blocked"
	// StatusDeliveryFailed: the agent's work succeeded (checks passed, a
	// patch is ready) but publishing it failed: the push, the pull
	// request, its labels, the sticky comment or the review (exit 3). The
	// publish events say which call failed and what was created.
	StatusDeliveryFailed Status = "delivery_failed"
	// StatusViolation: a post-run gate failed (a gate.failed event says
	// which): an edit-denied path changed, .git was tampered with, or the
	// patch holds a secret. Exit 1; nothing is published.
	StatusViolation Status = "violation"
)

// ErrorClass says why a run (or a model call) did not succeed: the "class"
// of run.finished's error and the "error_class" of a retry. Every producer
// in the module uses these constants; the first three are llm.ErrorClass
// values (the llm package sits below this one and keeps its own copy, and
// a test in runner checks that they agree).
type ErrorClass string

// Error classes. The provider's (llm.ErrorClass values):
const (
	ClassRetryable       ErrorClass = "retryable"        // a provider error that outlived the runner's own retries
	ClassContextOverflow ErrorClass = "context-overflow" // the conversation outgrew the model's context window
	ClassFatal           ErrorClass = "fatal"            // the provider refused the call (credentials, unknown model, a cassette that does not fit)
)

// Error classes the agent loop gives a run (runner.Error.Class).
const (
	ClassCancelled     ErrorClass = "cancelled"
	ClassTimeout       ErrorClass = "timeout"
	ClassMaxSteps      ErrorClass = "max_steps"
	ClassBudget        ErrorClass = "budget"
	ClassBlocked       ErrorClass = "blocked"
	ClassContentFilter ErrorClass = "content-filter"
	ClassLength        ErrorClass = "length"
	ClassOutput        ErrorClass = "structured-output"
	ClassInternal      ErrorClass = "internal" // the agent loop crashed
	ClassModel         ErrorClass = "model"
)

// Error classes the pipeline and batch give a run around the agent loop.
const (
	ClassInfra  ErrorClass = "infra"  // file system, git, process crash
	ClassChecks ErrorClass = "checks" // the task's checks still fail after the retries
	// ClassSpec is a repository whose run could not start because its task
	// spec or inputs are invalid (exit code 2): a task failure.
	ClassSpec ErrorClass = "spec"
	// ClassDelivery is a run whose results could not be published
	// (StatusDeliveryFailed).
	ClassDelivery ErrorClass = "delivery"
	// ClassViolation is a run stopped by a post-run gate (StatusViolation).
	ClassViolation ErrorClass = "violation"
	// ClassPatchIncomplete is a run whose patch leaves a change out (a
	// binary file over the binary patch limit; the patch event's
	// files[].omitted names it): status failed, exit code 1.
	ClassPatchIncomplete ErrorClass = "patch_incomplete"
	// ClassUsage is a run refused after its out dir existed because the
	// command line does not fit the work tree, such as a --continue whose
	// work tree diverged (exit code 2).
	ClassUsage ErrorClass = "usage"
)

// ChangeStatus is how a file changed: the "status" of a patch's file.
type ChangeStatus string

// Change statuses (patch "files[].status").
const (
	ChangeAdded    ChangeStatus = "added"
	ChangeModified ChangeStatus = "modified"
	ChangeDeleted  ChangeStatus = "deleted"
	ChangeRenamed  ChangeStatus = "renamed"
)
