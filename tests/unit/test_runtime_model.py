"""The run-time package's records and choices: what dataclasses and enum gave, without importing them."""

from __future__ import annotations

import copy
import json
import pickle
import sys

import pytest

from slimwheel.report import to_jsonable
from slimwheel.runtime import Candidate, Loaded, Policy, Rejection, Source
from slimwheel.runtime.manifest import Manifest, ManifestError, ManifestLibrary


def test_records_are_immutable_compared_hashed_and_replaced() -> None:
    loaded = Loaded("/site/nvidia/cu13/lib/libcudss.so.1", "libcudss.so.1", Source.WHEEL, version="1.0.0.35")
    same = Loaded("/site/nvidia/cu13/lib/libcudss.so.1", "libcudss.so.1", Source.WHEEL, version="1.0.0.35")
    assert loaded == same
    assert hash(loaded) == hash(same)
    assert len({loaded, same}) == 1
    with pytest.raises(AttributeError, match="immutable"):
        loaded.path = "/elsewhere"
    newer = loaded.replace(version="1.0.0.40")
    assert (newer.version, loaded.version) == ("1.0.0.40", "1.0.0.35")
    assert newer != loaded
    with pytest.raises(TypeError, match="no field"):
        loaded.replace(colour="red")
    if sys.version_info >= (3, 13):
        assert copy.replace(loaded, how=Source.SYSTEM).how is Source.SYSTEM  # type: ignore[attr-defined]
    assert "Loaded(" in repr(loaded)
    assert "version='1.0.0.35'" in repr(loaded)
    assert pickle.loads(pickle.dumps(loaded)) == loaded
    assert copy.deepcopy(loaded) == loaded
    assert pickle.loads(pickle.dumps(loaded)).how is Source.WHEEL
    # A record of another type with the same values is not equal.
    candidate = Candidate(loaded.path, loaded.soname, Source.WHEEL)
    assert candidate != loaded


def test_choices_are_their_values() -> None:
    assert Policy("wheel-first") is Policy.WHEEL_FIRST
    assert Policy(Policy.SYSTEM_FIRST) is Policy.SYSTEM_FIRST
    assert Source.WHEEL == "wheel"
    assert f"{Source.CONDA}" == "conda"
    assert Source.CUDA_HOME.value == "CUDA_HOME"
    assert Rejection.VERSION.name == "VERSION"
    assert repr(Policy.WHEEL_ONLY) == "<Policy.WHEEL_ONLY: 'wheel-only'>"
    assert Policy.members() == (Policy.WHEEL_FIRST, Policy.SYSTEM_FIRST, Policy.WHEEL_ONLY)
    assert pickle.loads(pickle.dumps(Source.OVERRIDE)) is Source.OVERRIDE
    assert json.dumps({"how": Source.WHEEL}) == '{"how": "wheel"}'
    with pytest.raises(ValueError, match="'wheel-last' is not a valid Policy"):
        Policy("wheel-last")


def test_manifest_round_trip_keeps_unknown_fields_and_reports_as_json() -> None:
    library = ManifestLibrary(
        name="cudss",
        soname="libcudss.so.1",
        distribution="nvidia-cudss-cu13",
        requirement="nvidia-cudss-cu13>=1.0.0.35,<2",
        folder="nvidia/cu13/lib",
        requires=("cublas",),
        min_version="1.0.0.35",
    )
    manifest = Manifest(cuda_major=13, libraries=(library,), generator="tests", extra={"future": [1]})
    again = Manifest.from_json(manifest.to_json())
    assert again == manifest
    assert again.extra == {"future": [1]}
    assert hash(again) == hash(manifest)  # extra is left out of comparison and hashing
    document = to_jsonable(manifest)
    assert list(document) == ["schema", "generator", "cuda_major", "libraries", "future"]
    assert list(document["libraries"][0])[:3] == ["name", "soname", "distribution"]
    for text in (b"[]", b"{", b'{"schema": 2}', b'{"schema": 1, "libraries": [{"name": "x"}]}'):
        with pytest.raises(ManifestError):
            Manifest.from_json(text)


def test_manifest_records_what_the_repair_counted_on_only_where_there_is_something() -> None:
    """Kept copies, libraries left to the host and preloaded distributions: written only when there
    are any, so that a manifest with none reads as before; an older writer's manifest has none."""
    plain = Manifest(cuda_major=12, libraries=(), generator="tests")
    assert list(plain.to_dict()) == ["schema", "generator", "cuda_major", "libraries"]
    counted = plain.replace(
        kept_copies=("pkg.libs/libcudart-1a2b3c4d.so.12",),
        unreplaced_copies=("pkg.libs/libcudart-5e6f7a8b.so.10.2",),
        left_to_host=("nvinfer",),
        preloaded=("torch",),
    )
    document = counted.to_dict()
    assert document["kept_copies"] == ["pkg.libs/libcudart-1a2b3c4d.so.12"]
    assert document["unreplaced_copies"] == ["pkg.libs/libcudart-5e6f7a8b.so.10.2"]
    assert (document["left_to_host"], document["preloaded"]) == (["nvinfer"], ["torch"])
    again = Manifest.from_json(counted.to_json())
    assert again == counted
    assert again.extra == {}
    assert again != plain  # what was counted on is compared
    old = Manifest.from_json(b'{"schema": 1, "cuda_major": 12, "libraries": []}')
    assert (old.kept_copies, old.unreplaced_copies, old.left_to_host, old.preloaded) == ((), (), (), ())
    for text in (b'{"schema": 1, "kept_copies": "a"}', b'{"schema": 1, "preloaded": [1]}'):
        with pytest.raises(ManifestError, match="not a list of strings"):
            Manifest.from_json(text)
