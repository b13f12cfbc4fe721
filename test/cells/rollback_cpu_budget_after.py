# After a rollback: soft and hard alike, and lowered by at least the two
# whole seconds the dead worker used (before is rollback_cpu_budget_before.py's).
import resource

after = resource.getrlimit(resource.RLIMIT_CPU)
after[0] == after[1], 1 <= after[1] <= globals()["before"] - 2
