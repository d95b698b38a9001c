"""Whole-game records compared start by start (benchmarks/records.py): the pairing of two
versions with its sign test, and the spread of the starts a run's versions lose."""

from __future__ import annotations

import pytest

import storage
from benchmarks import records
from config import STRONG


def record(kept: dict) -> dict:
    """A whole-game record of the starts in `kept` ((opening, side, value): kept), with the
    summary benchmarks/perfect.py writes beside its games."""
    games = [{"start": {"opening": opening, "side": side, "value": value}, "kept": k}
             for (opening, side, value), k in kept.items()]

    def share(values):
        chosen = [game["kept"] for game in games if game["start"]["value"] in values]
        return {"games": len(chosen), "kept": sum(chosen), "share": sum(chosen) / len(chosen)}
    return {"games": games, "summary": {"won": share({1}), "drawn": share({0}), "all": share({0, 1})}}


STARTS = [("1", 1, 1), ("1", -1, 1), ("22", 1, 0), ("3", 1, 0), ("4", -1, 0)]


def test_the_sign_test_of_starts_kept_by_one_only():
    assert records.signTestP(0, 0) == 1.0 and records.signTestP(5, 5) == 1.0
    assert records.signTestP(10, 0) == records.signTestP(0, 10) == pytest.approx(2 / 1024)
    assert records.signTestP(44, 24) == pytest.approx(0.0207, abs=5e-4)


def test_starts_are_paired_by_opening_side_and_value():
    first = record({("1", 1, 1): True, ("1", -1, 1): True, ("22", 1, 0): False, ("3", 1, 0): True,
                    ("4", 1, 0): True})
    other = record({("1", 1, 1): False, ("1", -1, 1): True, ("22", 1, 0): True, ("3", 1, 0): False,
                    ("5", 1, 0): True})
    split = records.keptByOne(first, other)
    assert split["won"] == {"first_only": 1, "other_only": 0, "p": 1.0}
    assert (split["drawn"]["first_only"], split["drawn"]["other_only"]) == (1, 1)  # "4" and "5" unpaired


def test_the_spread_counts_each_start_by_the_versions_that_lost_it():
    losses = [{("1", 1, 1)}, {("1", 1, 1), ("22", 1, 0)}, {("1", 1, 1), ("22", 1, 0), ("3", 1, 0)}]
    spread = records.lossSpread([record({start: start not in lost for start in STARTS}) for lost in losses])
    assert spread["won"] == {"starts": 2, "never_lost": 1, "always_lost": 1, "sometimes_lost": 0,
                             "by_count": {0: 1, 3: 1}}
    assert spread["drawn"] == {"starts": 3, "never_lost": 1, "always_lost": 0, "sometimes_lost": 2,
                               "by_count": {0: 1, 1: 1, 2: 1}}


def test_records_of_other_starts_are_refused():
    same = record({start: True for start in STARTS})
    other = record({start: True for start in STARTS[:-1] + [("5", -1, 0)]})
    with pytest.raises(ValueError, match="record 2 of 2 played other starts than the first"):
        records.lossSpread([same, other])


def test_the_command_reads_a_runs_records_and_names_a_missing_one(tmp_path, capsys):
    kept = [{start: True for start in STARTS}, {**{start: True for start in STARTS}, ("22", 1, 0): False},
            {**{start: True for start in STARTS}, ("1", 1, 1): False, ("22", 1, 0): False}]
    for version, each in zip((7, 9, 12), kept):
        storage.write_json(storage.whole_games_path(tmp_path, version, 4), record(each))
    storage.write_json(storage.whole_games_path(tmp_path, 10, 4, search={"ROOT_SEARCH": "puct"}), record(kept[0]))
    storage.write_json(storage.whole_games_path(tmp_path, 11, 8), record(kept[0]))
    assert list(records.recordedRecords(tmp_path, 4, 8)) == [9, 12]  # its own search, at these simulations
    read = records.main(["--run-folder", str(tmp_path), "--sims", "4", "--from-version", "7"])
    assert list(read) == [7, 9, 12]
    out = capsys.readouterr().out
    assert "      9   100.0%      66.7%    80.0%" in out
    assert "      7 against 12    won 1 and 0 (p = 1.00), drawn 1 and 0 (p = 1.00)" in out
    assert "drawn  3 starts: lost by none 2, by all 0, by some 1 (by count 0: 2, 2: 1)" in out
    with pytest.raises(SystemExit):
        records.main(["--run-folder", str(tmp_path), "--sims", "4", "--versions", "7", "8"])
    assert "no whole-game record of version 8 at 4 simulations" in capsys.readouterr().err


