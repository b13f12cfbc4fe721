# A Python at-fork hook, which would run on the worker's main thread
# while the host approves the checkpoint's fork: CPython's fork hooks are
# not run for the checkpoint, so it never runs in the worker.
import os


def at_fork_hook():
    open("at_fork_hook_ran", "w").close()


os.register_at_fork(before=at_fork_hook, after_in_parent=at_fork_hook)
