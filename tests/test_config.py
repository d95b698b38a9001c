"""Config validation: every bad value raises ConfigError naming the field; JSON round trip."""

import json

import pytest

import config
from config import Config, ConfigError

SMALL_LAYERS = [{"filters": 8, "kernel_size": (3, 3)}] * 2


@pytest.mark.parametrize("changes, field", [
    ({"MCTS_SIMS": 0}, "MCTS_SIMS"),
    ({"MCTS_SIMS": -3}, "MCTS_SIMS"),
    ({"EPISODES": 0}, "EPISODES"),
    ({"EVAL_EPISODES": 7}, "EVAL_EPISODES"),
    ({"EVAL_TURNS_UNTIL_TAU0": -1}, "EVAL_TURNS_UNTIL_TAU0"),
    ({"RANDOM_OPENING_MOVES": -1}, "RANDOM_OPENING_MOVES"),
    ({"RANDOM_OPENING_MOVES": 2.5}, "RANDOM_OPENING_MOVES"),
    ({"RANDOM_OPENING_MOVES": 21}, "RANDOM_OPENING_MOVES"),
    ({"EVAL_RANDOM_OPENING_MOVES": -1}, "EVAL_RANDOM_OPENING_MOVES"),
    ({"EVAL_RANDOM_OPENING_MOVES": 1.5}, "EVAL_RANDOM_OPENING_MOVES"),
    ({"EVAL_RANDOM_OPENING_MOVES": 21}, "EVAL_RANDOM_OPENING_MOVES"),
    ({"FAST_SEARCH_SIMS": -1}, "FAST_SEARCH_SIMS"),
    ({"FAST_SEARCH_SIMS": 50}, "FAST_SEARCH_SIMS \\(50\\) must be below MCTS_SIMS \\(50\\)"),
    ({"FULL_SEARCH_PROBABILITY": 0}, "FULL_SEARCH_PROBABILITY"),
    ({"FULL_SEARCH_PROBABILITY": 1.5}, "FULL_SEARCH_PROBABILITY"),
    ({"FULL_SEARCH_PROBABILITY": float("nan")}, "FULL_SEARCH_PROBABILITY"),
    ({"ARCHIVE_START_PROBABILITY": -0.1}, "ARCHIVE_START_PROBABILITY must lie in [0, 1]"),
    ({"ARCHIVE_START_PROBABILITY": 1.01}, "ARCHIVE_START_PROBABILITY"),
    ({"EPSILON": -0.01}, "EPSILON"),
    ({"EPSILON": 1.5}, "EPSILON"),
    ({"ALPHA": 0}, "ALPHA"),
    ({"ALPHA": -1.0}, "ALPHA"),
    ({"SCORING_THRESHOLD": 0}, "SCORING_THRESHOLD"),
    ({"SCORING_THRESHOLD": -1.3}, "SCORING_THRESHOLD"),
    ({"MOMENTUM": 1.0}, "MOMENTUM"),
    ({"LEARNING_RATE": 0.0}, "LEARNING_RATE"),
    ({"CPUCT": float("nan")}, "CPUCT"),
    ({"HIDDEN_CNN_LAYERS": []}, "HIDDEN_CNN_LAYERS"),
    ({"HIDDEN_CNN_LAYERS": 5}, "HIDDEN_CNN_LAYERS"),
    ({"HIDDEN_CNN_LAYERS": [{"filters": 8}]}, "HIDDEN_CNN_LAYERS[0]"),
    ({"HIDDEN_CNN_LAYERS": [{"filters": 8, "kernel_size": 3}]}, "HIDDEN_CNN_LAYERS[0]"),
    ({"HIDDEN_CNN_LAYERS": [{"filters": 8, "kernel_size": (3, 3, 3)}]}, "HIDDEN_CNN_LAYERS[0]"),
    ({"HIDDEN_CNN_LAYERS": [{"filters": 8, "kernel_size": (3, 3)}, {"filters": 0, "kernel_size": (3, 3)}]},
     "HIDDEN_CNN_LAYERS[1]"),
    ({"HIDDEN_CNN_LAYERS": [{"filters": True, "kernel_size": (3, 3)}]}, "HIDDEN_CNN_LAYERS[0]"),
    ({"HIDDEN_CNN_LAYERS": [{"filters": 2**40, "kernel_size": (3, 3)}]}, r"HIDDEN_CNN_LAYERS[0] must be .*1\.\.4096"),
    ({"HIDDEN_CNN_LAYERS": [{"filters": 8, "kernel_size": (99, 99)}]}, r"\(the board is 6 x 7\)"),
    ({"HIDDEN_CNN_LAYERS": [{"filters": 8, "kernel_size": (3, 3), "strides": 2}]}, "HIDDEN_CNN_LAYERS[0]"),
    ({"HIDDEN_CNN_LAYERS": [{"filters": 8, "kernel_size": (3, 3)}, {"filters": 16, "kernel_size": (3, 3)}]},
     "HIDDEN_CNN_LAYERS[1]"),
    ({"BATCH_SIZE": 40, "MEMORY_SIZE": 30, "MIN_MEMORY_SIZE": 30}, "BATCH_SIZE"),
    ({"MIN_MEMORY_SIZE": 10, "BATCH_SIZE": 20}, "MIN_MEMORY_SIZE"),
    ({"EPISODES": 2.0}, "EPISODES"),
    ({"MCTS_SIMS": "50"}, "MCTS_SIMS"),
    ({"EPISODES": True}, "EPISODES"),
    ({"SEED": False}, "SEED"),
    ({"SEED": 2**40}, "SEED"),
    ({"EPSILON": True}, "EPSILON"),
    ({"LOGGERS": {"main": True, "mtcs": True}}, "LOGGERS"),
    ({"LOGGERS": {"main": 1}}, "LOGGERS"),
    ({"RUN_FOLDER": ""}, "RUN_FOLDER"),
    ({"RUN_FOLDER": "run\0"}, "RUN_FOLDER must not hold a NUL"),
    ({"MEMORY_SIZE": 2**31, "MIN_MEMORY_SIZE": 256}, "MEMORY_SIZE must be below 2\\*\\*31"),
    ({"CPUCT": 10**400}, "CPUCT must be a finite number"),
    ({"LEARNING_RATE_SCHEDULE": [[3, 10**400]]}, "LEARNING_RATE_SCHEDULE"),
    ({"TENSORBOARD": 1}, "TENSORBOARD must be True or False"),
])
def test_bad_value_names_the_field(changes, field):
    with pytest.raises(ConfigError, match=field.replace("[", r"\[").replace("]", r"\]")):
        Config(**changes)