def test_another_runs_versions_are_compared_start_by_start_under_their_runs_name(tmp_path, capsys):
    ours, theirs = tmp_path / "run0008", tmp_path / "run0005"
    storage.write_json(storage.whole_games_path(ours, 517, 4), record({start: True for start in STARTS}))
    storage.write_json(storage.whole_games_path(theirs, 683, 4),
                       record({**{start: True for start in STARTS}, ("1", 1, 1): False, ("3", 1, 0): False}))
    read = records.main(["--run-folder", str(ours), "--sims", "4", "--versions", "517",
                         "--against", f"{theirs}:683"])
    assert list(read) == [517, "run0005/683"]
    out = capsys.readouterr().out
    assert "run0005/683    50.0%      66.7%    60.0%" in out
    assert "        517 against run0005/683 won 1 and 0 (p = 1.00), drawn 1 and 0 (p = 1.00)" in out
    for against, message in ((f"{theirs}:684", f"no whole-game record of version 684 at 4 simulations ({theirs}"),
                             ("683", "wants FOLDER:VERSION"), (f"{theirs}:x", "wants FOLDER:VERSION")):
        with pytest.raises(SystemExit):
            records.main(["--run-folder", str(ours), "--sims", "4", "--versions", "517", "--against", against])
        assert message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        records.main(["--run-folder", str(ours), "--sims", "4", "--versions", "517",
                      "--against", f"{theirs}:683", "--against", f"{theirs}:683"])
    assert "--against names version run0005/683 more than once" in capsys.readouterr().err


def test_a_records_version_is_read_from_its_name_whatever_its_digits(tmp_path):
    for version, search in ((10000, None), (1172, None), (1172, {"ROOT_SEARCH": "puct"})):
        path = storage.whole_games_path(tmp_path, version, 600, search=search)
        storage.write_json(path, record({start: True for start in STARTS}))
        assert storage.whole_games_version(path) == version
    assert list(records.recordedRecords(tmp_path, 600, 1000)) == [1172, 10000]  # in number order, not the names'


@pytest.mark.parametrize("write, message", [
    (lambda path: path.write_text('{"games": [tru'), "is corrupt"),
    (lambda path: path.write_text("[1, 2]"), "is not a whole-game record (no a JSON object)"),
    (lambda path: path.write_text('{"version": 9}'), "is not a whole-game record (no games, summary)"),
    (lambda path: path.mkdir(), "cannot be read"),
])
def test_a_file_that_is_not_a_record_is_named(tmp_path, capsys, write, message):
    storage.write_json(storage.whole_games_path(tmp_path, 7, 4), record({start: True for start in STARTS}))
    wrong = storage.whole_games_path(tmp_path, 9, 4)
    write(wrong)
    with pytest.raises(SystemExit):
        records.main(["--run-folder", str(tmp_path), "--sims", "4", "--versions", "7", "9"])
    err = capsys.readouterr().err
    assert str(wrong) in err and message in err


def test_a_version_compared_with_itself_is_refused(tmp_path, capsys):
    storage.write_json(storage.whole_games_path(tmp_path, 7, 4), record({start: True for start in STARTS}))
    with pytest.raises(SystemExit):
        records.main(["--run-folder", str(tmp_path), "--sims", "4", "--versions", "7", "7"])
    assert "--versions names version 7 more than once: give different versions" in capsys.readouterr().err


def test_play_search_reads_each_runs_records_as_people_play_it(tmp_path, capsys):
    ours, theirs = tmp_path / "run0009", tmp_path / "run0006"
    for folder, play_sims in ((ours, 40), (theirs, 80)):
        folder.mkdir()
        storage.config_path(folder).write_text(
            STRONG.replace(PLAY_SIMS=play_sims, PLAY_ROOT_SEARCH="puct", PLAY_CPUCT=2.0, PLAY_LEAF_BATCH=8).to_json())
    search = {"CPUCT": 2.0, "LEAF_BATCH": 8, "ROOT_SEARCH": "puct"}  # the play settings perfect.py names
    storage.write_json(storage.whole_games_path(ours, 656, 40, search=search), record({s: True for s in STARTS}))
    storage.write_json(storage.whole_games_path(ours, 656, 600), record({s: False for s in STARTS}))
    storage.write_json(storage.whole_games_path(theirs, 777, 80, search=search),
                       record({**{s: True for s in STARTS}, ("1", 1, 1): False}))
    read = records.main(["--run-folder", str(ours), "--play-search", "--versions", "656", "--against", f"{theirs}:777"])
    assert [r["summary"]["all"]["share"] for r in read.values()] == [1.0, 0.8]  # not the own-search record
    assert "656 against run0006/777 won 1 and 0" in capsys.readouterr().out
    assert list(records.recordedRecords(ours, 40, 1, search)) == [656]
    assert records.recordedRecords(ours, 40, 1) == {}
    with pytest.raises(SystemExit):
        records.main(["--run-folder", str(ours), "--play-search", "--sims", "80", "--versions", "656"])
    err = capsys.readouterr().err
    assert "no whole-game record of version 656 at 80 simulations" in err and "--own-search" not in err
    with pytest.raises(SystemExit):
        records.main(["--run-folder", str(tmp_path), "--play-search", "--versions", "656"])
    assert f"config file {storage.config_path(tmp_path)} does not exist" in capsys.readouterr().err


