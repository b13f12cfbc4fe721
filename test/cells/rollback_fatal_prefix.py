# What each fatal cell of test_rollback.c does first, that a rollback
# must undo in memory and keep on disk: the frame changed, a variable
# set, a file written (fatal_index is set before it).
globals()["frame"]["a"] += 1  # rollback_frame.py made it
lost = 1
open(f"fatal_{globals()['fatal_index']}.txt", "w").write("written")
