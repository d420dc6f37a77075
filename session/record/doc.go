// Package record holds what airlock does with the snapshot files of CI (`airlock
// snapshot`, `check --snapshot`, `check --drift`) apart from the Manager: reading
// one ([Read] refuses an unknown schema version, a repeated server, an unknown key
// and anything above [model.MaxRecordingBytes]), comparing two ([Drift]), and the
// sandbox a snapshot records and what of it an offline check counts.
//
// It works on the value types of internal/model only; taking a recording from live
// servers and checking a config against one stay with the Manager in session. It
// does no I/O beyond the reader it is given.
package record
