import ci_beta, ci_fast
(ci_beta.VERSION, ci_fast.fib(20))
