"""The interrupt bridge's own rules (`_host/interrupts/_sigint.py`, `InterruptBridge`), each
checked in this process with a bridge of its own: what its handler does when a second press
lands inside it, how it knows it is inside a host callback, and that a call of it with no press
behind it (a retried press's) counts no press.

The presses of real users (signals to real scripts, real kernels) are in test_presses.py and
test_interrupt.py.
"""

from __future__ import annotations

import _thread
import signal
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxhist_widget._host.interrupts._sigint import InterruptBridge
from jaxhist_widget._host.interrupts._sigint_wakeup import let_pending_handlers_run
from jaxhist_widget._host.runtime._worker import Worker


class Sink:
    """The least the bridge asks of a sink."""

    running = True
    stop_requested = False

    def __init__(self) -> None:
        self.stops = 0

    def stop(self) -> None:
        self.stops += 1


def test_a_second_press_inside_the_handler_does_not_enter_it_again(monkeypatch):
    # Issue 33: the handler's critical section is under a reentrant lock, and a handler runs
    # between any two bytecodes of the main thread: a second press landing inside the first
    # one's bookkeeping went through it again, halfway through.
    sink = Sink()
    bridge = InterruptBridge(lambda abort: bool(sink.stop()) or True, Worker())
    token = bridge.arm(sink)
    assert token is not None
    depth, deepest, retried = [0], [0], []
    account = bridge._account

    def second_press_lands_here():
        depth[0] += 1
        deepest[0] = max(deepest[0], depth[0])
        try:
            if depth[0] == 1:
                bridge._on_sigint(signal.SIGINT, sys._getframe())  # the second press
            return account()
        finally:
            depth[0] -= 1

    monkeypatch.setattr(bridge, "_account", second_press_lands_here)
    monkeypatch.setattr(bridge, "_retry_later", lambda: retried.append(True))
    try:
        bridge._on_sigint(signal.SIGINT, sys._getframe())
    finally:
        monkeypatch.setattr(bridge, "_account", account)
        bridge.disarm(token)
    assert deepest[0] == 1, "the second press re-entered the handler's critical section"
    assert retried == [True]  # ... it is asked again once the first one is done


def test_the_hub_s_host_calls_are_marked_as_callbacks():
    # Issue 33: "inside a callback" was told by file names (renaming a module changed what
    # Ctrl-C does). The hub marks its own calls; JAX's callback code is known by identity.
    bridge = InterruptBridge(lambda abort: False, Worker())
    assert not bridge._in_callback(sys._getframe())
    with bridge.host_call():
        assert bridge._in_callback(None)
    assert not bridge._in_callback(None)

    seen = []

    def inside(x):
        seen.append(bridge._in_callback(sys._getframe()))
        return x

    jax.block_until_ready(
        jax.jit(lambda x: jax.pure_callback(inside, jax.ShapeDtypeStruct((), jnp.float32), x))(
            np.float32(1)
        )
    )

    def debug(x):
        jax.debug.callback(lambda x: seen.append(bridge._in_callback(sys._getframe())), x)
        return x

    jax.block_until_ready(jax.jit(debug)(1.0))
    jax.effects_barrier()
    assert seen == [True, True]


def test_a_handler_call_with_no_press_behind_it_is_no_press():
    # A press retried from a host callback (`_retry_later`) is simulated: its byte is owed and
    # skipped, and it trips the handler once more. Should that byte be read, and the press it
    # retried settled, before the handler runs, the handler's call has no press behind it. It
    # used to count as a press whose byte was yet to come: a phantom second press, and one real
    # press raised KeyboardInterrupt (and the phantom's owed byte swallowed the next press).
    sink = Sink()
    bridge = InterruptBridge(lambda abort: bool(sink.stop()) or True, Worker())
    token = bridge.arm(sink)
    assert token is not None
    try:
        signal.raise_signal(signal.SIGINT)  # one real press: it stops the runs
        assert (bridge._presses, sink.stops) == (1, 1)
        with bridge.shielded():  # the simulated press lands here; its byte is read at the end
            bridge._owed += 1
            _thread.interrupt_main(signal.SIGINT)
            let_pending_handlers_run()
        bridge._on_sigint(signal.SIGINT, sys._getframe())  # ... and a late call of it, alone
    except KeyboardInterrupt:
        pytest.fail("one press raised KeyboardInterrupt: a handler call was taken for a press")
    finally:
        bridge.disarm(token)
    assert (bridge._presses, bridge._owed, sink.stops) == (1, 0, 1)
    assert bridge.stops == 1
