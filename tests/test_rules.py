"""Rules: presets, TOML overrides, validation messages, round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from cinqmille.rules import PRESET_NAMES, Rules, RulesError, content_key, load_rules, to_toml


def test_standard_preset_equals_the_defaults() -> None:
    """The standard preset holds exactly the field defaults of `Rules`."""
    standard = load_rules("standard")
    assert content_key(standard) == content_key(Rules())


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_preset_round_trips_through_toml(name: str, tmp_path: Path) -> None:
    """`rules show` output reads back to the same ruleset."""
    rules = load_rules(name)
    path = tmp_path / f"{name}.toml"
    path.write_text(to_toml(rules))
    again = load_rules(str(path))
    assert again == rules


def test_presets_differ_as_the_rule_book_says() -> None:
    """Each preset changes what RULES.md section 6 says it changes."""
    house = load_rules("house")
    assert (house.opening, house.min_bank, house.straights) == (700, 250, 0)
    assert house.must_keep_triples and house.all_scoring_roll == "keep_all_and_roll"
    assert house.final_stretch is not None and house.final_stretch.start == 4000 and house.final_stretch.cap
    sheet = load_rules("sheet")
    assert (sheet.end, sheet.multiples, sheet.five_fives, sheet.split_combinations) == ("exact", "linear", 1500, False)
    assert sheet.crosses and sheet.ties == "deadly" and sheet.take_over and sheet.last_round
    assert load_rules("six-dice").dice == 6
    assert load_rules("ten-thousand").goal == 10000
    assert load_rules("wikipedia").straights == 500
    assert len({content_key(load_rules(n)) for n in PRESET_NAMES}) == len(PRESET_NAMES)


def test_user_file_overrides_a_preset(tmp_path: Path) -> None:
    """A file with `base` starts from the preset and overrides only its keys."""
    path = tmp_path / "table.toml"
    path.write_text('base = "house"\nopening = 500\n[final_stretch]\ncap = false\n')
    rules = load_rules(str(path))
    assert rules.opening == 500 and rules.min_bank == 250
    assert rules.final_stretch is not None and rules.final_stretch.start == 4000 and not rules.final_stretch.cap
    assert rules.name == "table"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("openning = 500", "key 'openning': unknown key (did you mean 'opening'?)"),
        ("colour = 'red'", "key 'colour': unknown key"),
        ("[zero_turns]\ncuont = 3", "key 'zero_turns.cuont': unknown key (did you mean 'count'?)"),
        ("opening = '500'", "key 'opening': expected a whole number"),
        ("opening = 525", "multiple of 50"),
        ("opening = 5000", "must be below the goal"),
        ("dice = 4", "5 or 6 dice"),
        ("end = 'first'", "expected one of reach, exact"),
        ("rule_of_50 = true\ngoal = 5050", "rule_of_50"),
        ("[final_stretch]\nfrom = 6000", "final_stretch.from"),
        ("[single]\n2 = 20", "single.2"),
        ("[triple]\n7 = 700", "triple.7"),
        ("base = 'nowhere'", "nowhere"),
        ("three_pairs = 1500", "key 'three_pairs': three pairs need six dice"),
        ("dice = 6\n[straights]\nfrom_six = true", "key 'straights.from_six'"),
        ("multiples = 'fixed'\n[kinds]\n4 = 1000", "key 'kinds'"),
        ("goal = [", "not valid TOML"),
    ],
)
def test_bad_files_name_the_file_and_key(tmp_path: Path, text: str, fragment: str) -> None:
    """Every validation error is one line that names the file and what is wrong."""
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(RulesError) as info:
        load_rules(str(path))
    message = str(info.value)
    assert str(path) in message and fragment in message and "\n" not in message


def test_unknown_preset_lists_the_known_ones() -> None:
    """An unknown name says which presets exist."""
    with pytest.raises(RulesError, match="unknown preset.*standard"):
        load_rules("standrad")


def test_a_misspelled_key_is_one_line_with_a_suggestion_and_exit_2(tmp_path: Path) -> None:
    """`rules show` on a file with `openning` says, in one line and with exit status 2, that `opening` was meant."""
    from click.testing import CliRunner

    from cinqmille.cli import main

    path = tmp_path / "typo.toml"
    path.write_text("openning = 500\n")
    out = CliRunner().invoke(main, ["rules", "show", str(path)])
    assert out.exit_code == 2
    assert out.stderr.strip().count("\n") == 0 and "did you mean 'opening'?" in out.stderr and "Traceback" not in out.output