def test_defaults_are_the_tutorials():
    cfg = Config()
    assert (cfg.EPISODES, cfg.MCTS_SIMS, cfg.MEMORY_SIZE, cfg.TURNS_UNTIL_TAU0) == (30, 50, 30000, 10)
    assert (cfg.CPUCT, cfg.EPSILON, cfg.ALPHA) == (1.0, 0.2, 0.8)
    assert (cfg.BATCH_SIZE, cfg.EPOCHS, cfg.REG_CONST, cfg.LEARNING_RATE, cfg.MOMENTUM) == (256, 1, 1e-4, 0.1, 0.9)
    assert (cfg.TRAINING_LOOPS, cfg.EVAL_EPISODES, cfg.SCORING_THRESHOLD) == (10, 20, 1.3)
    assert cfg.HIDDEN_CNN_LAYERS == [{"filters": 75, "kernel_size": (4, 4)}] * 6


def test_from_dict_refuses_unknown_keys():
    with pytest.raises(ConfigError, match="MCTS_SIM"):
        Config.from_dict({"MCTS_SIM": 10})


def test_replace_validates_and_refuses_unknown_keys():
    with pytest.raises(ConfigError, match="EPISODES"):
        Config().replace(EPISODES=-1)
    with pytest.raises(ConfigError, match="EPISODE"):
        Config().replace(EPISODE=3)
    assert Config().replace(EPISODES=3).EPISODES == 3


def test_json_round_trip_is_equal(tmp_path):
    cfg = Config(EPISODES=3, MCTS_SIMS=7, HIDDEN_CNN_LAYERS=SMALL_LAYERS, EPSILON=0.25, SEED=11,
                 LOGGERS={"main": False, "memory": True, "tourney": False, "mcts": False, "model": False})
    path = tmp_path / "config.json"
    path.write_text(cfg.to_json())
    loaded = Config.from_json_file(path)
    assert loaded == cfg
    assert loaded.HIDDEN_CNN_LAYERS[0]["kernel_size"] == (3, 3)


def test_json_file_with_unknown_key_names_file_and_key(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**json.loads(Config().to_json()), "TURBO": True}))
    with pytest.raises(ConfigError, match="TURBO") as info:
        Config.from_json_file(path)
    assert str(path) in str(info.value)


