"""The generic registry: decorator and lazy entries, order, and the unknown-name error."""

from __future__ import annotations

import sys

import pytest

from tracktale.errors import TracktaleError
from tracktale.registry import Registry, UnknownName

LAZY_MODULE = "tests.tracktale.registry_target"


@pytest.fixture
def fresh_target(monkeypatch):
    """The lazy target module, not imported yet (and forgotten again afterwards)."""
    monkeypatch.delitem(sys.modules, LAZY_MODULE, raising=False)
    yield LAZY_MODULE
    sys.modules.pop(LAZY_MODULE, None)


def test_the_decorator_registers_and_returns_the_object():
    things: Registry[type] = Registry("thing")

    @things.register("alpha")
    class Alpha:
        pass

    assert things.get("alpha") is Alpha
    assert Alpha.__name__ == "Alpha"


def test_a_lazy_entry_is_imported_on_the_first_get_only(fresh_target):
    things: Registry[object] = Registry("thing")
    things.add("lazy", f"{fresh_target}:VALUE")

    assert fresh_target not in sys.modules
    assert things.names() == ("lazy",)
    assert "lazy" in things
    assert not things.is_loaded("lazy")
    assert fresh_target not in sys.modules

    assert things.get("lazy") == {"answer": 42}
    assert fresh_target in sys.modules
    assert things.is_loaded("lazy")
    assert things.get("lazy") is things.get("lazy")


def test_names_keep_registration_order_and_replacing_keeps_the_place():
    things: Registry[int] = Registry("thing")
    for index, name in enumerate(["c", "a", "b"]):
        things.add(name, index)
    things.add("a", 10)
    assert things.names() == ("c", "a", "b")
    assert list(things.items()) == [("c", 0), ("a", 10), ("b", 2)]
    assert len(things) == 3
    things.remove("a")
    assert list(things) == ["c", "b"]


def test_an_unknown_name_is_a_domain_error_listing_the_known_ones():
    things: Registry[int] = Registry("backend")
    things.add("hf", 1)
    things.add("openai", 2)
    with pytest.raises(UnknownName, match=r"^unknown backend 'gpt' \(choose from hf, openai\)$"):
        things.get("gpt")
    try:
        things.get("gpt")
    except TracktaleError as error:  # the CLI's one-line error
        assert isinstance(error, UnknownName)
        assert (error.kind, error.name, error.known) == ("backend", "gpt", ("hf", "openai"))


def test_the_unknown_message_can_be_worded_by_the_registry():
    studies: Registry[int] = Registry("study", unknown="paradigm {name} has no study ({known})")
    studies.add("boxes", 1)
    with pytest.raises(UnknownName, match=r"^paradigm 'x' has no study \(boxes\)$"):
        studies.get("x")


def test_a_string_object_can_be_registered_as_itself():
    words: Registry[str] = Registry("word")
    words.add("plain", "no colon here", lazy=False)
    assert words.get("plain") == "no colon here"
    with pytest.raises(ValueError, match="module:attribute"):
        words.add("bad", "no colon here")
