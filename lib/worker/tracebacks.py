"""Tracebacks as a model reads them: the cell's own frames first.

A failed urlopen() raises some 15 frames deep in the standard library,
and its traceback puts 40 lines of them between the cell's line and the
error. texts() gives the traceback twice: in full, as Python prints it,
and folded, where each run of other code's frames before a part's last
frame (the one that raised) is one line naming its files:

      ... 8 frames in urllib/request.py, http/client.py ...

The cell's frames (its code, the functions earlier cells defined, the
modules it wrote into the workspace) all stay. Each part of a chained
exception is folded alike. Everything comes from traceback's structured
data (TracebackException, FrameSummary), never from parsing its text.
The worker embeds this file (tools/embed.sh) as _codeinterp_tracebacks.
"""
import os, traceback

# The file names of code a cell ran: its own ("<cell N>"), and what
# IPython compiles from it (%time, %timeit, a cell magic's run_cell).
CELL_NAMES = ('<cell ', '<ipython-input-', '<timed exec>', '<timed eval>', '<magic-timeit>')

_PACKAGES = ('/site-packages/', '/dist-packages/')
_STDLIB = os.path.join(os.path.dirname(os.__file__), '')
_MOST_NAMES = 3


def short(filename):
    """filename from where an import would name it: after site-packages/
    (or Debian's dist-packages/), or the standard library's directory."""
    for marker in _PACKAGES:
        at = filename.rfind(marker)
        if at >= 0:
            return filename[at + len(marker):]
    if filename.startswith(_STDLIB):
        return filename[len(_STDLIB):]
    return filename


def own(filename, workspace=None):
    """Whether a frame of filename is the cell's own code."""
    return filename.startswith(CELL_NAMES) or bool(
        workspace and filename.startswith(os.path.join(workspace, '')))


def fold_line(frames):
    """The line that stands for frames (FrameSummary, at least one)."""
    names = list(dict.fromkeys(short(f.filename) for f in frames))
    shown = ', '.join(names[:_MOST_NAMES])
    if len(names) > _MOST_NAMES:
        shown += f' and {len(names) - _MOST_NAMES} more'
    n = len(frames)
    return f'    ... {n} frame{"s" if n != 1 else ""} in {shown} ...\n'


class _Fold(traceback.FrameSummary):
    # A run of folded frames, in a stack where a frame would stand; its
    # name, unlike any frame's, keeps StackSummary from counting it as a
    # repetition of its neighbour.
    __slots__ = ('text',)

    def __init__(self, frames):
        self.text = fold_line(frames)
        super().__init__(self.text, 0, '...', lookup_line=False, line='')


class _Folded(traceback.StackSummary):
    def format_frame_summary(self, frame_summary):
        if isinstance(frame_summary, _Fold):
            return frame_summary.text
        return super().format_frame_summary(frame_summary)


def fold(frames, is_own):
    """frames (FrameSummary, outermost first) with each run of frames not
    is_own(frame) before the last frame folded into one line: a
    StackSummary whose format() gives the folded text."""
    out, run = _Folded(), []
    for i, frame in enumerate(frames):
        if is_own(frame) or i == len(frames) - 1:
            if run:
                out.append(_Fold(run))
                run = []
            out.append(frame)
        else:
            run.append(frame)
    return out


def _parts(te):
    # Every TracebackException of te's chain and exception groups.
    seen, pending = set(), [te]
    while pending:
        t = pending.pop()
        if t is None or id(t) in seen:
            continue
        seen.add(id(t))
        yield t
        pending.extend((t.__cause__, t.__context__))
        pending.extend(getattr(t, 'exceptions', None) or ())


def texts(exc, tb, hide, is_own):
    """(folded, full): the text of exc's traceback as
    traceback.format_exception gives it, with tb as exc's traceback and
    every frame for which hide(frame) is true left out of every part;
    folded as fold() folds each part's frames. The two are equal when
    nothing was folded."""
    te = traceback.TracebackException(type(exc), exc, tb, compact=True)
    parts = list(_parts(te))
    for t in parts:
        t.stack = traceback.StackSummary.from_list([f for f in t.stack if not hide(f)])
    full = ''.join(te.format())
    for t in parts:
        t.stack = fold(t.stack, is_own)
    return ''.join(te.format()), full
