package codeinterp

import "testing"

func TestOnInputAnswersInputAndGetpass(t *testing.T) {
	type ask struct {
		prompt   string
		password bool
	}
	var asked []ask
	res, err := shared.RunWithOptions("import getpass\nn = int(input('how many? '))\n"+
		"pw = getpass.getpass()\n(n * 2, pw)", RunOptions{
		OnInput: func(prompt string, password bool) (string, bool) {
			asked = append(asked, ask{prompt, password})
			if password {
				return "s3cret", true
			}
			return "21", true
		},
	})
	if err != nil || res.Status != StatusOK || res.Value != "(42, 's3cret')" {
		t.Fatalf("run: %v %v %q %v", err, res.Status, res.Value, res.Error)
	}
	if len(asked) != 2 || asked[0] != (ask{"how many? ", false}) || !asked[1].password {
		t.Errorf("asked %+v", asked)
	}
}

func TestOnInputRefusesAndWithoutIt(t *testing.T) {
	for name, opts := range map[string]RunOptions{
		"refused": {OnInput: func(string, bool) (string, bool) { return "", false }},
		"NUL":     {OnInput: func(string, bool) (string, bool) { return "a\x00b", true }},
		"none":    {},
	} {
		res, err := shared.RunWithOptions("input('x? ')", opts)
		if err != nil || res.Status != StatusError || res.Error.Name != "StdinNotImplementedError" {
			t.Errorf("%s: %v %v %+v", name, err, res.Status, res.Error)
		}
	}
}

func TestOnInputPanicInterruptsAndResumes(t *testing.T) {
	func() {
		defer func() {
			if r := recover(); r != "no answer" {
				t.Errorf("recovered %v, want no answer", r)
			}
		}()
		shared.RunWithOptions("input('x? ')\nimport time\nwhile True: time.sleep(0.01)",
			RunOptions{OnInput: func(string, bool) (string, bool) { panic("no answer") }})
		t.Error("RunWithOptions returned")
	}()
	if r := run(t, shared, "6 * 7"); r.Value != "42" {
		t.Errorf("after the panic: %v %q", r.Status, r.Value)
	}
}
