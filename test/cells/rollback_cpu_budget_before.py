# The session's CPU budget as the worker sees it: 4 s on top of the whole
# seconds its start used.
import resource

before = resource.getrlimit(resource.RLIMIT_CPU)[1]
before in (4, 5)
