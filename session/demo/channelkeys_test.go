package demo

// servers.*.resources and servers.*.prompts are defined in docs/channels.md (issue
// 13); added here rather than on designKeys' shared line so that other keys added
// beside them merge cleanly.
func init() {
	designKeys["servers.*"] = append(designKeys["servers.*"], "resources", "prompts")
}
