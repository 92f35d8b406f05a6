"""The one worker (`_host/runtime/_worker.py`): keyed order, keys apart, keyed timers.

Each test builds a worker of its own (no state shared with the package's hub).
"""

from __future__ import annotations

import threading
import time

from jaxhist_widget._host.runtime._worker import MOST_THREADS, THREAD_WAIT_S, Worker


def test_tasks_of_one_key_run_in_order_one_at_a_time():
    worker, seen, overlap = Worker(), [], []
    running = threading.Event()

    def task(i):
        if running.is_set():
            overlap.append(i)
        running.set()
        time.sleep(0.002)
        seen.append(i)
        running.clear()

    for i in range(20):
        worker.submit("run 1", task, i)
    worker.drain("run 1")
    assert seen == list(range(20)) and not overlap


def test_a_blocked_key_does_not_stall_another_key():
    # A sink stuck on a locked file must not hold up another run's rows or the timers.
    worker, release = Worker(), threading.Event()
    worker.submit("stuck store", release.wait, 10)
    time.sleep(0.05)  # the stuck task has started (and is past the worker's patience)
    done = threading.Event()
    worker.submit("other run", done.set)
    fired = threading.Event()
    worker.later(0.01, fired.set)
    try:
        assert done.wait(2), "another key waited for the stuck one"
        assert fired.wait(2), "a timer waited for the stuck key"
        assert worker.pending("stuck store")
    finally:
        release.set()
    worker.drain("stuck store")
    assert not worker.pending("stuck store")


def test_a_key_that_just_blocked_does_not_stall_another_key_s_work_or_drain():
    # Issue 49: the worker started a thread only when work was submitted and every busy thread
    # had been on its task for 20 ms, and nothing looked again: work submitted at once after
    # a task blocked (a store's write meeting a locked file, held here at `release.wait`) sat
    # behind it, and so did a drain of its key (a plot's trailing flush, a cell's end).
    worker, release, started = Worker(), threading.Event(), threading.Event()

    def blocked() -> None:
        started.set()
        release.wait(10)

    worker.submit("locked store", blocked)
    assert started.wait(5)
    done, fired = threading.Event(), threading.Event()
    worker.submit("plot", done.set)  # within the blocked task's first milliseconds
    worker.later(0.0, fired.set, key="flush")
    drained = threading.Event()
    threading.Thread(target=lambda: (worker.drain("plot"), drained.set()), daemon=True).start()
    try:
        assert done.wait(2), "another key's work waited for the blocked one"
        assert drained.wait(2), "a drain of another key waited for the blocked one"
        assert fired.wait(2), "a timer waited for the blocked key"
        assert worker.pending("locked store")
    finally:
        release.set()
    worker.drain("locked store")


def _one_idle_thread(worker: Worker) -> None:
    """Leave ``worker`` with one thread, waiting idle for work."""
    worker.submit("warm", lambda: None)
    worker.drain("warm")
    while not worker._idle:  # it has finished its task and waits for the next
        time.sleep(0.001)


def test_keys_submitted_before_the_idle_thread_wakes_each_run_at_once():
    # Issue 56 (8): with its one thread idle, two submits for different keys before it woke
    # (here: made while holding the worker's lock, so it cannot wake between them): the second
    # wake-up was lost and no thread more started, so the second key's work and its drain
    # waited behind the first key's blocked task.
    worker, release, done = Worker(), threading.Event(), threading.Event()
    _one_idle_thread(worker)
    with worker._lock:
        worker.submit("locked store", release.wait, 10)
        worker.submit("plot", done.set)
    drained = threading.Event()
    threading.Thread(target=lambda: (worker.drain("plot"), drained.set()), daemon=True).start()
    try:
        assert done.wait(2), "the second key's work waited behind the first key's"
        assert drained.wait(2), "a drain of the second key waited behind the first key's"
    finally:
        release.set()
    worker.drain("locked store")


def test_many_keys_blocked_at_once_hold_up_none_of_the_others():
    worker, release = Worker(), threading.Event()
    _one_idle_thread(worker)
    done = [threading.Event() for _ in range(8)]
    with worker._lock:
        for i, d in enumerate(done):
            worker.submit(("stuck", i), release.wait, 10)
            worker.submit(("quick", i), d.set)
    try:
        assert all(d.wait(2) for d in done)
    finally:
        release.set()
    for i in range(8):
        worker.drain(("stuck", i))


