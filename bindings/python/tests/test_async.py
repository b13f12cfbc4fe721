"""Session.run_async(): the event loop runs on while a cell runs, sessions
run side by side under asyncio.gather, and cancelling interrupts."""

import asyncio
import time

import pytest

import codeinterp
from codeinterp import Status


def test_run_async_returns_the_result(session):
    r = asyncio.run(session.run_async("6 * 7"))
    assert r.status is Status.OK and r.value == "42"


def test_two_sessions_under_gather_run_at_once_and_leave_the_loop_free():
    async def main(a, b):
        gaps = []

        async def ticker():
            last = time.monotonic()
            while True:
                await asyncio.sleep(0.02)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        tick = asyncio.create_task(ticker())
        start = time.monotonic()
        ra, rb = await asyncio.gather(a.run_async("import time\ntime.sleep(1)\n'a'"),
                                      b.run_async("import time\ntime.sleep(1)\n'b'"))
        elapsed = time.monotonic() - start
        tick.cancel()
        return ra, rb, elapsed, gaps

    with codeinterp.Session() as a, codeinterp.Session() as b:
        ra, rb, elapsed, gaps = asyncio.run(main(a, b))
    assert (ra.value, rb.value) == ("'a'", "'b'")
    assert elapsed < 1.8            # side by side, not one after the other
    assert len(gaps) >= 10 and max(gaps) < 0.5   # the loop kept ticking


def test_cancel_interrupts_the_cell_and_frees_the_session(session):
    async def main():
        session.run("x = 1")
        task = asyncio.create_task(session.run_async(
            "import time\nwhile True:\n    time.sleep(0.01)"))
        await asyncio.sleep(0.5)
        start = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - start

    took = asyncio.run(main())
    assert took < 1.5               # interrupted, not killed after the grace period
    r = session.run("x + 1")        # not busy, and the state was kept
    assert r.status is Status.OK and r.value == "2"


def test_wait_for_times_out_by_interrupting(session):
    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(session.run_async("while True: pass"), 0.3)
        return await session.run_async("'free'")

    r = asyncio.run(main())
    assert r.value == "'free'"


def test_run_async_raises_what_run_raises(session):
    async def main():
        with codeinterp.Session() as s:
            first = asyncio.create_task(s.run_async("import time\ntime.sleep(0.5)"))
            await asyncio.sleep(0.2)
            with pytest.raises(codeinterp.BusyError):
                await s.run_async("1")
            assert (await first).status is Status.OK
        with pytest.raises(codeinterp.SessionClosedError):
            await s.run_async("1")

    asyncio.run(main())


def test_output_reaches_the_loop_through_call_soon_threadsafe(session):
    async def main():
        loop = asyncio.get_running_loop()
        queue = asyncio.Queue()
        run = asyncio.create_task(session.run_async(
            "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.1)",
            on_output=lambda stream, data: loop.call_soon_threadsafe(queue.put_nowait, data)))
        first = await asyncio.wait_for(queue.get(), 5)
        assert not run.done()       # seen while the cell still runs
        r = await run
        return first, r

    first, r = asyncio.run(main())
    assert first == b"0\n" and r.stdout == "0\n1\n2\n"
