package model_test

import (
	"errors"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/audit"
)

// A denial by the audit log says the log's own words once, whether or not the log's
// error already says them.
func TestDeniedError_AuditSaysErrBroken(t *testing.T) {
	plain := &model.DeniedError{Audit: errors.New("disk full")}
	if got, want := plain.Error(), "call refused, nothing was sent: "+audit.ErrBroken.Error()+": disk full"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	wrapped := &model.DeniedError{Audit: audit.ErrBroken}
	if got, want := wrapped.Error(), "call refused, nothing was sent: "+audit.ErrBroken.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(wrapped, audit.ErrBroken) {
		t.Error("errors.Is(DeniedError, audit.ErrBroken) = false")
	}
}
