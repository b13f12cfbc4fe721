package codeinterp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestHostFunctions(t *testing.T) {
	var got [][]any
	var gotKw []map[string]any
	s, err := NewSession(
		WithFunction("query_sales", "Sales of a region.", func(args []any, kwargs map[string]any) (any, error) {
			got, gotKw = append(got, args), append(gotKw, kwargs)
			if len(args) > 0 && args[0] == "nowhere" {
				return nil, &FunctionError{"KeyError", "no region nowhere"}
			}
			return map[string]any{"region": kwargs["region"], "total": 12.5, "rows": []any{1, nil, true}}, nil
		}),
		WithFunction("fail", "", func([]any, map[string]any) (any, error) {
			return nil, errors.New("the warehouse is down")
		}),
		WithFunction("slow", "", func([]any, map[string]any) (any, error) {
			time.Sleep(1500 * time.Millisecond)
			return "late", nil
		}),
		WithFunction("boom", "", func([]any, map[string]any) (any, error) { panic("boom") }),
		WithCallLimits(4096, 4096))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	r := run(t, s, "r = query_sales(7, region='EMEA')\nr['total'], r['rows'], r['region']")
	if r.Status != StatusOK || r.Value != "(12.5, [1, None, True], 'EMEA')" {
		t.Fatalf("call: %v %q %+v", r.Status, r.Value, r.Error)
	}
	if len(got) != 1 || got[0][0] != json.Number("7") || gotKw[0]["region"] != "EMEA" {
		t.Errorf("the function got %v %v", got, gotKw)
	}
	r = run(t, s, "help(query_sales)")
	if !strings.Contains(r.Stdout, "Sales of a region.") {
		t.Errorf("help: %q", r.Stdout)
	}
	for code, want := range map[string]string{
		"query_sales('nowhere')": "KeyError: 'no region nowhere'",
		"fail()":                 "RuntimeError: the warehouse is down",
		"query_sales(b'raw')":    "TypeError: query_sales() argument 1: a value of type bytes is not JSON",
		"query_sales('x' * 5000)": "ValueError: the arguments of query_sales() are 5025 bytes of JSON, " +
			"over the host's limit of 4 KiB",
	} {
		r = run(t, s, code)
		if r.Status != StatusError || !strings.HasPrefix(r.Error.Name+": "+r.Error.Value, want) {
			t.Errorf("%s: %v %+v, want %s", code, r.Status, r.Error, want)
		}
	}
	r, err = s.RunWithOptions("x = 1\nx = slow()", RunOptions{Timeout: 500 * time.Millisecond})
	if err != nil || r.Status != StatusTimeout || r.Error.Name != "TimeoutError" {
		t.Errorf("slow: %v %v %+v", err, r.Status, r.Error)
	}
	if r = run(t, s, "x"); r.Value != "1" {
		t.Errorf("after the timeout: %v %q", r.Status, r.Value)
	}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want boom", p)
			}
		}()
		s.Run("boom()")
		t.Error("Run returned")
	}()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if r = run(t, s, "query_sales(region='APAC')['region']"); r.Value != "'APAC'" {
		t.Errorf("after a restart: %v %q %+v", r.Status, r.Value, r.Error)
	}
}

func TestHostFunctionNamesAreChecked(t *testing.T) {
	for _, name := range []string{"print", "_x", "class", "a-b", ""} {
		_, err := NewSession(WithFunction(name, "", func([]any, map[string]any) (any, error) { return nil, nil }))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "ASCII Python identifier") {
			t.Errorf("%q: %v", name, err)
		}
	}
}

func TestTwoSessionsOfOneFunctionOptionRaiseTheirOwnPanics(t *testing.T) {
	boom := WithFunction("boom", "", func([]any, map[string]any) (any, error) { panic("boom") })
	a, b := newTestSession(t, boom), newTestSession(t, boom)
	if p := recovered(func() { a.Run("boom()") }); p != "boom" {
		t.Errorf("the first session's Run panicked with %v, want boom", p)
	}
	// The second session, started last with the same Option, saw nothing.
	expectValue(t, b, "6 * 7", "42")
	if p := recovered(func() { b.Run("boom()") }); p != "boom" {
		t.Errorf("the second session's Run panicked with %v, want boom", p)
	}
	expectValue(t, a, "6 * 7", "42")
}
