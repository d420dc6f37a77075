package trust

import (
	"crypto/sha256"
	"encoding/hex"
)

// ArgsSHA256 is the hex SHA-256 of the exact argument bytes.
func ArgsSHA256(args []byte) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}
