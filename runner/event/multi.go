package event

import "errors"

// Multi returns a Sink that emits every event to each of sinks in order.
// Every sink gets the event even when an earlier one fails; the error joins
// the failures. Nil sinks are skipped.
func Multi(sinks ...Sink) Sink {
	out := make(multi, 0, len(sinks))
	for _, s := range sinks {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

type multi []Sink

func (m multi) Emit(p Payload) error {
	var errs []error
	for _, s := range m {
		if err := s.Emit(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Discard is a Sink that drops every event.
type Discard struct{}

// Emit implements Sink.
func (Discard) Emit(Payload) error { return nil }
