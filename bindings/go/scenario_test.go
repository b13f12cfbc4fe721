package codeinterp_test

// The shared scenario (test/scenario/steps.json, docs/testing.md): one
// session taken through the steps the C library's, the Python and the Rust
// tests take too. The expected values are the data file's; this file only
// maps each step kind to the Go API, as a user of the module calls it.

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"codeinterp.dev/go/codeinterp"
)

// go test runs in the package's directory, bindings/go.
var stepsFile = filepath.Join("..", "..", "test", "scenario", "steps.json")

type scenario struct {
	Session struct {
		TimeoutMS int64 `json:"timeout_ms"`
	} `json:"session"`
	Steps []step `json:"steps"`
}

type step struct {
	Step      string                     `json:"step"`
	Kind      string                     `json:"kind"`
	Name      string                     `json:"name"`
	Text      string                     `json:"text"`
	Code      string                     `json:"code"`
	TimeoutMS int64                      `json:"timeout_ms"`
	Expect    map[string]json.RawMessage `json:"expect"`
}

type outputWant struct {
	MIME      string  `json:"mime"`
	Type      string  `json:"type"`
	Text      *string `json:"text"`
	Contains  *string `json:"contains"`
	PrefixHex *string `json:"prefix_hex"`
}

func TestScenario(t *testing.T) {
	data, err := os.ReadFile(stepsFile)
	if err != nil {
		t.Fatal(err)
	}
	var sc scenario
	if err := json.Unmarshal(data, &sc); err != nil {
		t.Fatalf("%s: %v", stepsFile, err)
	}
	s, err := codeinterp.NewSession(codeinterp.WithTimeout(time.Duration(sc.Session.TimeoutMS) * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for n, st := range sc.Steps {
		if err := doStep(s, st); err != nil {
			t.Fatalf("scenario step %d (%s, %s): %v", n+1, st.Kind, st.Step, err)
		}
	}
}

func doStep(s *codeinterp.Session, st step) error {
	if s.Closed() {
		return fmt.Errorf("the session is closed")
	}
	switch st.Kind {
	case "put_file":
		return s.PutFile(st.Name, []byte(st.Text))
	case "run":
		res, err := s.RunWithOptions(st.Code, codeinterp.RunOptions{
			Timeout: time.Duration(st.TimeoutMS) * time.Millisecond})
		if err != nil {
			return err
		}
		return checkRun(st.Expect, res)
	case "get_file":
		got, err := s.GetFile(st.Name)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, []byte(st.Text)) {
			return fmt.Errorf("%q, expected %q", got, st.Text)
		}
		return nil
	case "restart":
		return s.Restart()
	case "close":
		if err := s.Close(); err != nil {
			return err
		}
		if !s.Closed() {
			return fmt.Errorf("Closed() is false after Close")
		}
		return nil
	}
	return fmt.Errorf("unknown step kind %q", st.Kind)
}

// optional is a string the data may give as null: nil for null.
func optional(has bool, s string) *string {
	if !has {
		return nil
	}
	return &s
}

func checkRun(expect map[string]json.RawMessage, res *codeinterp.Result) error {
	var errName, errValue, traceback *string
	if res.Error != nil {
		errName, errValue, traceback = &res.Error.Name, &res.Error.Value, &res.Error.Traceback
	}
	// In a fixed order, so that a result that differs twice names the
	// same difference every time (a map's order is random).
	keys := make([]string, 0, len(expect))
	for key := range expect {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		raw := expect[key]
		var err error
		switch key {
		case "status":
			err = same(key, raw, res.Status.String())
		case "execution_count":
			err = same(key, raw, res.ExecutionCount)
		case "stdout":
			err = same(key, raw, res.Stdout)
		case "value":
			err = same(key, raw, optional(res.HasValue, res.Value))
		case "error_name":
			err = same(key, raw, errName)
		case "error_value":
			err = same(key, raw, errValue)
		case "traceback_contains":
			err = checkTraceback(raw, traceback)
		case "outputs":
			err = checkOutputs(raw, res.Outputs)
		case "files":
			err = same(key, raw, append([]string{}, res.Files...))
		default:
			err = fmt.Errorf("unknown expect key %q", key)
		}
		if err != nil {
			return fmt.Errorf("%v\n(result: %s)", err, summary(res))
		}
	}
	return nil
}

// summary is what the result holds, with each output as its MIME type
// and size instead of its bytes.
func summary(res *codeinterp.Result) string {
	outputs := make([]string, len(res.Outputs))
	for i, o := range res.Outputs {
		outputs[i] = fmt.Sprintf("%s %s %d bytes", o.Type, o.MIME, len(o.Data))
	}
	return fmt.Sprintf("status %s, execution count %d, value %q (%v), error %v, stdout %q, stderr %q, "+
		"outputs %q, files %q", res.Status, res.ExecutionCount, res.Value, res.HasValue, res.Error,
		res.Stdout, res.Stderr, outputs, res.Files)
}

// same compares got with the JSON value raw, both as decoded JSON: the
// data's null, strings, numbers and lists against Go's nil, strings, ints
// and slices.
func same(key string, raw json.RawMessage, got interface{}) error {
	var want, have interface{}
	if err := json.Unmarshal(raw, &want); err != nil {
		return err
	}
	enc, err := json.Marshal(got)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(enc, &have); err != nil {
		return err
	}
	if !reflect.DeepEqual(want, have) {
		return fmt.Errorf("%s %s, expected %s", key, enc, raw)
	}
	return nil
}

func checkTraceback(raw json.RawMessage, traceback *string) error {
	var parts []string
	if err := json.Unmarshal(raw, &parts); err != nil {
		return err
	}
	tb := ""
	if traceback != nil {
		tb = *traceback
	}
	for _, p := range parts {
		if !strings.Contains(tb, p) {
			return fmt.Errorf("traceback does not contain %q:\n%s", p, tb)
		}
	}
	return nil
}

func checkOutputs(raw json.RawMessage, outputs []codeinterp.Output) error {
	var want []outputWant
	if err := json.Unmarshal(raw, &want); err != nil {
		return err
	}
	if len(outputs) != len(want) {
		return fmt.Errorf("%d outputs, expected %d", len(outputs), len(want))
	}
	for i, w := range want {
		o := outputs[i]
		if o.MIME != w.MIME || o.Type.String() != w.Type {
			return fmt.Errorf("output %d: %s %s, expected %s %s", i, o.MIME, o.Type, w.MIME, w.Type)
		}
		if w.Text != nil && string(o.Data) != *w.Text {
			return fmt.Errorf("output %d: %q, expected %q", i, o.Data, *w.Text)
		}
		if w.Contains != nil && !bytes.Contains(o.Data, []byte(*w.Contains)) {
			return fmt.Errorf("output %d does not contain %q", i, *w.Contains)
		}
		if w.PrefixHex != nil {
			prefix, err := hex.DecodeString(*w.PrefixHex)
			if err != nil {
				return err
			}
			if !bytes.HasPrefix(o.Data, prefix) {
				return fmt.Errorf("output %d starts %q, expected %q", i, o.Data[:min(len(o.Data), 16)], prefix)
			}
		}
	}
	return nil
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}
