"""Tests of skinkit's process-wide settings and show_config()."""
import numpy as np
import pytest

import skinkit as sk
from skinkit import _config


@pytest.fixture(autouse=True)
def restore_settings():
    saved = dict(_config._settings)
    yield
    _config._settings.clear()
    _config._settings.update(saved)


def test_show_config_prints_build_and_runtime_facts(capsys):
    assert sk.show_config() is None
    text = capsys.readouterr().out
    lines = text.splitlines()
    facts = dict(line.split(None, 1) for line in lines)
    assert facts["skinkit"] == sk.__version__
    assert facts["numpy"] == np.__version__
    assert facts["threads"] == str(sk.get_num_threads())
    assert facts["build_c_standard"] == "201112"
    assert "build_compiler" in facts and facts["build_compiler"].strip()
    assert all(v.strip() for v in facts.values())


def test_config_dict_matches_core():
    info = _config.config()
    core = sk._core.build_info()
    for k, v in core.items():
        assert info[f"build_{k}"] == v


def test_set_num_threads():
    sk.set_num_threads(3)
    assert sk.get_num_threads() == 3
    assert _config.resolve_threads(None) == 3
    assert _config.resolve_threads(2) == 2
    sk.set_num_threads(np.int64(1))
    assert sk.get_num_threads() == 1 and type(sk.get_num_threads()) is int


@pytest.mark.parametrize("n,exc", [
    (0, ValueError), (-2, ValueError), (2.0, TypeError), ("2", TypeError), (True, TypeError),
    (None, TypeError), (np.float64(2), TypeError),
])
def test_set_num_threads_validates(n, exc):
    sk.set_num_threads(2)
    with pytest.raises(exc, match="n"):
        sk.set_num_threads(n)
    assert sk.get_num_threads() == 2
    if n is not None:  # None means "the default" for threads=
        with pytest.raises(exc, match="threads"):
            _config.resolve_threads(n)


def test_default_threads_start_at_one_or_the_environment(monkeypatch):
    monkeypatch.delenv("SKINKIT_NUM_THREADS", raising=False)
    _config._settings["threads"] = None
    assert sk.get_num_threads() == 1
    monkeypatch.setenv("SKINKIT_NUM_THREADS", "4")
    _config._settings["threads"] = None
    assert sk.get_num_threads() == 4
    for bad in ("zero", "0", "-1", "1.5"):
        monkeypatch.setenv("SKINKIT_NUM_THREADS", bad)
        _config._settings["threads"] = None
        with pytest.raises(ValueError, match="SKINKIT_NUM_THREADS"):
            sk.get_num_threads()


def test_strict_from_environment(monkeypatch):
    monkeypatch.delenv("SKINKIT_STRICT", raising=False)
    assert _config.resolve_strict(None) is False
    assert _config.resolve_strict(True) is True
    monkeypatch.setenv("SKINKIT_STRICT", "1")
    assert _config.resolve_strict(None) is True
    assert _config.resolve_strict(False) is False
    monkeypatch.setenv("SKINKIT_STRICT", "0")
    assert _config.resolve_strict(None) is False