def test_many_keys_busy_at_once_share_a_few_threads():
    # 1,500 runs filed while their loops were in flight (test_store_filing) had a thread
    # each: the submitting thread outran them, so none was idle when the next key came, and a
    # thousand threads took turns at the interpreter (a run ~70 ms, up to 260 s in all).
    worker, threads = Worker(), set()

    def task() -> None:
        threads.add(threading.get_ident())  # (no thread ends meanwhile: idents stay apart)
        time.sleep(0.01)  # (a run's filing: its rows written, committed)

    for i in range(300):
        worker.submit(("run", i), task)
    for i in range(300):
        worker.drain(("run", i))
    # a few more than MOST_THREADS where the machine held the threads up past THREAD_WAIT_S
    assert len(threads) <= 4 * MOST_THREADS, len(threads)


def test_a_key_waiting_for_a_thread_gets_one_when_every_thread_is_held_up():
    # Each thread's task waits for another key's work, which waits for a thread: a thread
    # more starts for it after THREAD_WAIT_S, else none would ever end.
    worker, freed = Worker(), threading.Event()
    for i in range(MOST_THREADS):
        worker.submit(("held", i), freed.wait, 10)
    t = time.monotonic()
    worker.submit("freeing", freed.set)
    assert freed.wait(2), "the waiting key got no thread"
    assert time.monotonic() - t >= THREAD_WAIT_S * 0.9  # (it did wait for one)
    for i in range(MOST_THREADS):
        assert worker.drain(("held", i), timeout=5)


def test_a_thread_holding_a_key_runs_as_the_key_s_next_task():
    # A run's channel: the loop's host call takes its run's turn (`holding`) after the chunks
    # queued before, and whatever is queued meanwhile waits behind it.
    worker, seen, gate = Worker(), [], threading.Event()
    worker.submit("run", gate.wait, 5)
    worker.submit("run", seen.append, "queued before")

    def call() -> None:
        with worker.holding("run"):
            seen.append("held")
            worker.submit("run", seen.append, "queued meanwhile")
            time.sleep(0.05)
            with worker.holding("run"):  # the same turn, taken again inside it
                seen.append("held still")

    thread = threading.Thread(target=call)
    thread.start()
    time.sleep(0.05)
    assert seen == []  # its turn waits for the key's earlier tasks
    gate.set()
    thread.join(5)
    worker.drain("run")
    assert seen == ["queued before", "held", "held still", "queued meanwhile"]


def test_drain_waits_for_a_keyed_timer_and_not_for_a_cancelled_one():
    worker, fired = Worker(), []
    worker.later(0.2, lambda: fired.append("flush"), key="plot")
    assert not worker.pending("plot")  # queued work only: a timer is not yet work
    t = time.perf_counter()
    worker.drain("plot")  # ... but draining the plot waits for its trailing flush
    assert fired == ["flush"] and time.perf_counter() - t >= 0.15
    timer = worker.later(5.0, lambda: fired.append("late"), key="plot")
    timer.cancel()
    t = time.perf_counter()
    worker.drain("plot")
    assert time.perf_counter() - t < 1.0 and fired == ["flush"]


def test_a_keyed_timer_runs_after_the_key_s_earlier_tasks():
    worker, seen = Worker(), []
    gate = threading.Event()
    worker.submit("plot", gate.wait, 5)
    worker.submit("plot", seen.append, "update")
    worker.later(0.0, lambda: seen.append("flush"), key="plot")
    time.sleep(0.05)
    assert seen == []  # the flush is due, but the key's tasks come first
    gate.set()
    worker.drain("plot")
    assert seen == ["update", "flush"]


def test_drain_from_the_key_s_own_task_returns_at_once():
    worker, done = Worker(), threading.Event()

    def task():
        worker.drain("k")  # would wait for itself forever
        done.set()

    worker.submit("k", task)
    assert done.wait(2)


def test_a_failing_task_is_reported_and_the_key_goes_on(recwarn):
    worker, seen = Worker(), []
    worker.submit("k", lambda: 1 / 0)
    worker.submit("k", seen.append, "next")
    worker.drain("k")
    assert seen == ["next"]
    assert any("ZeroDivisionError" in str(w.message) for w in recwarn)


def test_a_timer_not_drained_runs_as_its_key_s_task_but_a_drain_does_not_wait_for_it():
    # The hub's look at a quiet run: a task of the run's key when due, so that it never
    # crosses the run's rows, while a block's end need not wait a look's period for it.
    worker, seen, gate = Worker(), [], threading.Event()
    worker.later(0.3, lambda: seen.append("look"), key="run", drained=False)
    t = time.perf_counter()
    worker.drain("run")
    assert time.perf_counter() - t < 0.2 and seen == []
    worker.submit("run", gate.wait, 5)
    time.sleep(0.4)  # due: queued behind the key's task
    assert seen == []
    gate.set()
    worker.drain("run")
    assert seen == ["look"]
