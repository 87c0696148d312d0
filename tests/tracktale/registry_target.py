"""A module the registry test registers lazily and checks is not imported before ``get``."""

VALUE = {"answer": 42}
