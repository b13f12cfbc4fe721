import ci_fast, ci_fast._speed
(ci_fast.fib(90), ci_fast._speed.__file__.endswith('.so'))
