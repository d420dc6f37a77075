package common

// TierLabelW is the width of the widest tier label, "▲ destructive".
const TierLabelW = 13

// Plural is "s" unless n is one, for airlock's own counted words.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
