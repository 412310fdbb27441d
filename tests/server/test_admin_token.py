"""The admin token kept in the data directory (server/admin_token.py): made once, 0600, reused, refused when others
may read it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from kb.errors import KBError
from server.admin_token import kept_token, serving_token, token_file


def test_the_token_is_made_once_readable_by_its_owner_alone_and_kept(tmp_path: Path) -> None:
    token = kept_token(tmp_path)
    path = token_file(tmp_path)
    assert path == tmp_path / "admin-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(token) >= 32 and path.read_text(encoding="ascii") == token + "\n"
    assert kept_token(tmp_path) == token  # the next start signs in with the same token
    (tmp_path / "other").mkdir()
    assert kept_token(tmp_path / "other") != token  # random, not derived from anything


def test_kb_admin_token_set_wins_and_set_empty_turns_the_admin_routes_off(tmp_path: Path) -> None:
    assert serving_token(tmp_path, {"KB_ADMIN_TOKEN": "chosen-1"}) == "chosen-1"
    assert serving_token(tmp_path, {"KB_ADMIN_TOKEN": ""}) == ""
    assert not token_file(tmp_path).exists()  # nothing kept when the variable is set
    assert serving_token(tmp_path, {}) == token_file(tmp_path).read_text(encoding="ascii").strip()


def test_a_token_file_others_may_read_is_refused_naming_it_and_its_mode(tmp_path: Path) -> None:
    path = token_file(tmp_path)
    path.write_text("leaked-token\n", encoding="ascii")
    path.chmod(0o644)
    with pytest.raises(KBError) as raised:
        kept_token(tmp_path)
    assert str(raised.value) == (
        f"{path}: the admin token is readable by others (mode 644); run `chmod 600 {path}`, or delete it for a new one"
    )


def test_an_empty_token_file_or_an_unwritable_directory_is_one_clear_error(tmp_path: Path) -> None:
    path = token_file(tmp_path)
    path.write_text("\n", encoding="ascii")
    path.chmod(0o600)
    with pytest.raises(KBError, match="holds no admin token"):
        kept_token(tmp_path)
    with pytest.raises(KBError, match=r"nowhere/admin-token: cannot keep the admin token there .*set KB_ADMIN_TOKEN"):
        kept_token(tmp_path / "nowhere")
