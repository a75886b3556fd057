"""`coldrun build-java` builds every directory it is given, prints each failure with javac's whole error
block, and exits non-zero at the end if any failed (issue 25)."""

from __future__ import annotations

import shutil

from coldrun_helpers import coldrun
from real_parts import missing_real_part

GOOD = "class KrunEntry implements BaseKrunEntry {\n  public void run_iter(int n) { }\n}\n"
# Two errors: javac's whole block (both, with their source lines and carets) must be shown.
BAD = ("class KrunEntry implements BaseKrunEntry {\n  public void run_iter(int n) { undefinedOne(n); }\n"
       "  void other() { int x = \"two\"; }\n}\n")


def test_every_directory_is_built_and_every_failure_shown_whole(tmp_path):
    if shutil.which("javac") is None:
        missing_real_part("javac is not installed (apt-get install openjdk-17-jdk-headless)")
    dirs = []
    for name, source in (("a_bad", BAD), ("b_good", GOOD), ("c_bad", BAD), ("d_good", GOOD)):
        d = tmp_path / name / "java"
        d.mkdir(parents=True)
        (d / "KrunEntry.java").write_text(source)
        dirs.append(d)
    missing = tmp_path / "no_such_dir"
    res = coldrun("build-java", *map(str, dirs), str(missing))
    assert res.returncode != 0
    # the directories after a failing one are built all the same
    assert (dirs[1] / "KrunEntry.class").is_file() and (dirs[3] / "KrunEntry.class").is_file()
    assert not (dirs[0] / "KrunEntry.class").exists()
    for bad in (dirs[0], dirs[2]):
        assert f"{bad}: failed" in res.stdout
    # javac's whole block: both errors of each file, with the error count line
    assert res.stdout.count("cannot find symbol") == 2 and res.stdout.count("incompatible types") == 2
    assert res.stdout.count("2 errors") == 2
    assert f"{missing}: failed" in res.stdout and "is not a directory" in res.stdout
    assert "3 of 5 directories failed to build" in res.stderr
