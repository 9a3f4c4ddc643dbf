"""The compiled turn pass (cinqmille.solver.compiled): the keep chosen per class, the affine roll, agreement with
the brute force where the pass has its special cases, and the same bits whatever the threads or the rows."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys

import numpy as np
import pytest

import cinqmille.solver.kernel as kernel_module
from brute_force import brute_force_win
from cinqmille.rules import rules_from_dict
from cinqmille.solver import compiled, compute
from cinqmille.solver.grid import ScoreGrid
from cinqmille.solver.kernel import TurnKernel
from cinqmille.solver.keeps import TIE, backup, build_keep_graph

STANDARD = rules_from_dict({"base": "standard"})


def chosen_slots(v: np.ndarray, slot: np.ndarray, tie: float = 0.0) -> np.ndarray:
    """`compiled.choose` on the standard keep graph, one lane: the state each class's chosen keep leads to."""
    g = build_keep_graph(STANDARD)
    out = np.zeros((len(g.class_start), 1), dtype=np.int64)
    compiled.choose(v[:, None].copy(), slot, g.columns.start, tie, 1, out, np.zeros(len(out), dtype=np.int64),
                    np.zeros(1), np.zeros(1, dtype=np.int64))
    return out[:, 0]


def test_a_tie_goes_to_the_last_keep_of_its_class() -> None:
    """Keeps within the tie of the best: the last of the class (most points, then dice); without a tie, the best."""
    g = build_keep_graph(STANDARD)
    keeps = len(g.keep_units)
    slot = (np.arange(keeps) * 7) % (keeps + 1)  # the slots need not follow the keeps' order
    v = np.ones(keeps + 1)
    v[slot[g.class_start]] += 1e-13  # the first keep of each class is better, but within TIE
    last = np.append(g.class_start[1:], keeps) - 1
    assert (chosen_slots(v, slot, TIE) == slot[last]).all()
    assert (chosen_slots(v, slot) == slot[g.class_start]).all()  # no tie: the strictly best
    v[:] = 1.0
    assert (chosen_slots(v, slot) == slot[last]).all()  # an exact tie: the last


def test_affine_roll_equals_the_plain_backup_at_its_bust_value() -> None:
    """Rolling with the keeps chosen at l0 (`choose`, `weigh`) is worth, at l0, the plain backup (to 1e-12)."""
    g = build_keep_graph(STANDARD)
    rng = np.random.default_rng(5)
    keeps = len(g.keep_units)
    for _ in range(5):
        ab = rng.random((keeps, 2))  # state k: after keep k
        l0 = float(rng.random())
        v = ab[:, 0] + ab[:, 1] * l0
        chosen = chosen_slots(v, np.arange(keeps))
        plain = backup(g, v, bust=l0)
        for n in range(g.dice):
            outs = []
            for alike in (chosen.copy(), np.full(len(chosen), -1)):  # every lane alike (read whole), or gathered
                out = np.zeros((2, 1))
                compiled.weigh(ab[..., None].copy(), chosen[:, None].copy(), alike, g.columns.ptr, g.columns.cls,
                               g.columns.prob, g.columns.bust, n, 1, out)
                assert abs(out[0, 0] + out[1, 0] * l0 - plain[n]) < 1e-12
                assert out[1, 0] >= g.bust_prob[n] - 1e-12  # a bust alone weighs bust_prob on L
                outs.append(out)
            assert np.array_equal(outs[0], outs[1])


BRUTE = {
    "exact-fifty-prediction": {"goal": 300, "opening": 0, "end": "exact", "rule_of_50": True, "prediction": True},
    "reach-fifty-mandatory-prediction": {"goal": 300, "opening": 0, "rule_of_50": True, "hot_dice": "mandatory",
                                         "prediction": True},
}


