"""`ThreadSwitch`: per-thread values set for a `with` block, nested blocks restoring the outer one."""

from __future__ import annotations

import threading

from inductor_tile.thread_switch import ThreadSwitch


def test_value_per_thread_and_nesting():
    switch = ThreadSwitch()
    seen = []
    assert switch.get() is False
    with switch.set():
        assert switch.get() is True
        with switch.set("inner"):
            assert switch.get() == "inner"
        assert switch.get() is True
        other = threading.Thread(target=lambda: seen.append(switch.get()))
        other.start()
        other.join()
    assert switch.get() is False and seen == [False]  # another thread never sees this one's value


def test_restored_after_an_exception():
    switch = ThreadSwitch(None)
    try:
        with switch.set("mm"):
            raise ValueError("inside")
    except ValueError:
        pass
    assert switch.get() is None
