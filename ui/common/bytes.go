package common

import "strconv"

// ByteSize is a count of bytes in words: "1 byte", "12 bytes".
func ByteSize(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return strconv.Itoa(n) + " bytes"
}
