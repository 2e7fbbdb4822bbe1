"""The collector's pace for a matrix run: set inside the block, restored after it, also when the block raises."""

from __future__ import annotations

import gc

import pytest

from harness.runner import gc_pace


def test_paced_sets_the_young_threshold_and_restores_it() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with gc_pace.paced():
            assert gc.get_threshold() == (gc_pace.YOUNG, 10, 10)
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_paced_never_lowers_a_higher_threshold() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(gc_pace.YOUNG * 5, 3, 4)
        with gc_pace.paced():
            assert gc.get_threshold() == (gc_pace.YOUNG * 5, 3, 4)
    finally:
        gc.set_threshold(*before)


def test_paced_restores_the_threshold_when_the_block_raises() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError, match="boom"), gc_pace.paced():
        assert gc.get_threshold()[0] >= gc_pace.YOUNG
        raise RuntimeError("boom")
    assert gc.get_threshold() == before


def test_a_matrix_run_is_paced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Engine.run runs inside `paced` (the tail of writers included), so a run at -j 1 and the parent pay for
    fewer full collections."""
    from harness.runner import engine

    seen: list[tuple[int, int, int]] = []
    monkeypatch.setattr(engine.Engine, "_run", lambda self: seen.append(gc.get_threshold()))
    before = gc.get_threshold()
    engine.Engine.run(object.__new__(engine.Engine))
    assert seen and seen[0][0] >= gc_pace.YOUNG
    assert gc.get_threshold() == before


def test_what_the_parent_receives_is_unpickled_with_the_collector_held_then_kept_out_of_its_reach() -> None:
    """`received` unpickles with the collector off (it was most of the parent's CPU) and then freezes all that is
    tracked: the collector no longer traverses the cases the parent holds. `keeping` gives them back afterwards,
    also when its block raises; the collector's on/off state is the caller's again."""
    import pickle

    blob = pickle.dumps([{"case": i, "runs": [[i]]} for i in range(1000)])
    seen: list[bool] = []

    def unpickle() -> list[dict[str, object]]:
        seen.append(gc.isenabled())
        value: list[dict[str, object]] = pickle.loads(blob)
        return value

    assert gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError, match="boom"), gc_pace.keeping():
        value = gc_pace.received(unpickle)
        assert seen == [False] and gc.isenabled()
        assert value[999] == {"case": 999, "runs": [[999]]}
        assert gc.get_freeze_count() >= 3000  # the received lists and dicts among them
        assert not any(obj is value for obj in gc.get_objects())  # no generation holds it now
        raise RuntimeError("boom")
    assert gc.get_freeze_count() == 0
    assert any(obj is value for obj in gc.get_objects())
    gc.disable()
    try:
        with gc_pace.keeping():
            gc_pace.received(unpickle)
            assert not gc.isenabled()  # held by the caller: not switched on
    finally:
        gc.enable()
