"""What Home Assistant's Supervisor does with an add-on repository, written from its source
(home-assistant/supervisor, 2026-08: store/repository.py, store/data.py, apps/validate.py,
apps/build.py) to hold Hearth's repository to it (tests/test_addon.py) and to build the add-on as
it does (scripts/addon_check.py). Only what those read: the rules are the Supervisor's, the code
is ours.

- Adding a repository's address: the clone is accepted only with `repository.yaml` (.yml, .json)
  at its root, holding at least `name` (RepositoryGit.validate).
- Its add-ons: every `config.yaml` (.yml, .json) anywhere below the root, except under folders
  whose name starts with "." or is "rootfs" (StoreData._find_app_configs); each must be an add-on's.
- Building one without `image:`: `docker buildx build .` in the add-on's folder, with `Dockerfile`
  (or `Dockerfile.ARCH`), the build arguments BUILD_VERSION (config.yaml's version), BUILD_ARCH,
  BUILD_FROM (build.yaml's `build_from` for the architecture, where there is a build.yaml) and
  build.yaml's `args`, and its labels (AppBuild.get_docker_args).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

SUFFIXES = (".yaml", ".yml", ".json")
ARCHES = ("aarch64", "amd64")  # ARCH_ALL; armhf, armv7 and i386 are deprecated
PLATFORMS = {"aarch64": "linux/arm64", "amd64": "linux/amd64"}
SLUG = re.compile(r"^[-_.A-Za-z0-9]+$")
IMAGE_NAME = re.compile(r"^([a-zA-Z\-\.:\d{}]+/)*?([\-\w{}]+)/([\-\w{}]+)(:[\.\-\w{}]+)?$")  # RE_DOCKER_IMAGE_BUILD


class RepositoryError(AssertionError):
    """What the Supervisor would refuse, with its reason."""


def read_file(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    if not isinstance(data, dict):
        raise RepositoryError(f"{path}: not a mapping")
    return data


def clone_files(root: Path) -> list[Path]:
    """The files a clone of `root` holds: what git tracks (a developer's untracked files are not cloned)."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    return [root / name for name in out.decode().split("\0") if name]


def clone(root: Path, dest: Path) -> Path:
    """Copy what a clone of `root` holds (its tracked files, as they are in the working tree, links
    as links) into `dest`."""
    import os
    import shutil

    for path in clone_files(root):
        target = dest / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            target.symlink_to(os.readlink(path))
        elif path.is_file():
            shutil.copy2(path, target)
    return dest


def repository(root: Path) -> dict:
    """The repository's information, as adding its address checks it."""
    for suffix in SUFFIXES:
        if (root / f"repository{suffix}").is_file():
            info = read_file(root / f"repository{suffix}")
            break
    else:
        raise RepositoryError(f"no repository.yaml (.yml, .json) at {root}: the Supervisor refuses the address")
    if not isinstance(info.get("name"), str):
        raise RepositoryError(f"repository file without a name: {info}")
    if "url" in info and not re.match(r"^https?://", str(info["url"])):
        raise RepositoryError(f"repository url {info['url']!r} is not a URL")
    return info


def addon_configs(root: Path, files: list[Path]) -> list[Path]:
    """Every add-on config the Supervisor finds in the clone."""
    found = []
    for path in files:
        relative = path.relative_to(root)
        if path.stem != "config" or path.suffix not in SUFFIXES:
            continue
        if any(part.startswith(".") or part == "rootfs" for part in relative.parts):
            continue
        found.append(path)
    return sorted(found)


def addon(config_path: Path) -> dict:
    """An add-on's config, held to the keys every add-on must have."""
    config = read_file(config_path)
    for key in ("name", "version", "slug", "description", "arch"):
        if key not in config:
            raise RepositoryError(f"{config_path}: {key} is required")
    if not SLUG.match(str(config["slug"])):
        raise RepositoryError(f"{config_path}: slug {config['slug']!r}")
    if not isinstance(config["arch"], list) or not set(config["arch"]) <= {*ARCHES, "armhf", "armv7", "i386"}:
        raise RepositoryError(f"{config_path}: arch {config['arch']!r}")
    if "image" in config and not IMAGE_NAME.match(config["image"]):
        raise RepositoryError(f"{config_path}: image {config['image']!r}")
    return config


@dataclass
class BuildPlan:
    """`docker buildx build` as the Supervisor runs it for one add-on and architecture."""

    folder: Path
    dockerfile: Path
    arch: str
    args: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def base(self) -> str | None:
        return self.args.get("BUILD_FROM")

    def command(self, tag: str) -> list[str]:
        cmd = ["docker", "buildx", "build", ".", "--tag", tag, "--file", self.dockerfile.name,
               "--platform", PLATFORMS[self.arch], "--pull"]
        for key, value in self.labels.items():
            cmd += ["--label", f"{key}={value}"]
        for key, value in self.args.items():
            cmd += ["--build-arg", f"{key}={value}"]
        return cmd


def build_plan(config_path: Path, arch: str) -> BuildPlan:
    config = addon(config_path)
    folder = config_path.parent
    if arch not in config["arch"]:
        raise RepositoryError(f"the add-on does not run on {arch}")
    build_files = [p for p in sorted(folder.glob("**/build.*")) if p.suffix in SUFFIXES]
    args = {"BUILD_VERSION": str(config["version"]), "BUILD_ARCH": arch}
    labels = {"io.hass.version": str(config["version"]), "io.hass.arch": arch, "io.hass.type": "app",
              "io.hass.name": config["name"].replace("'", ""),
              "io.hass.description": config["description"].replace("'", "")}
    if config.get("url"):
        labels["io.hass.url"] = config["url"]
    if build_files:
        build = read_file(build_files[0])
        base = build.get("build_from") or "ghcr.io/home-assistant/base:latest"
        if isinstance(base, dict):
            if arch not in base:
                raise RepositoryError(f"build.yaml names no base for {arch}")
            base = base[arch]
        if not IMAGE_NAME.match(base):
            raise RepositoryError(f"build_from {base!r} is not an image name")
        args["BUILD_FROM"] = base
        args.update({str(k): str(v) for k, v in (build.get("args") or {}).items()})
        labels.update({str(k): str(v) for k, v in (build.get("labels") or {}).items()})
    dockerfile = folder / f"Dockerfile.{arch}"
    if not dockerfile.is_file():
        dockerfile = folder / "Dockerfile"
    if not dockerfile.is_file():
        raise RepositoryError(f"{folder}: no Dockerfile")
    return BuildPlan(folder, dockerfile, arch, args, labels)
