"""Presses of Ctrl-C as people make them, sent as real signals to a script (`_host/interrupts/`).

The semantics under test (docs/guide/stopping.md): in one block, the first press stops the runs in
flight and keeps their results; every further press does what it would do without the package
(``KeyboardInterrupt`` by default, a real one), however fast it follows; a press while nothing
of ours runs is the previous handler's; other signals reach their owners at once; nothing stays
installed or attached, whatever happens.

Each case is a fresh ``python`` process whose step is pure XLA work (the main thread sits in one
XLA call), driven by what it prints.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from ...helpers.signals import press

pytestmark = pytest.mark.slow

#: What the children report after a block: the SIGINT handler and wakeup fd given back, no
#: sink attached or armed (`CLEAN`). Put into each child's source at its ``# CLEAN`` line.
CLEAN_SOURCE = textwrap.dedent(
    """
    def clean():
        return dict(
            handler=signal.getsignal(signal.SIGINT) is signal.default_int_handler,
            fd=signal.set_wakeup_fd(-1) == -1,
            attached=len(HUB.attached()),
            armed=len(HUB.interrupts.armed()),
        )
    """
)

CHILD = textwrap.dedent(
    """
    import faulthandler, sys, threading
    import asyncio, json, os, signal, time
    import jax, jax.numpy as jnp
    import jaxhist_widget as jhw
    from jaxhist_widget._host import HUB

    def watchdog():  # a hang shows the bridge's and the hub's state and every stack, then ends
        time.sleep(float(os.environ.get("CHILD_WATCHDOG_S", "110")))
        bridge = {k: v for k, v in vars(HUB.interrupts).items() if k != "_lock"}
        print("WATCHDOG bridge", bridge, file=sys.stderr)
        print("WATCHDOG runs", [(r.id, r.status, r.counts) for r in HUB.live_runs()],
              "sinks", [(s.running, s.stop_requested) for s in HUB.attached()], file=sys.stderr)
        faulthandler.dump_traceback(all_threads=True)
        os._exit(3)

    threading.Thread(target=watchdog, daemon=True).start()

    MODE = sys.argv[1]
    A = jax.random.normal(jax.random.key(0), (384, 384)) / 20

    def python_step(x):  # a step that calls Python on the main thread
        time.sleep(0.002)
        return x

    def body(c):
        x = jnp.tanh(A @ c[1])
        if MODE == "python":
            x = jax.pure_callback(python_step, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return c[0] + 1, x

    @jax.jit
    def solve(x, limit):
        return jhw.while_loop(lambda c: c[0] < limit, body, (jnp.int32(0), x),
                              max_steps=1_000_000, record=lambda c: jnp.mean(c[1]))

    class Announce(jhw.Recorder):
        def on_rows(self, run, lanes):
            if max(run.counts) > 20 and not getattr(run, "said", False):
                run.said = True
                print("RUNNING", len(self.runs), flush=True)

    def say(**kw):
        print("REPORT " + json.dumps(kw), flush=True)

    # CLEAN

    x0 = jnp.ones((384, 384))
    solve(x0, 3)  # compiled before any press
    rec = Announce()
    results = []
    try:
        if MODE == "sigdfl":
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            with rec:
                print("IDLE", flush=True)
                time.sleep(30)
            say(outcome="survived")
        elif MODE == "asyncio":
            loop = asyncio.new_event_loop()
            got = loop.create_future()
            loop.add_signal_handler(signal.SIGTERM, lambda: got.done() or got.set_result(1))
            with rec:
                print("IDLE", flush=True)
                t0 = time.monotonic()
                loop.run_until_complete(asyncio.wait_for(got, 5))
                say(outcome="term", seconds=time.monotonic() - t0)
        elif MODE == "stress":
            # Presses land anywhere, between blocks too. Between blocks they belong to the
            # script's own handler, which ignores them (a script that wants to survive them
            # would do the same); inside a block it raises, as the default handler does, so
            # the package must honour it as the handler it replaced.
            inside = [False]

            def own_handler(signum, frame):
                if inside[0]:
                    raise KeyboardInterrupt

            signal.signal(signal.SIGINT, own_handler)
            rng = __import__("random").Random(int(sys.argv[2]))
            for i in range(int(sys.argv[3])):
                outcome = None
                while outcome is None:
                    try:
                        inside[0] = True
                        try:
                            with Announce() as r:
                                out = solve(x0, rng.choice([30, 300, 3000]))
                            outcome = [int(out[1].length), r.runs[-1].status]
                        finally:
                            inside[0] = False
                    except KeyboardInterrupt:
                        outcome = outcome or "KeyboardInterrupt"
                results.append(outcome)
                c = clean()
                c["handler"] = signal.getsignal(signal.SIGINT) is own_handler
                assert c == dict(handler=True, fd=True, attached=0, armed=0), c
                print("DONE", i, flush=True)
            say(outcome="stress", results=results)
        else:  # one block, a sweep of runs in it
            with rec:
                for i in range(5):
                    final, hist = solve(x0, 1_000_000)
                    results.append([int(hist.length), rec.runs[-1].status])
            say(outcome="returned", results=results, **clean())
    except KeyboardInterrupt:
        say(outcome="KeyboardInterrupt", results=results,
            statuses=[r.status for r in rec.runs], **clean())
    except BaseException as e:
        say(outcome=type(e).__name__, error=str(e)[:300], results=results)
    """
).replace("# CLEAN", CLEAN_SOURCE)


def drive(mode: str, on_line, *args: str, timeout: float = 150) -> tuple[dict, int, str]:
    """Run the child; call ``on_line(proc, line)`` for each line it prints; its report,
    return code and stderr."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    killer = threading.Timer(timeout, proc.kill)  # a run that never ends fails, not hangs
    killer.start()
    report: dict = {}
    try:
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.startswith("REPORT "):
                report = json.loads(line.removeprefix("REPORT "))
                report["at"] = time.monotonic()
            else:
                on_line(proc, line.rstrip())
        proc.wait()
    finally:
        killer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return report, proc.returncode, proc.stderr.read()  # type: ignore[union-attr]


def presses_at_first_run(*gaps: float):
    """An ``on_line`` that presses Ctrl-C once the first run is under way, then after each
    gap (seconds) again."""
    sent = {}

    def on_line(proc, line):
        if line == "RUNNING 1" and not sent:
            time.sleep(0.3)
            sent["at"] = time.monotonic()
            press(proc)
            for gap in gaps:
                time.sleep(gap)
                press(proc)

    return on_line, sent


CLEAN = {"handler": True, "fd": True, "attached": 0, "armed": 0}


@pytest.mark.parametrize("gap", [0.001, 0.005, 0.01])
@pytest.mark.parametrize("step", ["xla", "python"])
def test_two_quick_presses_raise_a_real_keyboard_interrupt(gap, step):
    on_line, sent = presses_at_first_run(gap)
    report, rc, err = drive(step, on_line)
    assert report.get("outcome") == "KeyboardInterrupt", (rc, report, err[-4000:])
    # The second press aborted the run it met: the first run, or (when the first press's stop
    # landed within the gap and the sweep went on) the next, the first one's result kept. Runs
    # the sweep starts before the exception reaches plain Python stop at their first flush.
    results = report["results"]
    assert set(report["statuses"]) == {"stopped"}, report
    assert all(length < 50 for length, _ in results[1:]), report
    assert report["at"] - sent["at"] < 10, "the abort waited for the run to end"
    assert {k: report[k] for k in CLEAN} == CLEAN


@pytest.mark.parametrize("step", ["xla", "python"])
def test_a_second_press_later_in_the_run_aborts(step):
    on_line, sent = presses_at_first_run(0.1)
    report, _rc, err = drive(step, on_line)
    assert report.get("outcome") == "KeyboardInterrupt", (report, err[-2000:])
    assert report["at"] - sent["at"] < 10


def test_in_a_sweep_one_press_stops_a_run_and_the_next_leaves_the_sweep():
    presses = []

    def on_line(proc, line):
        if line.startswith("RUNNING") and len(presses) < 2:
            time.sleep(0.3)
            presses.append(line)
            press(proc)

    report, _rc, err = drive("xla", on_line)
    assert presses == ["RUNNING 1", "RUNNING 2"], (presses, err[-2000:])
    assert report.get("outcome") == "KeyboardInterrupt", (report, err[-2000:])
    # run 1 stopped with its result kept; run 2 was aborted by the second press
    assert len(report["results"]) == 1 and report["results"][0][1] == "stopped"
    assert report["statuses"][0] == "stopped"
    assert {k: report[k] for k in CLEAN} == CLEAN


def test_sig_dfl_is_honoured_while_a_sink_is_attached():
    def on_line(proc, line):
        if line == "IDLE":
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)

    report, rc, err = drive("sigdfl", on_line)
    assert rc == -signal.SIGINT, (rc, report, err[-2000:])  # ended by the signal, as without us


