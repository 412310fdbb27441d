"""Packaging beyond pyproject.toml: the top-level `templates/` ships inside the `server` package.

The pages and static files live at the top of the checkout; in a wheel they are installed
as `server/templates/`, where `server.rendering.templates.TEMPLATES_DIR` looks first.
"""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(include=["kb*", "ingest*", "server*", "kbcli*"]),
        "server.templates",
        "server.templates.static",
    ],
    package_dir={"server.templates": "templates"},
)