def test_json_file_with_bad_value_names_file_and_field(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"MCTS_SIMS": 0}))
    with pytest.raises(ConfigError, match="MCTS_SIMS") as info:
        Config.from_json_file(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("content", [b'{"EPISODES": 3', b"\xff\xfe\x00garbage", b"[1, 2]", b"[" * 100_000,
                                     b'{"EPISODES": ' + b"3" * 5000 + b"}"])
def test_corrupt_json_file_names_the_file_and_the_way_out(tmp_path, content):
    path = tmp_path / "config.json"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match="; restore it or start a new run$") as info:
        Config.from_json_file(path)
    assert str(path) in str(info.value)
    with pytest.raises(ConfigError, match="; move it back$"):
        Config.from_json_file(path, "move it back")


def test_missing_json_file_names_the_file(tmp_path):
    with pytest.raises(ConfigError) as info:
        Config.from_json_file(tmp_path / "nowhere.json")
    assert "nowhere.json" in str(info.value)


def test_relative_run_folder_is_under_the_project(tmp_path):
    cfg = Config(RUN_FOLDER="run", RUN_ARCHIVE_FOLDER=str(tmp_path))
    assert cfg.path("RUN_FOLDER").is_absolute()
    assert cfg.path("RUN_ARCHIVE_FOLDER") == tmp_path


def test_every_preset_validates_and_survives_its_json_round_trip(tmp_path):
    for name, preset in config.PRESETS.items():
        path = tmp_path / f"{name}.json"
        path.write_text(preset.to_json())
        assert Config.from_json_file(path) == preset
    assert config.PRESETS["default"] == Config()
    strong = config.STRONG
    assert strong.ROOT_SEARCH == "gumbel" and strong.MERGE_DUPLICATES and 0 < strong.VALUE_TARGET_Q_WEIGHT < 1
    assert config.DEFAULT.ROOT_SEARCH == "puct" and not config.DEFAULT.MERGE_DUPLICATES
    assert config.DEFAULT.VALUE_TARGET_Q_WEIGHT == 0 and config.DEFAULT.OPENING_STONES == 0
    assert strong.PLAY_ROOT_SEARCH == "puct" and config.DEFAULT.PLAY_ROOT_SEARCH == ""  # the tutorial: ROOT_SEARCH
    assert strong.PLAY_CPUCT == 2.0 and config.DEFAULT.PLAY_CPUCT == 0  # the tutorial: CPUCT
    assert not config.DEFAULT.MIRROR_AVERAGE and not config.DEFAULT.PLAY_MIRROR_AVERAGE  # one evaluation per leaf
    assert config.DEFAULT.PRIOR_TEMPERATURE == 1 and config.DEFAULT.PLAY_PRIOR_TEMPERATURE == 0  # the net's softmax
    assert config.DEFAULT.SECURE_CHILD == 0 and strong.SECURE_CHILD == 0  # the most visited move
    assert strong.RANDOM_OPENING_MOVES > 0 and config.DEFAULT.RANDOM_OPENING_MOVES == 0  # the tutorial searches every move
    assert config.DEFAULT.EVAL_RANDOM_OPENING_MOVES == strong.EVAL_RANDOM_OPENING_MOVES == 0  # so do its tournaments


