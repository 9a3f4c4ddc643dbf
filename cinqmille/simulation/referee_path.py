"""Batches of games through the game engine (`play_game`): any ruleset, 2 to 8 players, any policy.

The batch's Generator rolls the dice of all its games in turn and feeds the
policies that draw random numbers (`random`), so a batch is a pure function
of its seed sequence.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..engine import Banked, Bust, TurnStart, play_game
from ..policies import parse_policy
from ..rules import Rules
from .stats import BatchStats


def play_batch_referee(rules: Rules, players: Sequence[str], games: int, seed: np.random.SeedSequence) -> BatchStats:
    """Play `games` games with the policies named `players` (seat order) and return their statistics."""
    dice_seq, policy_seq = seed.spawn(2)
    rng = np.random.default_rng(dice_seq)
    policy_rng = np.random.default_rng(policy_seq)
    policies = [parse_policy(p, rules, rng=policy_rng) for p in players]
    n = len(players)
    winner = np.empty(games, dtype=np.int8)
    length = np.empty(games, dtype=np.int32)
    turns = np.zeros(n, dtype=np.int64)
    busts = np.zeros(n, dtype=np.int64)
    banks = np.zeros(n, dtype=np.int64)
    points = np.zeros(n, dtype=np.int64)
    for g in range(games):
        result = play_game(rules, policies, rng=rng)
        winner[g] = result.winner
        length[g] = result.turns
        for ev in result.events:
            if isinstance(ev, TurnStart):
                turns[ev.seat] += 1
            elif isinstance(ev, Bust):
                busts[ev.seat] += 1
            elif isinstance(ev, Banked) and ev.outcome == "scored":
                banks[ev.seat] += 1
                points[ev.seat] += ev.points
    return BatchStats.of(winner, length, turns, busts, banks, points)