def test_starts_choose_the_record_of_that_many_starts_main_or_kept_beside_it(tmp_path, capsys):
    ours, theirs = tmp_path / "run0009", tmp_path / "run0006"
    larger = {**{start: True for start in STARTS}, ("5", 1, 1): True, ("6", 1, 0): True, ("1", 1, 1): False}
    storage.write_json(storage.whole_games_path(ours, 656, 4), record({start: True for start in STARTS}))
    storage.write_json(storage.whole_games_path(theirs, 777, 4), record(larger))  # 3 won and 4 drawn starts
    storage.write_json(storage.whole_games_path(theirs, 777, 4, (2, 3)),
                       record({**{start: True for start in STARTS}, ("22", 1, 0): False}))
    command = ["--run-folder", str(ours), "--sims", "4", "--versions", "656", "--against", f"{theirs}:777"]
    read = records.main(command + ["--starts", "2", "3"])
    assert [records.startsHeld(each) for each in read.values()] == [(2, 3), (2, 3)]
    assert "656 against run0006/777 won 0 and 0 (p = 1.00), drawn 1 and 0" in capsys.readouterr().out
    records.main(command)  # without --starts, the main records: 777's larger one
    assert "656 against run0006/777 won 1 and 0 (p = 1.00), drawn 0 and 0" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        records.main(command + ["--starts", "3", "4"])
    err = capsys.readouterr().err
    assert "no whole-game record of 3 won and 4 drawn starts of version 656 at 4 simulations" in err
    assert "--won 3 --drawn 4 --own-search" in err
    assert records.recordedRecords(theirs, 4, 1, starts=(3, 4)) == records.recordedRecords(theirs, 4, 1)
    assert [records.startsHeld(each) for each in records.recordedRecords(theirs, 4, 1).values()] == [(3, 4)]
    assert [records.startsHeld(each) for each in records.recordedRecords(theirs, 4, 1, starts=(2, 3)).values()] \
        == [(2, 3)]  # the smaller record kept beside the main one
    assert list(records.recordedRecords(ours, 4, 1, starts=(2, 3))) == [656]
    assert records.recordedRecords(ours, 4, 1, starts=(3, 4)) == {}
    with pytest.raises(SystemExit):
        records.main(["--run-folder", str(ours), "--sims", "4", "--from-version", "1", "--starts", "3", "4"])
    assert "no whole-game record of 3 won and 4 drawn starts at 4 simulations from version 1 on" in \
        capsys.readouterr().err


def test_a_record_file_is_compared_like_a_version_and_must_hold_the_starts_asked_for(tmp_path, capsys):
    storage.write_json(storage.whole_games_path(tmp_path, 777, 4), record({start: True for start in STARTS}))
    replayed = storage.whole_games_path(tmp_path, 777, 4, play_seed=1)
    again = {**record({**{start: True for start in STARTS}, ("22", 1, 0): False}),
             "run_folder": str(tmp_path / "run0006"), "version": 777, "play_seed": 1}
    storage.write_json(replayed, again)
    other = tmp_path / "other.json"
    storage.write_json(other, record({start: True for start in STARTS}))
    command = ["--run-folder", str(tmp_path), "--sims", "4", "--versions", "777", "--record", str(replayed)]
    read = records.main(command + ["--record", str(other)])
    assert list(read) == [777, "run0006/777 play seed 1", "other"]  # a replay by its version and seed, else its file
    assert "777 against run0006/777 play seed 1 won 0 and 0 (p = 1.00), drawn 1 and 0" in capsys.readouterr().out
    assert list(records.recordedRecords(tmp_path, 4, 1)) == [777]  # a replay is no version's main record
    assert list(records.main(command + ["--starts", "2", "3"])) == [777, "run0006/777 play seed 1"]
    copy = tmp_path / "copy.json"
    storage.write_json(copy, again)
    with pytest.raises(SystemExit):
        records.main(command + ["--record", str(copy)])
    assert "two records to compare have the same name" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        records.main(command + ["--record", str(replayed)])
    assert f"--record names file {replayed} more than once: give different files" in capsys.readouterr().err
    storage.write_json(replayed, record({start: True for start in STARTS[:-1]}))  # one drawn start fewer
    with pytest.raises(SystemExit):
        records.main(command + ["--starts", "2", "3"])
    assert f"{replayed} holds 2 won and 2 drawn starts, not the 2 and 3 of --starts" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        records.main(["--run-folder", str(tmp_path), "--sims", "4", "--versions", "777", "--record",
                      str(tmp_path / "missing.json")])
    assert "no record file" in capsys.readouterr().err
