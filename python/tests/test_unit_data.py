"""kinetic.Data: discovery, substitution and the --data mounts (no binary needed)."""

import collections
import os

import pytest

from kinetic import Data, _data

Pair = collections.namedtuple("Pair", "train test")


@pytest.fixture
def dataset(project):
    d = project / "dataset"
    d.mkdir()
    (d / "train.csv").write_text("x,y\n1,2\n")
    (project / "config.json").write_text('{"lr": 0.1}')
    return d


def test_a_local_directory_mounts_read_only_and_becomes_a_relative_path(dataset):
    sub = _data.substitute((Data(str(dataset)),), {})
    assert sub.args == (".kinetic-data/0",)
    assert [m.flag() for m in sub.mounts] == [f"{dataset}:.kinetic-data/0:ro"]
    assert sub.entries == [{"at": ["args", 0], "path": ".kinetic-data/0"}]


def test_a_file_goes_through_the_content_addressed_cache(dataset, project, tmp_path):
    config = Data(str(project / "config.json"))
    sub = _data.substitute((), {"cfg": config})
    assert sub.kwargs == {"cfg": ".kinetic-data/0/config.json"}
    source = sub.mounts[0].source
    assert source.startswith(str(tmp_path / "cache" / "kinetic" / "data-files"))
    assert os.listdir(source) == ["config.json"]
    again = _data.substitute((Data("config.json"),), {})
    assert again.mounts[0].source == source  # same content: same directory, no second copy


def test_gcs_mounts_the_prefix():
    sub = _data.substitute((Data("gs://bucket/imagenet/"),), {})
    assert sub.mounts[0].flag() == "gs://bucket/imagenet:.kinetic-data/0"
    assert sub.args == (".kinetic-data/0",)


def test_nested_data_is_found_and_deduplicated_by_identity(dataset, project):
    shared = Data(str(dataset))
    other = Data(str(dataset))
    args = ([shared, {"a": other}], Pair(shared, 3))
    sub = _data.substitute(args, {"sets": (1, [shared])})
    assert len(sub.mounts) == 2
    assert sub.args[0] == [".kinetic-data/0", {"a": ".kinetic-data/1"}]
    assert sub.args[1] == Pair(".kinetic-data/0", 3) and isinstance(sub.args[1], Pair)
    assert sub.kwargs == {"sets": (1, [".kinetic-data/0"])}
    assert {"at": ["kwargs", "sets", 1, 0], "path": ".kinetic-data/0"} in sub.entries
    assert {"at": ["args", 0, 1, "a"], "path": ".kinetic-data/1"} in sub.entries


def test_data_in_keys_or_sets_is_refused(dataset):
    with pytest.raises(ValueError, match="dict key"):
        _data.substitute(({Data(str(dataset)): 1},), {})
    with pytest.raises(ValueError, match="set"):
        _data.substitute(({Data(str(dataset))},), {})


def test_arguments_without_data_are_untouched():
    marker = object()
    sub = _data.substitute((marker,), {"k": [1]})
    assert sub.args[0] is marker and sub.mounts == [] and sub.entries == []


def test_volumes_mount_at_their_absolute_paths(dataset):
    mounts = _data.volume_mounts({"/data": Data(str(dataset)), "/gcs": Data("gs://b/p")})
    assert [m.flag() for m in mounts] == [f"{dataset}:/data:ro", "gs://b/p:/gcs"]
    with pytest.raises(ValueError):
        _data.validate_volumes({"relative": Data(str(dataset))})
    with pytest.raises(TypeError):
        _data.validate_volumes({"/x": str(dataset)})


def test_data_errors_and_properties(dataset, project):
    with pytest.raises(FileNotFoundError):
        Data("missing-dir")
    with pytest.raises(ValueError, match="hf://"):
        Data("hf://org/set")
    with pytest.raises(ValueError):
        Data("")
    d = Data("dataset")
    assert d.path == str(dataset) and d.is_dir and not d.is_gcs and not d.is_hf
    assert d.content_hash().startswith("dir:") and d.content_hash() == Data("dataset").content_hash()
    assert Data("config.json").content_hash().startswith("file:")
    assert repr(Data("gs://b/x", fuse=True)) == "Data('gs://b/x', fuse=True)"
