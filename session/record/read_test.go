package record_test

import (
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/session/record"
)

func TestSnapshot_ReadRecordingRefusesBadFiles(t *testing.T) {
	for name, src := range map[string]string{
		"no version":  `{"servers":[]}`,
		"new version": `{"schema_version":2,"servers":[]}`,
		"twice":       `{"schema_version":1,"servers":[{"name":"a","status":"ready","tools":[]},{"name":"a","status":"ready","tools":[]}]}`,
		"bad status":  `{"schema_version":1,"servers":[{"name":"a","status":"connecting","tools":[]}]}`,
		"unknown key": `{"schema_version":1,"servers":[],"extra":1}`,
		"not json":    `{`,
	} {
		if _, err := record.Read(strings.NewReader(src)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
