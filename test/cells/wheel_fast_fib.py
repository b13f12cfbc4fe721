import ci_fast
ci_fast.fib(10)
