"""One solved policy, read by everyone: the solver's table, `advise`, play's bot, the engine policy `optimal`
and the simulator's `OptimalVec` take the same decision in every state; optimal self-play wins as often as solved."""

from __future__ import annotations

import numpy as np
import pytest

from cinqmille.table.locate import offer_options
from cinqmille.table.policy import policy_of
from cinqmille.app.advice import advise
from cinqmille.dice import dice_tables, faces_of
from cinqmille.dice.scoring import Keep
from cinqmille.engine import Game, GameView, new_player
from cinqmille.engine.judge import bank_outcome
from cinqmille.engine.state import LastRound, TakeOverOffer
from cinqmille.app.play import bot_policy, view_advice, view_position
from cinqmille.policies import parse_policy
from cinqmille.policies.optimal import OptimalPolicy
from cinqmille.table.position import Position, PositionError
from cinqmille.rules import Rules, rules_from_dict
from cinqmille.simulation import SimConfig, simulate
from cinqmille.simulation.stats import std_error
from cinqmille.simulation.vecpolicies import OptimalVec
from cinqmille.solver import SolveResult, solve
from cinqmille.table.locate import locate_rows
from turn_table import turn_table

pytestmark = pytest.mark.usefixtures("session_cache")

UNIT = 50

#: Small rulesets (each solves in a second or two) with every piece of extra state the policy reads;
#: the others are `standard`'s (opening 750).
SMALL = {
    "last_round": {"name": "one-lr", "goal": 1000, "last_round": True},
    "take_over": {"name": "one-take", "goal": 1200, "opening": 300, "take_over": True},
    "prediction": {"name": "one-pred", "goal": 1000, "opening": 300, "prediction": True},
    "prediction+exact": {"name": "one-pred-exact", "goal": 1500, "opening": 300, "prediction": True, "end": "exact"},
    "rule_of_50+last_round": {"name": "one-lr50", "goal": 1000, "last_round": True, "rule_of_50": True},
    "exact+last_round+take_over": {"name": "one-sheet", "goal": 1000, "opening": 300, "end": "exact",
                                   "last_round": True, "take_over": True},
}


class Explorer:
    """A player that records every question the referee asks, with the answers of the engine policy `optimal`
    and of play's bot, and plays the optimal answer, or now and then a random one to reach other states.

    Announcements always follow the optimal one, so that the players' memory of their own announcement (a
    right one doubles the keep that follows) stays true.
    """

    def __init__(self, rules: Rules, result: SolveResult, rng: np.random.Generator, wander: float):
        self.rules, self.rng, self.wander = rules, rng, wander
        self.optimal = parse_policy("optimal", rules)
        self.bot = bot_policy(result)
        self.states: list[dict] = []
        self._announced: dict[int, tuple[int, int]] = {}

    def _record(self, kind: str, view: GameView, answers: tuple, **extra: object) -> None:
        assert answers[0] == answers[1], f"engine policy {answers[0]!r} and bot {answers[1]!r} differ ({kind})"
        self.states.append({"kind": kind, "view": view, "answer": answers[0], **extra})

    def _wanders(self) -> bool:
        return bool(self.rng.random() < self.wander)

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> int:
        doubled = self._announced.pop(view.seat, None) == (view.turn_number, view.turn_points)
        answers = (self.optimal.choose_keep(view, keeps), self.bot.choose_keep(view, keeps))
        self._record("keep", view, (outcome(self.rules, view, keeps[answers[0]]),
                                    outcome(self.rules, view, keeps[answers[1]])), keeps=keeps, doubled=doubled)
        return int(self.rng.integers(len(keeps))) if self._wanders() else answers[0]

    def should_bank(self, view: GameView) -> bool:
        answers = (self.optimal.should_bank(view), self.bot.should_bank(view))
        self._record("bank", view, answers)
        return (not answers[0]) if self._wanders() else answers[0]

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        answers = (self.optimal.should_take_over(view, offer), self.bot.should_take_over(view, offer))
        self._record("take_over", view, answers, offer=offer)
        return (not answers[0]) if self._wanders() else answers[0]

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        answers = (self.optimal.predict(view, choices), self.bot.predict(view, choices))
        self._record("predict", view, tuple(a or 0 for a in answers))
        if answers[0] is not None:
            self._announced[view.seat] = (view.turn_number, view.turn_points)
        return answers[0]