@pytest.mark.parametrize("name", sorted(BRUTE))
def test_solver_equals_brute_force_with_announcements_and_the_rule_of_50(name: str) -> None:
    """Announcements, the rule of 50 (terminal states iterated under reach), exact end: every turn start to 1e-9."""
    rules = rules_from_dict(BRUTE[name], name)
    expected = brute_force_win(rules)
    result = compute(rules)
    worst = max(abs(float(result.tables[0, a // 50, b // 50]) - value) for (a, b), value in expected.items())
    assert worst <= 1e-9, f"{name}: largest difference {worst:.2e}"


def random_pass(spec: dict, p: int, seats: bool = False, seed: int = 9) -> tuple:
    """A kernel and the arguments of one pass over `p` random rows (two players, or seat vectors of three)."""
    rules = rules_from_dict(spec)
    grid = ScoreGrid.of(rules)
    rng = np.random.default_rng(seed)
    a = rng.choice(grid.scores, p)
    caps = grid.cap(a)
    order = np.argsort(-caps, kind="stable")
    a, caps = a[order], caps[order]
    if seats:
        others = rng.choice(grid.scores, (p, 2))
        w = rng.dirichlet(np.ones(3), (len(grid.scores),) * 3)[..., :2]  # by score positions
        bank = grid.seat_bank_table(a, others, int(caps.max()), w)
    else:
        w = rng.random((grid.goal, grid.goal))
        bank = grid.bank_table(a, rng.choice(grid.scores, p), int(caps.max()), w)
    return TurnKernel(rules), (a, caps, bank, rng.random(p))


PASSES = [({"base": "standard"}, False), ({"base": "standard", "rule_of_50": True, "hot_dice": "mandatory",
                                           "prediction": True}, False),
          ({"base": "standard", "end": "exact", "prediction": True}, True)]


@pytest.mark.parametrize("spec, seats", PASSES)
def test_threads_and_row_subsets_give_the_same_bits(spec: dict, seats: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass on every core, on one thread, or on a subset of its rows (copied or picked) gives each row the same
    bits."""
    kernel, (a, caps, bank, l0) = random_pass(spec, 301, seats)
    monkeypatch.setattr(kernel_module, "THREAD_WORK", 0)
    threaded = kernel.run(a, caps, bank, l0, keep_table=True)
    monkeypatch.setattr(kernel_module, "THREAD_WORK", 10**12)
    alone = kernel.run(a, caps, bank, l0, keep_table=True)
    for x, y in zip(threaded, alone):
        assert np.array_equal(x, y)
    rows = np.arange(5, 301, 7)
    part = kernel.run(a[rows], caps[rows], type(bank)(bank.a[rows], bank.b[rows]), l0[rows])
    assert np.array_equal(part[0], alone[0][rows]) and np.array_equal(part[1], alone[1][rows])
    picked = kernel.run(a, caps, bank, l0[rows], rows=rows)  # the rows read where they are
    assert np.array_equal(picked[0], alone[0][rows]) and np.array_equal(picked[1], alone[1][rows])




def test_a_threaded_pass_hands_the_compiled_code_c_contiguous_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every array a pass on several threads hands to the compiled functions is C-contiguous, as a pass on one
    thread's are (another layout would compile a second version of the pass on a machine's first run)."""
    kernel, (a, caps, bank, l0) = random_pass({"base": "standard", "rule_of_50": True}, 301)
    layouts: list[bool] = []

    def recording(real):  # type: ignore[no-untyped-def]
        def call(*args):  # type: ignore[no-untyped-def]
            arrays = [x for x in args if isinstance(x, np.ndarray)]
            arrays += [x for t in args if isinstance(t, tuple) for x in t if isinstance(x, np.ndarray)]
            layouts.extend(bool(x.flags.c_contiguous) for x in arrays)
            return real(*args)
        return call

    monkeypatch.setattr(compiled, "turn_rows", recording(compiled.turn_rows))
    monkeypatch.setattr(compiled, "terminal_rows", recording(compiled.terminal_rows))
    monkeypatch.setattr(kernel_module, "THREAD_WORK", 0)
    kernel.run(a, caps, bank, l0, keep_table=True)
    assert len(layouts) > 60 and all(layouts)


@pytest.mark.parametrize("spec, seats", PASSES)
def test_banks_read_from_the_turn_starts_give_the_bits_of_their_table(spec: dict, seats: bool) -> None:
    """A pass whose banks are read from the turn starts (`StartBanks`, what the solves use) and one over the same
    banks laid out (`StartBanks.table`, `seat_bank_table`, `bank_table`: what the policy tables use) give the same
    bits, with seat values or two players' values."""
    rules = rules_from_dict(spec)
    grid, kernel = ScoreGrid.of(rules), TurnKernel(rules)
    rng = np.random.default_rng(7)
    p = 200
    a = np.sort(rng.choice(grid.scores, p))[::-1]
    caps = grid.cap(a)
    l0 = rng.random(p)
    if seats:
        others = rng.choice(grid.scores, (p, 2))
        w = rng.dirichlet(np.ones(3), (len(grid.scores),) * 3)[..., :2]  # by score positions
        read = grid.start_banks(a, others, int(caps.max()), w)
        laid = grid.seat_bank_table(a, others, int(caps.max()), w)
    else:
        from cinqmille.solver.turns import GameModel

        model, b = GameModel(rules, kernel), rng.choice(grid.scores, p)
        w = rng.random((1, grid.goal, grid.goal))
        seat = np.zeros(p, dtype=np.int64)
        read = model.level_bank(seat, a, b, int(caps.max()), w)
        laid = model.bank(seat, a, b, int(caps.max()), w)
    table = read.table()
    assert np.array_equal(table.a[:, : laid.a.shape[1]], laid.a) and np.array_equal(table.b[:, : laid.b.shape[1]], laid.b)
    for bank in (table, laid):
        for x, y in zip(kernel.run(a, caps, read, l0, keep_table=True), kernel.run(a, caps, bank, l0, keep_table=True)):
            assert np.array_equal(x, y)


def test_two_solves_give_the_same_bits() -> None:
    """Two solves of one ruleset (three players, announcements, rule of 50) are equal bit for bit."""
    rules = rules_from_dict({"goal": 600, "opening": 0, "prediction": True, "rule_of_50": True})
    first, second = compute(rules, players=3), compute(rules, players=3)
    assert np.array_equal(first.values, second.values, equal_nan=True)
    assert np.array_equal(compute(rules).values, compute(rules).values, equal_nan=True)


def _child_pass(queue: multiprocessing.Queue) -> None:
    kernel, (a, caps, bank, l0) = random_pass({"base": "standard"}, 64)
    queue.put(float(kernel.run(a, caps, bank, l0)[0].sum()))


def test_a_forked_child_runs_passes_on_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the parent's pool has run, a forked child makes its own and gets the parent's numbers."""
    monkeypatch.setattr(kernel_module, "THREAD_WORK", 0)
    kernel, (a, caps, bank, l0) = random_pass({"base": "standard"}, 64)
    here = float(kernel.run(a, caps, bank, l0)[0].sum())
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_pass, args=(queue,))
    child.start()
    got = queue.get(timeout=120)
    child.join(timeout=60)
    assert child.exitcode == 0 and got == here


def test_the_kernel_loads_without_scipy_linalg_and_numba_keeps_its_blas() -> None:
    """A fresh process's solve does not import scipy.linalg (Numba's BLAS check is met by a stand-in that is then
    forgotten), and Numba still compiles ``np.dot`` afterwards, reading the real BLAS."""
    script = (
        "import sys, numpy as np\n"
        "from cinqmille.rules import rules_from_dict\n"
        "from cinqmille.solver import compute\n"
        "assert compute(rules_from_dict({'goal': 500, 'opening': 150})).first_player_win > 0.5\n"
        "print('linalg' if 'scipy.linalg' in sys.modules else 'no linalg')\n"
        "print('stand-in' if 'scipy.linalg.cython_blas' in sys.modules else 'forgotten')\n"
        "import numba\n"
        "dot = numba.njit(lambda x, y: np.dot(x, y))\n"
        "print(dot(np.arange(3.0), np.ones(3)), 'scipy.linalg.cython_blas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:3] == ["no linalg", "forgotten", "3.0 True"]