@pytest.mark.parametrize(("change", "message"), [
    ({"ROOT_SEARCH": "alphabeta"}, "ROOT_SEARCH must be"),
    ({"PLAY_ROOT_SEARCH": "alphabeta"}, "PLAY_ROOT_SEARCH must be"),
    ({"PLAY_CPUCT": -0.5}, r"PLAY_CPUCT must be a finite number, 0 \(CPUCT\) or positive, got -0.5"),
    ({"PLAY_CPUCT": float("nan")}, "PLAY_CPUCT must be a finite number"),
    ({"GUMBEL_SAMPLED_ACTIONS": 0}, "GUMBEL_SAMPLED_ACTIONS must be positive"),
    ({"GUMBEL_C_SCALE": 0.0}, "GUMBEL_C_SCALE must be positive, got 0.0"),
    ({"GUMBEL_C_VISIT": -1.0}, "GUMBEL_C_VISIT must not be negative, got -1.0"),
    ({"RUN_FOLDER": ""}, "RUN_FOLDER must be a non-empty path string, got ''"),
    ({"HIDDEN_CNN_LAYERS": []}, r"HIDDEN_CNN_LAYERS must be a non-empty list .*got \[\]"),
    ({"LOGGERS": {"main": True, "search": True}}, r"unknown logger names 'search'; known: main"),
    ({"LOGGERS": {1: True, "x": True}}, r"unknown logger names 'x', 1; known: main"),
    ({"VALUE_TARGET_Q_WEIGHT": 1.5}, r"VALUE_TARGET_Q_WEIGHT must lie in \[0, 1\]"),
    ({"VALUE_TARGET_Q_WEIGHT_OPENING": -0.1}, r"VALUE_TARGET_Q_WEIGHT_OPENING must lie in \[0, 1\]"),
    ({"OPENING_STONES": 43}, "OPENING_STONES must be at most 42"),
    ({"OPENING_STONES": -1}, "OPENING_STONES must not be negative, got -1"),
    ({"MERGE_DUPLICATES": 1}, "MERGE_DUPLICATES must be True or False"),
    ({"MIRROR_AVERAGE": "yes"}, "MIRROR_AVERAGE must be True or False, got 'yes'"),
    ({"LEAF_BATCH": 0}, "LEAF_BATCH must be positive, got 0"),
    ({"PLAY_LEAF_BATCH": -1}, "PLAY_LEAF_BATCH must not be negative, got -1"),
    ({"PLAY_MIRROR_AVERAGE": 1}, "PLAY_MIRROR_AVERAGE must be True or False, got 1"),
    ({"FAST_SEARCH_SIDE": "yes"}, "FAST_SEARCH_SIDE must be True or False, got 'yes'"),
    ({"STRONG_SEARCH_SIMS": 50}, r"STRONG_SEARCH_SIMS \(50\) must be 0 or above MCTS_SIMS \(50\)"),
    ({"STRONG_SEARCH_SIMS": 200, "FAST_SEARCH_SIMS": 8}, r"with FAST_SEARCH_SIMS 0 \(got 8\)"),
    ({"STRONG_SEARCH_SIMS": -1}, "STRONG_SEARCH_SIMS must not be negative, got -1"),
    ({"SECURE_CHILD": -1.0}, r"SECURE_CHILD must not be negative \(0: the most visited move\), got -1.0"),
    ({"PRIOR_TEMPERATURE": 0.0}, "PRIOR_TEMPERATURE must be a positive finite number, got 0.0"),
    ({"PRIOR_TEMPERATURE": float("inf")}, "PRIOR_TEMPERATURE must be a positive finite number, got inf"),
    ({"PLAY_PRIOR_TEMPERATURE": -1.5}, r"PLAY_PRIOR_TEMPERATURE must be a finite number, 0 \(PRIOR_TEMPERATURE\) "
                                       r"or positive, got -1.5"),
])
def test_out_of_range_options_are_refused_naming_option_and_value(change, message):
    with pytest.raises(ConfigError, match=message):
        config.DEFAULT.replace(**change)


@pytest.mark.parametrize(("schedule", "message"), [
    ({"10": 0.01}, "LEARNING_RATE_SCHEDULE must be a list"),
    ([[10]], r"LEARNING_RATE_SCHEDULE\[0\] must be \[iteration"),
    ([[0, 0.01]], r"LEARNING_RATE_SCHEDULE\[0\]"),
    ([[5, 0.01], [3, -0.1]], r"LEARNING_RATE_SCHEDULE\[1\]"),
    ([[5, 0.01], [5, 0.001]], "iterations must increase, got 5 after 5"),
    ([[2.5, 0.01]], r"LEARNING_RATE_SCHEDULE\[0\]"),
    ([[3, True]], r"LEARNING_RATE_SCHEDULE\[0\]"),
])
def test_a_bad_learning_rate_schedule_names_the_step(schedule, message):
    with pytest.raises(ConfigError, match=message):
        config.DEFAULT.replace(LEARNING_RATE_SCHEDULE=schedule)


def test_the_learning_rate_follows_the_schedule_from_each_steps_iteration_on(tmp_path):
    cfg = config.DEFAULT.replace(LEARNING_RATE=0.1, LEARNING_RATE_SCHEDULE=((3, 0.01), (7, 0.001)))
    assert [cfg.learningRateAt(i) for i in (1, 2, 3, 6, 7, 100)] == [0.1, 0.1, 0.01, 0.01, 0.001, 0.001]
    assert config.DEFAULT.learningRateAt(500) == config.DEFAULT.LEARNING_RATE
    path = tmp_path / "config.json"
    path.write_text(cfg.to_json())
    assert Config.from_json_file(path) == cfg