def outcome(rules: Rules, view: GameView, keep: Keep) -> tuple[int, int, bool]:
    """What a keep does to the turn: (points in units, dice in hand after, instant win); a win is only a win."""
    if keep.win:
        return (0, 0, True)
    return (keep.points // UNIT, (view.dice_in_hand - keep.size) or rules.dice, False)


def explore(rules: Rules, result: SolveResult, games: int, seed: int, wander: float = 0.25) -> list[dict]:
    """The questions of `games` two-player games between explorers."""
    rng = np.random.default_rng(seed)
    states: list[dict] = []
    for _ in range(games):
        players = [Explorer(rules, result, rng, wander), Explorer(rules, result, rng, wander)]
        Game(rules, players, rng=rng).play()
        states += players[0].states + players[1].states
    return states


def roll_classes(vec: OptimalVec) -> dict[tuple[int, frozenset], int]:
    """The simulator's roll class of every roll: (dice rolled, its keep outcomes) -> class."""
    g, mod = vec.model.graph, vec.model
    ends = np.append(g.class_start[1:], len(g.keep_units))
    out = {}
    for c, (lo, hi) in enumerate(zip(g.class_start, ends)):
        key = frozenset((0, 0, True) if g.keep_win[k] else (int(g.keep_units[k]), int(g.keep_next[k]), False)
                        for k in range(lo, hi))
        out[(int(mod.class_dice[c]), key)] = c
    return out


def class_of(rules: Rules, classes: dict, view: GameView) -> int:
    """The roll class of the roll in `view`."""
    table = dice_tables(rules)[view.dice_in_hand]
    ks = table.keeps_of(table.roll_index(view.roll))
    key = frozenset((0, 0, True) if table.keep_win[k] else
                    (int(table.keep_points[k]) // UNIT, int(table.keep_left[k]) or rules.dice, False) for k in ks)
    return classes[(view.dice_in_hand, key)]


def first_best(options: list[tuple[float, object]]) -> object:
    """The answer of the first option with the largest value (options listed in tie-break order)."""
    top = max(v for v, _ in options)
    return next(a for v, a in options if v == top)


def solver_answer(rules: Rules, result: SolveResult, state: dict) -> object:
    """The decision read from the solver's turn table, with the tie-break of RULES.md section 8 written here again;
    where the solver's own answers (`advise`, `offer_options`) apply, they must agree."""
    view, kind = state["view"], state["kind"]
    if kind == "take_over":
        offer = state["offer"]
        position = view_position(result, view, (offer.points, offer.dice))
        table = turn_table(result, position)
        pick = first_best([(table.at(0, rules.dice), False),
                           (float(table.roll[table._row(offer.points // UNIT), offer.dice - 1]), True)])
        return pick if (offer_options(result, position)[0].action == "take_over") == pick else "differ"
    position = view_position(result, view)
    table = turn_table(result, position)
    t = view.turn_points // UNIT
    row = table._row(t)
    if kind == "bank":
        pick = first_best([(float(table.bank[row, view.dice_in_hand - 1]), True),
                           (float(table.roll[row, view.dice_in_hand - 1]), False)])
        return pick if (advise(result, position).options[0].action == "bank") == pick else "differ"
    if kind == "predict":
        assert table.plain_roll is not None and table.predict is not None
        options = [(float(table.plain_roll[row, 1]), 0)]
        options += [(float(v), c) for v, c in zip(table.predict[row], table.choices)]
        return first_best(options)
    # a keep: the best value, then an instant win, more points, more dice in hand (after a right announcement
    # the keeps double the turn points)
    factor = 2 if state["doubled"] else 1
    options = []
    for keep in state["keeps"]:
        u, left, win = outcome(rules, view, keep)
        value = 1.0 if win else table.at(factor * (t + u), left)
        options.append(((-value, not win, -u, -left), (u, left, win)))
    pick = min(options)[1]
    if not state["doubled"] and in_advice(rules, view):
        best = advise(result, position, roll=faces_of(view.roll)).options[0]
        theirs = (0, 0, True) if best.then == "win" else \
            ((best.points or 0) // UNIT, (view.dice_in_hand - len(best.keep or ())) or rules.dice, False)
        return pick if theirs == pick else "differ"
    return pick


def in_advice(rules: Rules, view: GameView) -> bool:
    """Whether `advise` takes the position (not after taking over past an exact goal)."""
    return not (rules.end == "exact" and view.score + view.turn_points > rules.goal)


def advise_answer(rules: Rules, result: SolveResult, state: dict) -> object | None:
    """The decision `advise` recommends (None where it has no question: a keep after a right announcement)."""
    view, kind = state["view"], state["kind"]
    if kind == "take_over":
        offer = state["offer"]
        return advise(result, view_position(result, view, (offer.points, offer.dice))).best.action == "take_over"
    if kind == "bank":
        return view_advice(result, view).best.action == "bank"
    if kind == "predict":
        rolling = next(o for o in view_advice(result, view).options if o.action != "bank")
        return rolling.points if rolling.action == "predict" else 0
    if state["doubled"] or not in_advice(rules, view):
        return None
    best = view_advice(result, view).best
    if best.then == "win":
        return (0, 0, True)
    return (best.points // UNIT, best.dice, False) if best.then in ("bank", "roll") else \
        (best.points // UNIT, (view.dice_in_hand - len(best.keep)) or rules.dice, False)


def vector_answers(rules: Rules, vec: OptimalVec, states: list[dict]) -> list[object]:
    """The decisions of the vectorised `OptimalVec`, asked once per kind of question for all states at once."""
    table = vec.table
    classes = roll_classes(vec)
    out: list[object] = [None] * len(states)
    for kind in ("keep", "bank", "take_over", "predict"):
        for last in (False, True):
            idx = [i for i, s in enumerate(states) if s["kind"] == kind and (s["view"].last_round is not None) == last]
            if not idx:
                continue
            views = [states[i]["view"] for i in idx]
            a = np.array([v.score // UNIT for v in views])
            b = np.array([max(x for j, x in enumerate(v.scores) if j != v.seat) // UNIT for v in views])
            seat = np.array([0 if v.seat == 0 else 1 for v in views])
            t = np.array([v.turn_points // UNIT for v in views])
            m = np.array([v.dice_in_hand for v in views])
            target = np.array([v.last_round.target // UNIT for v in views]) if last else None
            pid = np.zeros(len(idx), dtype=np.int64) if last else locate_rows(table, a, b, kinds=seat)
            if kind == "keep":
                c = np.array([class_of(rules, classes, v) for v in views])
                doubled = np.array([states[i]["doubled"] for i in idx])
                k = vec.keep(pid, a, t, c, target=target, doubled=doubled)
                mod = vec.model
                answers = [(0, 0, True) if mod.win[j] else (int(mod.units[j]), int(mod.next[j]), False) for j in k]
            elif kind == "bank":
                answers = [bool(x) for x in vec.bank(pid, a, b, t, m, target=target)]
            elif kind == "take_over":
                offers = [states[i]["offer"] for i in idx]
                answers = [bool(x) for x in vec.take_over(pid, a, np.array([o.points // UNIT for o in offers]),
                                                          np.array([o.dice for o in offers]), target=target)]
            else:
                answers = [int(x) for x in vec.announce(pid, a, t, target=target)]
            for i, ans in zip(idx, answers):
                out[i] = ans
    return out


@pytest.mark.parametrize("name", list(SMALL))
def test_every_reader_takes_the_same_decision(name: str) -> None:
    """In thousands of states reached in play, the solver's table, advise, play's bot, the engine policy and OptimalVec agree."""
    rules = rules_from_dict(SMALL[name])
    result = solve(rules, "win")
    assert result.exact
    states = explore(rules, result, games=100, seed=7)
    vec = OptimalVec(rules)
    vector = vector_answers(rules, vec, states)
    kinds: dict[str, int] = {}
    for state, from_vec in zip(states, vector):
        expected = state["answer"]  # the engine policy's, equal to the bot's (checked while recording)
        assert solver_answer(rules, result, state) == expected, state
        from_advice = advise_answer(rules, result, state)
        assert from_advice is None or from_advice == expected, state
        assert from_vec == expected, state
        if state["kind"] == "bank" and state["view"].last_round is not None:
            # a bank on the last turn is worth 1 exactly when the referee would give it the victory, else 0
            view = state["view"]
            judged = bank_outcome(rules, view.score, view.turn_points)
            target = view.last_round.target
            wins = judged.kind == "scored" and (judged.score == rules.goal if rules.end == "exact"
                                                else judged.score > target)
            bank = next(o.win for o in view_advice(result, view).options if o.action == "bank")
            assert bank == (1.0 if wins else 0.0), state
        label = state["kind"] + (" (last turn)" if state["view"].last_round is not None else "") + \
            (" (doubled)" if state.get("doubled") else "")
        kinds[label] = kinds.get(label, 0) + 1
    assert len(states) >= 1700, kinds  # six rulesets: more than 10,000 states in all
    seats = {s["view"].seat for s in states}
    assert seats == {0, 1}
    if rules.last_round:
        assert kinds.get("keep (last turn)", 0) > 10 and kinds.get("bank (last turn)", 0) > 5, kinds
    if rules.take_over:
        assert kinds.get("take_over", 0) > 20, kinds
        assert any(s["answer"] for s in states if s["kind"] == "take_over"), "no offer was worth taking over"
    if rules.prediction:
        announced = [s for s in states if s["kind"] == "predict" and s["answer"]]
        assert kinds.get("predict", 0) > 100 and announced, kinds
        assert kinds.get("keep (doubled)", 0) > 5, kinds


def test_rule_of_50_last_turn_banks_no_fault() -> None:
    """In a last turn at 900 against 1100 (standard, goal 1000, last round, rule of 50) a bank to 1450, 1750 or 1850
    is a fault: the solver, advise, the bot and the engine policy all roll; a bank to 1800 wins and all bank."""
    rules = rules_from_dict(SMALL["rule_of_50+last_round"])
    result = solve(rules, "win")
    engine, bot = OptimalPolicy(rules), bot_policy(result)
    players = (new_player(rules, [1100]), new_player(rules, [900]))
    for turn, faulty in ((550, True), (850, True), (950, True), (900, False)):
        assert (bank_outcome(rules, 900, turn).kind == "fault") == faulty  # what the referee makes of the bank
        for dice in (1, 2, 3):
            advice = advise(result, Position(900, 0, turn, dice, target=1100))
            values = {o.action: o.win for o in advice.options}
            assert values["bank"] == (0.0 if faulty else 1.0)
            assert 0.0 < values["roll"] < 1.0
            view = GameView(rules, 1, players, turn, dice, None, True, False, False, True, LastRound(0, 0, 1100, 1), 5)
            assert advice.best.action == ("roll" if faulty else "bank")
            assert engine.should_bank(view) is (not faulty) and bot.should_bank(view) is (not faulty)


def test_a_tied_take_over_is_the_solves_for_everyone() -> None:
    """Where taking over is worth as much as a fresh start by the table's values, the table, advise, the bot, the
    engine policy and OptimalVec all take the solve's decision (its offers took over where rolling beat a fresh
    start, to the last bit of its own pass: ``offers > W``)."""
    rules = rules_from_dict(SMALL["take_over"])
    result = solve(rules, "win")
    table = policy_of(result)
    assert result.offers is not None
    vec = OptimalVec(rules)
    engine, bot = OptimalPolicy(rules), bot_policy(result)
    ties = 0
    for me in range(300, rules.goal, 50):
        for opp in [0] + list(range(300, rules.goal, 50)):
            r = int(locate_rows(table, me // UNIT, opp // UNIT))
            fresh = table.value(r, 0, rules.dice)
            for points in range(50, rules.goal, 50):
                for dice in range(1, rules.dice + 1):
                    if table.roll(r, points // UNIT, dice) != fresh or not offer_occurs(rules, me, opp, points, dice):
                        continue
                    ties += 1
                    solve_takes = bool(result.offers[0, me // UNIT, opp // UNIT, points // UNIT, dice - 1]
                                       > result.tables[0, me // UNIT, opp // UNIT])
                    action = "take_over" if solve_takes else "start"
                    offer = TakeOverOffer(1, points, dice)
                    view = GameView(rules, 0, (new_player(rules, [me]), new_player(rules, [opp] if opp else [])),
                                    0, rules.dice, None, False, False, False, False, None, 6)
                    position = Position(me, opp, offer=(points, dice))
                    assert advise(result, position).best.action == action
                    assert offer_options(result, position)[0].action == action
                    assert engine.should_take_over(view, offer) == solve_takes == bot.should_take_over(view, offer)
                    assert vec.take_over(np.array([r]), np.array([me // UNIT]), np.array([points // UNIT]),
                                         np.array([dice]))[0] == solve_takes
    assert ties > 5


def offer_occurs(rules: Rules, me: int, opp: int, points: int, dice: int) -> bool:
    """Whether the opponent (now on `opp`) can have just banked `points` with `dice` left (`Position.validate`)."""
    try:
        Position(me, opp, offer=(points, dice)).validate(rules)
    except PositionError:
        return False
    return True


def test_a_right_announcement_doubles_the_keep_that_follows() -> None:
    """Where doubling the turn points changes the best keep (past an exact goal), the engine policy (which announced)
    and OptimalVec keep as the doubled turn table says, and not as the plain one."""
    rules = rules_from_dict(SMALL["prediction+exact"])
    result = solve(rules, "win")
    vec = OptimalVec(rules)
    classes = roll_classes(vec)
    tables = dice_tables(rules)[2]
    found = 0
    for me in range(300, rules.goal, 100):
        for turn in range(50, rules.goal - me, 50):
            players = (new_player(rules, [me]), new_player(rules, [450]))
            ask = GameView(rules, 0, players, turn, 2, None, True, False, False, False, None, 4)
            policy = OptimalPolicy(rules)
            if policy.predict(ask, (50, 100, 150, 200)) is None:
                continue
            table = turn_table(result, Position(me, 450))
            for r in range(len(tables.ways)):
                counts = tuple(int(c) for c in tables.counts[r])
                keeps = tuple(k for k in legal_keeps_of(rules, counts))
                if len(keeps) < 2:
                    continue
                view = GameView(rules, 0, players, turn, 2, counts, True, False, False, False, None, 4)
                pick = {}
                for factor in (1, 2):
                    options = []
                    for keep in keeps:
                        u, left, win = outcome(rules, view, keep)
                        value = 1.0 if win else table.at(factor * (turn // UNIT + u), left)
                        options.append(((-value, not win, -u, -left), (u, left, win)))
                    pick[factor] = min(options)[1]
                if pick[1] == pick[2]:
                    continue
                policy._announced[0] = (4, turn)  # as after its own announcement above
                chosen = outcome(rules, view, keeps[policy.choose_keep(view, keeps)])
                c = class_of(rules, classes, view)
                k = int(vec.keep(np.array([table_row(vec, me, 450)]), np.array([me // UNIT]), np.array([turn // UNIT]),
                                 np.array([c]), doubled=np.array([True]))[0])
                mod = vec.model
                from_vec = (0, 0, True) if mod.win[k] else (int(mod.units[k]), int(mod.next[k]), False)
                assert chosen == pick[2] and from_vec == pick[2], (me, turn, counts)
                found += 1
    assert found > 5


def legal_keeps_of(rules: Rules, counts: tuple[int, ...]) -> tuple[Keep, ...]:
    """The referee's legal keeps of a roll."""
    from cinqmille.engine.judge import keep_lookup

    return keep_lookup(rules)[counts]


def table_row(vec: OptimalVec, me: int, opp: int) -> int:
    """The row of a score pair (points) in the simulator's table."""
    return int(locate_rows(vec.table, me // UNIT, opp // UNIT))


def test_the_policy_announces_where_the_solver_says_it_pays() -> None:
    """Under prediction the engine policy announces in some states and not in others, as the turn tables say."""
    rules = rules_from_dict(SMALL["prediction"])
    result = solve(rules, "win")
    policy = OptimalPolicy(rules)
    announced = plain = 0
    for me in range(300, 1000, 100):
        for turn in range(50, 600, 50):
            players = (new_player(rules, [me]), new_player(rules, [500]))
            view = GameView(rules, 0, players, turn, 2, None, True, False, False, False, None, 2)
            table = turn_table(result, Position(me, 500))
            row = table._row(turn // UNIT)
            pays = table.predict is not None and table.predict[row].max() > table.plain_roll[row, 1]
            said = policy.predict(view, (50, 100, 150, 200))
            assert (said is not None) == pays
            announced += said is not None
            plain += said is None
    assert announced > 0 and plain > 0


# -- optimal against optimal through the referee ---------------------------------------------------
SLOW = {
    "standard+last_round+rule_of_50": ({"base": "standard", "last_round": True, "rule_of_50": True}, 20_000),
    "standard+prediction": ({"base": "standard", "prediction": True}, 20_000),
    "standard+take_over": ({"base": "standard", "take_over": True}, 20_000),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SLOW))
def test_referee_self_play_matches_the_solved_chance(name: str, tmp_path, monkeypatch) -> None:
    """Optimal against optimal through the referee wins as often as the solver says, within 3 standard errors."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path))
    spec, games = SLOW[name]
    rules = rules_from_dict({**spec, "name": name})
    solved = solve(rules, "win").first_player_win
    res = simulate(SimConfig(rules, ("optimal", "optimal"), games, seed=2024, jobs=2, engine="referee"))
    assert res.engine == "referee" and res.games == games
    z = (res.win_rate[0] - solved) / std_error(solved, games)
    print(f"{name}: simulated {res.win_rate[0]:.4f}, solved {solved:.4f}, z = {z:+.2f}, {res.seconds:.0f} s")
    assert abs(z) < 3


def _check_moves(block, rows: np.ndarray, caps: np.ndarray, dice: int, tie: float) -> int:
    """Every move a block holds from the solve's pass is optimal for its values (within the tie rule and
    round-off), it is what `move` answers, and wherever one option is best by a clear margin it is that one.
    Returns the number of states checked."""
    checked = 0
    for r, cap in zip(rows, caps):
        t = np.repeat(np.arange(int(cap) + 2), dice)
        m = np.tile(np.arange(1, dice + 1), int(cap) + 2)
        rr = np.full(len(t), r)
        stored = np.take(block.move_v.reshape(-1), block._cell(rr, t, m))
        assert (stored >= -1).all()
        took = stored >= 0
        values = block.moves(rr, t, m)[took]
        chosen = stored[took].astype(np.int64)
        top = values.max(axis=1)
        mine = values[np.arange(len(chosen)), chosen]
        assert (mine >= top - tie - 1e-12).all(), "a move of the pass is not among the best options"
        second = np.sort(values, axis=1)[:, -2] if values.shape[1] > 1 else top - 1
        clear = top - second > 1e-9
        assert (chosen[clear] == np.argmax(values[clear], axis=1)).all()
        assert (block.move(rr, t, m)[took] == chosen).all()
        checked += int(took.sum())
    return checked


@pytest.mark.parametrize("name", ["prediction", "prediction+exact", "rule_of_50+last_round", "take_over"])
def test_the_tables_moves_are_the_solves_own(name: str) -> None:
    """σ: the two-player table holds the move the solve's pass took at every state it decided (bank, roll,
    which announcement), each optimal for the table's values; past the cap under reach the terminal move."""
    result = solve(rules_from_dict(SMALL[name]))
    table = policy_of(result).complete()
    rows = np.arange(0, len(table.cap), 7)
    assert _check_moves(table, rows, table.cap[rows], result.rules.dice, 0.0) > 1000
    assert (table.move_v >= 0).mean() > 0.9  # only overshoot layers (exact) are left to the rule


def test_the_seat_tables_moves_are_the_solves_own() -> None:
    """σ for three players: the rows the advice and the engine's table read hold the pass's moves, optimal for
    the mover within `kernel.TIE`."""
    from cinqmille.solver.keeps import TIE
    from cinqmille.table.policy import seat_rows

    result = solve(rules_from_dict({"name": "sigma3", "goal": 1000, "opening": 300, "prediction": True}), players=3)
    scores = result.grid.scores
    for a in scores[::3]:
        others = np.stack(np.meshgrid(scores[::2], scores[::2], indexing="ij"), axis=-1).reshape(-1, 2)
        block = seat_rows(result, int(a), others)
        rows = np.arange(len(others))
        assert _check_moves(block, rows, block.cap, result.rules.dice, TIE) > 0
