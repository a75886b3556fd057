"""Java variants take Krun's target forms (the class name, as Krun's ``EntryPoint("KrunEntry")``, or the
.class or .java file's name); a missing class names the command that compiles it, never a Makefile."""

from __future__ import annotations

import pytest

from supervisor.errors import ColdrunError
from supervisor.experiment.model import parse_experiment
from supervisor.launch.runner_command import benchmark_path, check_benchmark_file, java_class_file

EXPERIMENT = """
name = "j"
executions = 1
[benchmarks]
nbody = 10
[variants.default-java]
target = "{target}"
subdir = "java"
[vms.Hotspot]
runner = "java"
executable = "java"
iterations = 2
variants = ["default-java"]
"""


def experiment(target: str):
    return parse_experiment(EXPERIMENT.format(target=target).encode(), "exp.toml")


@pytest.mark.parametrize("target", ["KrunEntry", "KrunEntry.class", "KrunEntry.java"])
def test_every_krun_target_form_names_the_class_file(tmp_path, target):
    java = tmp_path / "benchmarks" / "nbody" / "java"
    java.mkdir(parents=True)
    (java / "KrunEntry.class").write_bytes(b"\xca\xfe\xba\xbe")
    exp = experiment(target)
    assert java_class_file(target) == "KrunEntry.class"
    assert check_benchmark_file(exp, tmp_path, "nbody", "Hotspot", "default-java", "exp.toml") == \
        java / "KrunEntry.class"
    # Other runners take the target as written.
    assert benchmark_path(exp, tmp_path, "nbody", "default-java", "python").name == target


def test_a_missing_class_with_sources_names_coldrun_build_java_not_make(tmp_path, monkeypatch):
    java = tmp_path / "benchmarks" / "nbody" / "java"
    java.mkdir(parents=True)
    (java / "KrunEntry.java").write_text("class KrunEntry implements BaseKrunEntry {}\n")
    (java / "nbody.java").write_text("class nbody {}\n")
    (tmp_path / "benchmarks" / "Makefile").write_text("all:\n\tmake -C c\n")    # builds no Java
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ColdrunError) as e:
        check_benchmark_file(experiment("KrunEntry"), tmp_path, "nbody", "Hotspot", "default-java", "exp.toml")
    assert str(e.value) == ("exp.toml: benchmarks.nbody (vm Hotspot, variant default-java): Java benchmark class "
                            "benchmarks/nbody/java/KrunEntry.class missing: compile the 2 .java files there "
                            "against coldrun's runner classes with `coldrun build-java benchmarks/nbody/java`")


def test_a_missing_class_without_sources_says_where_they_go(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ColdrunError) as e:
        check_benchmark_file(experiment("KrunEntry"), tmp_path, "nbody", "Hotspot", "default-java", "exp.toml")
    assert str(e.value).endswith("KrunEntry.class missing; no .java sources in benchmarks/nbody/java either: put "
                                 "the benchmark's sources there and compile them with `coldrun build-java "
                                 "benchmarks/nbody/java`")
