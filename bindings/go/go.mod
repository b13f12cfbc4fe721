module codeinterp.dev/go/codeinterp

go 1.19
