package llmtest_test

import (
	"errors"
	"os"
)

func asError[T error](err error, target *T) bool { return errors.As(err, target) }

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
