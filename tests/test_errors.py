from __future__ import annotations

import pytest

from city360.errors import (
    City360Error,
    ConfigError,
    InputFileError,
    UnknownActionError,
    did_you_mean,
)


@pytest.mark.parametrize(
    ("leaf", "builtin"),
    [
        (ConfigError, ValueError),
        (InputFileError, FileNotFoundError),
        (UnknownActionError, ValueError),
    ],
)
def test_leaves_subclass_root_and_builtin(leaf: type[Exception], builtin: type[Exception]) -> None:
    assert issubclass(leaf, City360Error)
    assert issubclass(leaf, builtin)


def test_did_you_mean_finds_close_match() -> None:
    assert did_you_mean("WW", ["W", "S", "A"]) == " Did you mean 'W'?"
    assert did_you_mean("zzz", ["W", "S"]) == ""
