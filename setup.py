"""Packaging beyond pyproject.toml: the top-level `templates/` ships inside the `server` package.

The pages and static files live at the top of the checkout; in a wheel they are installed
as `server/templates/`, where `server.rendering.templates.TEMPLATES_DIR` looks first. They
are copied there as the wheel is built (`BuildPy`) rather than mapped with `package_dir`,
so the packages keep a plain layout and `pip install -e .` puts the checkout on `sys.path`
without setuptools' warning about an editable install of a mapped layout.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    """Build the packages, then copy `templates/` into the built `server` package."""

    def run(self) -> None:
        super().run()
        self.copy_tree("templates", str(Path(self.build_lib, "server", "templates")))


setup(
    packages=find_namespace_packages(include=["kb*", "ingest*", "server*", "kbcli*", "trackers*"]),
    package_dir={"": "."},
    cmdclass={"build_py": BuildPy},
)
