package model

// Reviewed is what a person was shown before accepting changed pins, so that what is
// pinned is exactly that: per changed tool, the fingerprint (SHA-256 hex) of the
// current definition shown, or a prefix of at least 8 digits; and,
// for changed instructions, the fingerprint of the instructions shown ("" leaves
// them as they are).
type Reviewed struct {
	Tools        map[string]string
	Instructions string
}
