package trust

import (
	"slices"
	"strings"
)

// The words of a server name, and the tool names, that suggest a persistent store
// (LooksPersistent).
var (
	persistentServerWords = []string{"memory", "memories", "mem", "notes", "note", "notebook", "knowledge", "kb", "journal", "diary", "brain", "remember"}
	persistentToolNames   = []string{
		"add_observations", "create_entities", "create_relations", "add_memory", "add_memories",
		"save_memory", "store_memory", "create_memory", "update_memory", "remember",
		"save_note", "create_note", "add_note", "write_note", "update_note", "append_note",
		"add_journal_entry", "write_journal", "save_knowledge", "add_knowledge",
	}
)

// LooksPersistent says why a server may be a persistent store that is not labelled
// so (LegPersistent): the word of its name ("memory", "notes", "kb", …) and the tools
// whose names are a store's writes (add_observations, save_note, remember, …), the
// tools sorted; ok is false when neither matches. Names compare case-folded, '-'
// and '_' alike. Server-controlled tool names come back as given: escape them.
func LooksPersistent(server string, tools []string) (word string, named []string, ok bool) {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	for _, w := range strings.FieldsFunc(strings.ToLower(server), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	}) {
		if slices.Contains(persistentServerWords, w) {
			word = w
			break
		}
	}
	for _, t := range tools {
		if slices.Contains(persistentToolNames, norm(t)) {
			named = append(named, t)
		}
	}
	slices.Sort(named)
	return word, named, word != "" || len(named) > 0
}
