"""build-runners' include directories on OpenBSD's packages: the JDK's jni_md.h in include/openbsd
(OpenBSD's jdk package layout, as include/linux on Debian) and node_api.h under /usr/local/include/node."""

from __future__ import annotations

from pathlib import Path

from iteration_runners import languages


def test_jni_glue_includes_the_os_directory_holding_jni_md_h(tmp_path, monkeypatch):
    jdk = tmp_path / "jdk-17"
    (jdk / "include/openbsd").mkdir(parents=True)
    (jdk / "include/jni.h").write_text("")
    (jdk / "include/openbsd/jni_md.h").write_text("")
    monkeypatch.setenv("JAVA_HOME", str(jdk))
    seen: dict[str, list[Path]] = {}
    monkeypatch.setattr(languages, "build_java_classes", lambda: tmp_path / "classes")
    monkeypatch.setattr(languages, "_javac", lambda *a, **k: tmp_path / "probe")
    monkeypatch.setattr(languages, "_build_shared_object",
                        lambda art, dirs: seen.setdefault("dirs", dirs) and tmp_path / "glue.so")
    languages.build_java()
    assert seen["dirs"][1:] == [jdk / "include", jdk / "include/openbsd"]
