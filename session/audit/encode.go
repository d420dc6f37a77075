package audit

import (
	"encoding/json"
	"strconv"

	"github.com/airlock-mcp/airlock/trust"
)

// canonicalRecord is a record's canonical form, the bytes its hash is of and its
// line holds: by definition canonicalWhole, trust.Canonical of the record as
// encoding/json writes it. It is written here directly, member by member in the
// order of their keys, and the arguments made canonical once at their depth in the
// record, because every call waits for two of them (its decision's and its
// outcome's). TestCanonicalRecord_IsTheWholeRecordsCanonicalForm holds the two to
// the same bytes for every field, and fails for a field this does not write.
func canonicalRecord(r *Record) ([]byte, error) {
	args := r.Args
	if args == nil {
		args = json.RawMessage(`null`) // as encoding/json writes a nil RawMessage
	}
	out := make([]byte, 0, 320+len(args)+len(r.Reason)+len(r.Error))
	out = append(out, `{"args":`...)
	out, err := trust.AppendCanonical(out, args, 1)
	if err != nil {
		return nil, err
	}
	str := func(key, v string) { out = trust.AppendCanonicalString(append(out, key...), v) }
	opt := func(key, v string) {
		if v != "" {
			str(key, v)
		}
	}
	str(`,"args_sha256":`, r.ArgsSHA256)
	str(`,"call_id":`, r.CallID)
	opt(`,"client":`, r.Client)
	str(`,"context":`, r.Context)
	opt(`,"decided_by":`, r.DecidedBy)
	opt(`,"decision":`, r.Decision)
	if r.DurationMS != 0 {
		out = strconv.AppendInt(append(out, `,"duration_ms":`...), r.DurationMS, 10)
	}
	opt(`,"error":`, r.Error)
	opt(`,"hash":`, r.Hash)
	str(`,"kind":`, r.Kind)
	opt(`,"outcome":`, r.Outcome)
	opt(`,"person_reason":`, r.PersonReason)
	str(`,"prev":`, r.Prev)
	if l := r.Previous; l != nil {
		str(`,"previous":{"file":`, l.File)
		str(`,"hash":`, l.Hash)
		out = append(strconv.AppendUint(append(out, `,"seq":`...), l.Seq, 10), '}')
	}
	opt(`,"reason":`, r.Reason)
	opt(`,"rule":`, r.Rule)
	out = strconv.AppendUint(append(out, `,"seq":`...), r.Seq, 10)
	opt(`,"served":`, r.Served)
	str(`,"server":`, r.Server)
	str(`,"tier":`, r.Tier)
	str(`,"tool":`, r.Tool)
	out = append(out, `,"ts":"`...)
	if out, err = r.TS.AppendText(out); err != nil {
		return nil, err // a year past 9999, as encoding/json refuses it
	}
	return append(out, `"}`...), nil
}
