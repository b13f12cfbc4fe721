module codeinterp

go 1.19