def test_a_preset_is_found_by_name_and_an_unknown_name_lists_the_presets():
    assert config.preset("strong") is config.STRONG
    with pytest.raises(ConfigError, match="unknown preset 'Strong'; the presets are default, shipped, strong"):
        config.preset("Strong")


def test_a_replaced_config_has_its_own_loggers():
    variant = config.DEFAULT.replace(EPISODES=3)
    variant.LOGGERS["mcts"] = not config.DEFAULT.LOGGERS["mcts"]
    assert config.DEFAULT.LOGGERS["mcts"] != variant.LOGGERS["mcts"]
    assert config.STRONG.LOGGERS == config.DEFAULT.LOGGERS


def test_a_config_is_not_changed_in_place():
    cfg = config.DEFAULT.replace(EPISODES=3)
    with pytest.raises(config.ConfigError, match=r"use cfg.replace\(MCTS_SIMS=-3\)"):
        cfg.MCTS_SIMS = -3
    assert cfg.MCTS_SIMS == config.DEFAULT.MCTS_SIMS and cfg.replace(MCTS_SIMS=7).MCTS_SIMS == 7


def test_a_move_time_limit_is_a_non_negative_number_for_the_puct_search_at_play_time():
    assert config.DEFAULT.PLAY_MOVE_SECONDS == 0  # the tutorial: a fixed count of simulations
    assert config.DEFAULT.replace(PLAY_MOVE_SECONDS=0.9).PLAY_MOVE_SECONDS == 0.9
    with pytest.raises(config.ConfigError, match="PLAY_MOVE_SECONDS must not be negative"):
        config.DEFAULT.replace(PLAY_MOVE_SECONDS=-1.0)
    with pytest.raises(config.ConfigError, match="PLAY_MOVE_SECONDS must be a finite number"):
        config.DEFAULT.replace(PLAY_MOVE_SECONDS=float("inf"))
    with pytest.raises(config.ConfigError, match="PLAY_MOVE_SECONDS needs the PUCT root search"):
        config.DEFAULT.replace(ROOT_SEARCH="gumbel", PLAY_MOVE_SECONDS=1.0)
    played = config.DEFAULT.replace(ROOT_SEARCH="gumbel", PLAY_ROOT_SEARCH="puct", PLAY_MOVE_SECONDS=1.0)
    assert (played.ROOT_SEARCH, played.PLAY_ROOT_SEARCH, played.PLAY_MOVE_SECONDS) == ("gumbel", "puct", 1.0)
    assert "PLAY_MOVE_SECONDS" not in config.playSearch(config.DEFAULT.replace(PLAY_MOVE_SECONDS=1.0))


def test_the_played_agents_search_is_the_runs_changed_by_its_play_settings():
    assert config.playSearch(config.DEFAULT) == {}  # the tutorial: people meet the training search
    assert config.playSearch(config.DEFAULT.replace(PLAY_CPUCT=2)) == {"CPUCT": 2.0}
    assert config.playSearch(config.DEFAULT.replace(PLAY_CPUCT=config.DEFAULT.CPUCT)) == {}
    both = config.DEFAULT.replace(ROOT_SEARCH="gumbel", PLAY_ROOT_SEARCH="puct", PLAY_CPUCT=3.0)
    assert config.playSearch(both) == {"CPUCT": 3.0, "ROOT_SEARCH": "puct"}
    mirrored = config.DEFAULT.replace(PLAY_MIRROR_AVERAGE=True, PLAY_LEAF_BATCH=8)
    assert config.playSearch(mirrored) == {"LEAF_BATCH": 8, "MIRROR_AVERAGE": True}
    assert config.DEFAULT.LEAF_BATCH == 1 and config.DEFAULT.PLAY_LEAF_BATCH == 0  # one leaf per call
    assert config.withSearch(mirrored, config.playSearch(mirrored)).MIRROR_AVERAGE
    flatter = config.DEFAULT.replace(PLAY_PRIOR_TEMPERATURE=1.5)
    assert config.playSearch(flatter) == {"PRIOR_TEMPERATURE": 1.5}
    assert config.withSearch(flatter, config.playSearch(flatter)).PRIOR_TEMPERATURE == 1.5
    played = config.withSearch(both, config.playSearch(both))
    assert (played.CPUCT, played.ROOT_SEARCH) == (3.0, "puct") and (both.CPUCT, both.ROOT_SEARCH) == (1.0, "gumbel")
