// Command agent is a small agent host: a scripted "model" proposes Python
// cells, the host runs each one in a codeinterp session as the model's code
// tool, streams its output to the terminal, and turns the Result into the
// observation the model would read next. Files and figures the cells make
// are copied out of the sandbox.
//
//	go run ./examples/agent [OUTDIR]
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"codeinterp.dev/go/codeinterp"
)

// The model's turns: a mistake it then fixes, a chart, and a runaway loop
// that the per-call timeout cuts short.
var cells = []string{
	`import pandas as pd
df = pd.read_csv('sales.csv')
print(df.shape)
df.groupby('regoin').units.sum()`,
	`by_region = df.groupby('region').units.sum().sort_values(ascending=False)
by_region.to_csv('by_region.csv')
by_region`,
	`import matplotlib.pyplot as plt
ax = by_region.plot.bar(title='Units by region')
ax.set_ylabel('units')
print('best region:', by_region.index[0])`,
	`n = 0
while True:
    n += 1`,
	`n > 0, df.units.sum()`,
}

func main() {
	log.SetFlags(0)
	out := "agent-out"
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		log.Fatal(err)
	}

	s, err := codeinterp.NewSession(codeinterp.WithTimeout(30 * time.Second))
	if err != nil {
		log.Fatal(err) // e.g. codeinterp: NewSession: the worker process could not be started: ...
	}
	defer s.Close()
	fmt.Printf("session: worker pid %d, sandbox %v\n", s.PID(), s.Sandbox())

	var csv strings.Builder
	csv.WriteString("month,region,units\n")
	for m := 1; m <= 12; m++ {
		for i, r := range []string{"north", "south", "east", "west"} {
			fmt.Fprintf(&csv, "2024-%02d,%s,%d\n", m, r, 100+m*(i+1)*7%53)
		}
	}
	if err := s.PutFile("sales.csv", []byte(csv.String())); err != nil {
		log.Fatal(err)
	}

	for i, code := range cells {
		fmt.Printf("\n--- model, turn %d:\n%s\n--- running\n", i+1, indent(code))
		obs, err := runTool(s, code, out)
		if errors.Is(err, codeinterp.ErrDead) {
			// The worker died in an earlier cell: start a fresh one.
			if err = s.Restart(); err == nil {
				obs, err = runTool(s, code, out)
			}
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("--- observation for the model:\n%s", indent(obs))
	}
	fmt.Println("\ndone; files in", out)
}

// runTool runs one cell as the model's code tool and returns the text the
// model gets back.
func runTool(s *codeinterp.Session, code, out string) (string, error) {
	res, err := s.RunWithOptions(code, codeinterp.RunOptions{
		Timeout: 2 * time.Second,
		OnOutput: func(stream codeinterp.Stream, data []byte) {
			if stream == codeinterp.Stderr {
				os.Stderr.Write(data)
			} else {
				os.Stdout.Write(data)
			}
		},
	})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "status: %v (cell %d, %v)\n", res.Status, res.ExecutionCount,
		res.WallTime.Round(time.Millisecond))
	if res.Stdout != "" {
		fmt.Fprintf(&b, "stdout:\n%s", res.Stdout)
	}
	if res.HasValue {
		fmt.Fprintf(&b, "Out[%d]: %s\n", res.ExecutionCount, res.Value)
	}
	if res.Error != nil {
		fmt.Fprintf(&b, "%s\n", res.Error) // "KeyError: 'regoin'"
		if res.Status == codeinterp.StatusTimeout {
			b.WriteString("(the cell ran too long and was stopped; the session's state is intact)\n")
		}
	}
	for j, o := range res.OutputsOf("image/png") {
		name := fmt.Sprintf("cell%d-figure%d.png", res.ExecutionCount, j+1)
		if err := os.WriteFile(filepath.Join(out, name), o.Data, 0o644); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "[figure saved as %s, %d bytes]\n", name, len(o.Data))
	}
	for _, f := range res.Files {
		data, err := s.GetFile(f)
		if err != nil {
			return "", err
		}
		dst := filepath.Join(out, filepath.Base(f))
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "[file %s written, %d bytes]\n", f, len(data))
	}
	return b.String(), nil
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}
