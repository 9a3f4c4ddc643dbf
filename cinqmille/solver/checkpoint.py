"""Finished levels of a long solve kept on disk, so that an interrupted solve resumes where it stopped.

`n_player.solve_players` solves the levels of turn starts from the highest sum
of scores down; a level reads only the levels above it. With a `Checkpoint`
each finished level is written to its own file in a folder beside the table's
cache file (``<table>.levels/level-<sum>.npz``, `cache.save_npz`: atomically,
with the table's identity and a SHA-256 checksum of its arrays), holding the
level's stored seat values (rows in the level's order, `n_player.levels`) and
its figures (passes, residual, states) and chasing cycles (`settle.Settled`).

A solve started again reads the files of the levels from the top down while
they are there and sound, and solves the rest: the values it reads are the
bits it wrote, and each level depends only on the levels above, so the table
is the same as an uninterrupted solve's. A file is taken only when its
identity (the ruleset's content key, the solver version, the objective and
player count), the level's sum and row count, the arrays' layout and checksum,
and the values (finite chances) all agree; otherwise it is reported in one
warning, deleted, and that level and the ones below it are solved again. When
the table is written to the cache the folder is removed (`clear`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules
from . import cache
from .settle import Settled

#: The name of a level's file in a checkpoint folder.
LEVEL_FILE = "level-{total:06d}.npz"


@dataclass(frozen=True, slots=True)
class LevelRecord:
    """What a finished level leaves: its stored seat values and figures, and how its chasing cycles were settled."""

    values: np.ndarray  # (P, n - 1) stored seats of the level's rows, in the level's order
    passes: int
    residual: float
    states: int
    unsettled: np.ndarray  # rows of the level on chasing cycles (`level.LevelSolution.unsettled`)
    settled: tuple[Settled, ...] = ()


def _settled_meta(s: Settled) -> dict[str, Any]:
    """A settlement as JSON (NaN as None: the cache's records are strict JSON)."""
    def num(x: float) -> float | None:
        return None if not np.isfinite(x) else float(x)

    return {"rows": [int(r) for r in s.rows], "rule": s.rule, "mixing": [int(r) for r in s.mixing],
            "q": [float(x) for x in s.q], "pivots": [[[int(t), int(m)] for t, m in p] for p in s.pivots],
            "residual": num(s.residual), "pure_gap": num(s.pure_gap), "solutions": int(s.solutions), "why": s.why}


def _settled_of(d: Mapping[str, Any]) -> Settled:
    """The settlement written by `_settled_meta`."""
    def num(x: Any) -> float:
        return float("nan") if x is None else float(x)

    return Settled(np.asarray(d["rows"], dtype=np.int64), str(d["rule"]), np.asarray(d["mixing"], dtype=np.int64),
                   np.asarray(d["q"], dtype=float),
                   tuple(tuple((int(t), int(m)) for t, m in p) for p in d["pivots"]), num(d["residual"]),
                   num(d["pure_gap"]), int(d["solutions"]), str(d["why"]))


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The folder of one solve's finished levels (module docstring)."""

    folder: Path
    rules: Rules
    players: int

    @classmethod
    def of(cls, rules: Rules, players: int) -> "Checkpoint":
        """The checkpoint folder of the `win` table of `rules` for `players`, beside its cache file."""
        path = cache.cache_path(rules, "win", players)
        return cls(path.with_suffix(".levels"), rules, players)

    def _spec(self, rows: int) -> cache.TableSpec:
        k = self.players - 1

        def sound(arrays: Mapping[str, np.ndarray]) -> str | None:
            v = arrays["values"]
            if not np.isfinite(v).all() or (v < 0).any() or (v.sum(axis=-1) > 1.0 + 1e-9).any():
                return "array 'values' is not a table of seat chances"
            return None

        return cache.TableSpec.of(self.rules, "level", "win", self.players,
                                  {"values": ((rows, k), "float64"), "unsettled": (None, "int64")}, sound)

    def path(self, total: int) -> Path:
        """The file of the level of sum `total` (units)."""
        return self.folder / LEVEL_FILE.format(total=total)

    def save(self, total: int, record: LevelRecord) -> bool:
        """Write the finished level of sum `total` (atomically, with its identity and checksum); False, with one
        warning, when it cannot be written (the solve goes on without keeping it)."""
        meta = {"total": int(total), "rows": int(len(record.values)), "passes": int(record.passes),
                "residual": float(record.residual), "states": int(record.states),
                "settled": [_settled_meta(s) for s in record.settled]}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            cache.save_npz(self.path(total), {"values": np.ascontiguousarray(record.values, dtype=np.float64),
                                              "unsettled": np.asarray(record.unsettled, dtype=np.int64)},
                           meta, self._spec(len(record.values)))
        except (OSError, CinqmilleError) as exc:
            warnings.warn(f"could not keep a finished level in {cache.short_path(self.folder)} ({exc}); an "
                          f"interruption now starts the solve again", stacklevel=2)
            return False
        return True

    def kept(self, sums: np.ndarray) -> tuple[int, int]:
        """(levels, turn states) of the levels on disk from the top down (`sums`: `n_player.level_sums`), before
        they are checked: what a resumed solve expects not to solve again."""
        levels = states = 0
        for total, _, level_states in np.asarray(sums).tolist():
            if not self.path(int(total)).is_file():
                break
            levels, states = levels + 1, states + int(level_states)
        return levels, states

    def load(self, total: int, rows: int) -> LevelRecord | None:
        """The finished level of sum `total` with `rows` rows, or None when there is no sound file (a file that is
        not sound is reported in one warning and deleted)."""
        path = self.path(total)
        if not path.is_file():
            return None
        try:
            arrays, meta = cache.load_npz(path, self._spec(rows))
            if meta.get("total") != total or meta.get("rows") != rows:
                raise cache.CorruptTable(f"{path}: it is not the level of sum {total} with {rows} rows")
            unsettled = arrays["unsettled"]
            if unsettled.ndim != 1 or ((unsettled < 0) | (unsettled >= rows)).any():
                raise cache.CorruptTable(f"{path}: its chasing rows are not rows of the level")
            return LevelRecord(arrays["values"], int(meta["passes"]), float(meta["residual"]), int(meta["states"]),
                               unsettled, tuple(_settled_of(d) for d in meta["settled"]))
        except cache.CorruptTable as exc:
            self.discard(path, exc)
        except (KeyError, TypeError, ValueError) as exc:
            self.discard(path, f"{path}: its record is incomplete ({exc.__class__.__name__})")
        return None

    @staticmethod
    def discard(path: Path, why: object) -> None:
        """Report a level file that is not sound, and delete it (its level is solved again)."""
        warnings.warn(f"a finished level of an interrupted solve is not sound and is solved again: {why}",
                      stacklevel=3)
        try:
            path.unlink()
        except OSError:
            pass

    def clear(self) -> None:
        """Remove the folder (the table is written): only the level files this module writes, then the folder."""
        if not self.folder.is_dir() or self.folder.is_symlink():
            return
        for path in self.folder.glob("level-*.npz"):
            try:
                path.unlink()
            except OSError:
                pass
        try:
            self.folder.rmdir()
        except OSError:  # something else is in it: left alone
            pass