def test_other_signals_reach_their_owner_at_once_while_no_run_is_in_flight():
    def on_line(proc, line):
        if line == "IDLE":
            time.sleep(0.3)
            proc.send_signal(signal.SIGTERM)

    report, _rc, err = drive("asyncio", on_line)
    assert report.get("outcome") == "term", (report, err[-2000:])
    assert report["seconds"] < 1.5, report  # the bytes are passed on within ~20 ms


def test_presses_at_random_moments_keep_every_invariant():
    # Over many runs of varied length, presses come at random moments (inside runs, between
    # them, while blocks are entered and left). Whatever each press met, the child checks after
    # every block that nothing stays installed or attached; each run either returned (its
    # result kept) or ended in a plain KeyboardInterrupt (never an XLA-wrapped one).
    seed = random.randrange(1 << 16)
    rng = random.Random(seed)
    stop = threading.Event()

    def presser(proc):
        while not stop.is_set() and proc.poll() is None:
            time.sleep(rng.uniform(0.005, 0.4))
            if rng.random() < 0.3:  # now and then a burst
                press(proc)
                time.sleep(rng.uniform(0.001, 0.01))
            press(proc)

    started = {}

    def on_line(proc, line):
        if line.startswith("DONE") and not started:
            started["t"] = threading.Thread(target=presser, args=(proc,), daemon=True)
            started["t"].start()

    try:
        report, rc, err = drive("stress", on_line, str(seed), "120", timeout=280)
    finally:
        stop.set()
    if report.get("outcome") != "stress":  # the whole of the child's stderr (a hang's stacks)
        print(f"seed {seed}, return code {rc}, the child's stderr:\n{err}", file=sys.stderr)
    assert report.get("outcome") == "stress", (seed, rc, report, err[-3000:])
    outcomes = report["results"]
    assert len(outcomes) == 120
    interrupted = [o for o in outcomes if o == "KeyboardInterrupt"]
    returned = [o for o in outcomes if o != "KeyboardInterrupt"]
    assert interrupted and returned, (seed, outcomes)  # the presses met both kinds of moment
    assert {status for _, status in returned} <= {"converged", "stopped"}, (seed, outcomes)


