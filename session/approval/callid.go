package approval

import (
	"crypto/rand"
	"encoding/hex"
)

// callIDPrefix starts every call id of this process: "c", 8 random hex digits and "-",
// so that the ids of airlock processes sharing one audit log never collide.
var callIDPrefix = func() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "c" + hex.EncodeToString(b[:]) + "-"
}()
