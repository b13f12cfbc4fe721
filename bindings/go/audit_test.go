package codeinterp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func hexSHA256(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestAuditLogRecordsACellAndAFileInOneChain(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	code := "open('out.txt', 'w').write('hi')"
	s, err := NewSession(WithAuditLog(log))
	if err != nil {
		t.Fatal(err)
	}
	if res := run(t, s, code); res.Status != StatusOK {
		t.Fatalf("status %v", res.Status)
	}
	if err := s.PutFile("in.txt", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	s.Close()

	text, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(text, []byte("\n")) {
		t.Fatalf("the log does not end in a newline: %q", text)
	}
	lines := bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n"))
	var names []string
	prev := strings.Repeat("0", 64)
	events := make([]map[string]any, len(lines))
	for i, line := range lines {
		if err := json.Unmarshal(line, &events[i]); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		e := events[i]
		if e["seq"] != float64(i+1) || e["prev"] != prev || e["session"] != events[0]["session"] {
			t.Errorf("line %d: seq %v, prev %v, session %v; want %d, %s, %v", i+1, e["seq"],
				e["prev"], e["session"], i+1, prev, events[0]["session"])
		}
		prev = hexSHA256(line)
		names = append(names, e["event"].(string))
	}
	if got := strings.Join(names, " "); got != "session_start cell_start cell file_put session_end" {
		t.Fatalf("events: %s", got)
	}
	cell := events[2]
	if cell["sha256"] != hexSHA256([]byte(code)) || cell["bytes"] != float64(len(code)) ||
		cell["status"] != "ok" {
		t.Errorf("cell event: %v", cell)
	}
	if put := events[3]; put["name"] != "in.txt" || put["sha256"] != hexSHA256([]byte("abc")) {
		t.Errorf("file_put event: %v", put)
	}
}

func TestAuditLogThatCannotBeOpenedFailsTheStart(t *testing.T) {
	log := filepath.Join(t.TempDir(), "no-such-dir", "audit.log")
	_, err := NewSession(WithAuditLog(log))
	if !errors.Is(err, ErrIO) || !strings.Contains(err.Error(), log) {
		t.Fatalf("NewSession: %v; want ErrIO naming %s", err, log)
	}
	if _, err := NewSession(WithAuditLog("")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("WithAuditLog(\"\"): %v", err)
	}
}

func TestEventFuncGetsTheLinesTheFileGets(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	var seen []string
	s, err := NewSession(WithAuditLog(log), WithEventFunc(func(line string) error {
		seen = append(seen, line+"\n")
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	run(t, s, "1 + 1")
	s.Close()
	text, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, ""); got != string(text) || len(seen) != 4 {
		t.Fatalf("the callback got %d lines:\n%s\nthe file:\n%s", len(seen), got, text)
	}
}

func TestAnEventTheFuncRefusesStopsRunsUntilARestart(t *testing.T) {
	refuse := false
	s, err := NewSession(WithEventFunc(func(line string) error {
		if refuse {
			return errors.New("the collector is down")
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	refuse = true
	if _, err := s.Run("print('never')"); !errors.Is(err, ErrIO) {
		t.Fatalf("Run with the event refused: %v; want ErrIO", err)
	}
	refuse = false
	if err := s.PutFile("x.txt", []byte("1")); !errors.Is(err, ErrIO) {
		t.Fatalf("PutFile before a restart: %v; want ErrIO", err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if res := run(t, s, "6 * 7"); res.Value != "42" {
		t.Fatalf("after the restart: %q", res.Value)
	}
}