EDGE_CHILD = textwrap.dedent(
    """
    import json, signal, sys
    import jaxhist_widget as jhw
    from jaxhist_widget._host import HUB
    from jaxhist_widget._host.sinks._sink import Sink

    where = sys.argv[1]
    # The press lands as the block's __exit__ starts (before its shielded section), or as
    # __enter__ returns (after it): a profile hook raises SIGINT there; CPython runs the
    # Python handler at the next bytecode boundary that checks for one, inside that method.
    code = (Sink.__enter__ if where == "enter" else Sink.__exit__).__code__
    event = "return" if where == "enter" else "call"
    fired = []

    def hook(frame, what, arg):
        if frame.f_code is code and what == event and not fired:
            fired.append(frame.f_locals["self"])
            signal.raise_signal(signal.SIGINT)

    # CLEAN

    outer, inner = jhw.Recorder(), jhw.Recorder()
    outcome = "returned"
    try:
        if where == "nested exit":  # the inner block's exit: the outer one stays armed
            with outer:
                with inner:
                    sys.setprofile(hook)
                    body = 1
        else:
            sys.setprofile(hook)
            with inner:
                body = 1
    except KeyboardInterrupt:
        outcome = "KeyboardInterrupt"
    finally:
        sys.setprofile(None)
    print(json.dumps(dict(outcome=outcome, pressed=len(fired), **clean())))
    """
).replace("# CLEAN", CLEAN_SOURCE)


@pytest.mark.parametrize("where", ["exit", "enter", "nested exit"])
def test_a_press_as_a_block_is_entered_or_left_leaves_nothing_behind(where):
    # A press outside the shielded section of __enter__ / __exit__ (a burst in a hurry meets
    # one sooner or later) was raised there: __enter__ left before the block was entered, or
    # __exit__ before it detached, so nothing ever detached: the sink stayed attached and
    # armed, the handler and the wakeup fd installed. It is raised once the block is left.
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    out = subprocess.run(
        [sys.executable, "-c", EDGE_CHILD, where],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["pressed"] == 1, report
    assert report["outcome"] == "KeyboardInterrupt", report  # the press is not lost
    assert {k: report[k] for k in CLEAN} == CLEAN, report
