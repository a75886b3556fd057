"""coldrun-analyze table / plot / diff (analysis.cli)."""

import bz2
import json
from pathlib import Path

import pytest

from analysis import cli, summary
from analysis.key_results import SummarySettings
from analysis.inputs import classify_document, machine_name

from shared_paths import GOLDEN as SHARED_GOLDEN
GOLDEN = SHARED_GOLDEN / "warmup_stats" / "corpus_500"
SUMMARY = str(GOLDEN / "summary.json")


@pytest.fixture(scope="module")
def annotated_file(tmp_path_factory) -> Path:
    with bz2.open(GOLDEN / "input.json.bz2") as fh:
        results = json.load(fh)
    results.update(json.loads((GOLDEN / "annotated.json").read_text()))
    # Keep the plot tests short: two benchmarks, three process executions each.
    keep = ("richards:Graal:default-java", "nsieve:Graal:default-java")
    for field, value in results.items():
        if isinstance(value, dict) and "richards:Graal:default-java" in value:
            results[field] = {k: v[:3] for k, v in value.items() if k in keep}
    path = tmp_path_factory.mktemp("cli") / "annotated.json.bz2"
    path.write_bytes(bz2.compress(json.dumps(results).encode()))
    return path


def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_detects_input_kinds():
    assert classify_document({"machines": {}}) == "summary"
    assert classify_document({"wallclock_times": {}}) == "raw"
    assert classify_document({"format": "coldrun-native", "jobs": []}) == "raw"
    assert classify_document({"wallclock_times": {}, "classifications": {}, "changepoints": {},
                              "changepoint_means": {}, "changepoint_vars": {}}) == "annotated"
    assert classify_document([1, 2]) is None
    assert machine_name({"audit": {"uname": "Linux oraclebox.example.org 4.9.0 #1 SMP"}}) == "oraclebox"
    assert machine_name({}) == "unknown"


@pytest.mark.parametrize("fmt,needle", [("text", "good inconsistent (4 flat, 4 warmup)"),
                                        ("latex", r"\begin{longtable}"),
                                        ("html", "<!DOCTYPE html>")])
def test_table_from_summary(fmt, needle, tmp_path, capsys):
    out = tmp_path / f"table.{fmt}"
    code, _, err = run(["table", SUMMARY, "--format", fmt, "-o", str(out)], capsys)
    assert code == 0, err
    text = out.read_text()
    assert needle in text
    for bench in ("binarytrees", "deltablue", "fasta", "json_parse", "nsieve", "richards"):
        assert (bench.replace("_", r"\_\allowbreak{}") if fmt == "latex" else bench) in text


def test_table_to_stdout(capsys):
    code, out, _ = run(["table", SUMMARY], capsys)
    assert code == 0 and "Machine: oraclebox" in out


def test_html_table_embeds_plots(annotated_file, tmp_path, capsys):
    out = tmp_path / "t.html"
    code, _, err = run(["table", SUMMARY, "--format", "html", "--plots-from", str(annotated_file),
                        "-o", str(out)], capsys)
    assert code == 0, err
    page = out.read_text()
    assert page.count("data:image/png;base64,") == 6  # 2 benchmarks x 3 executions
    assert "richards, Graal, oraclebox, Proc. exec. #3" in page
    assert "https://" not in page and "http://" not in page


def test_table_from_annotated_uses_analysis_summary(annotated_file, tmp_path, capsys, monkeypatch):
    """The CLI hands annotated results, read into typed annotations, to analysis.summary."""
    seen = {}
    real = summary.summarise_annotated

    def summarise_annotated(machines, settings, **options):
        (machine, annotated), = machines.items()
        seen.update(machine=machine, keys=sorted(annotated.annotations), settings=settings, options=options,
                    done=dict(annotated.summaries))
        return real(machines, settings, **options)

    monkeypatch.setattr(summary, "summarise_annotated", summarise_annotated)
    code, out, err = run(["table", str(annotated_file), "--seed", "7", "--quality", "low"], capsys)
    assert code == 0, err
    assert seen["machine"] == "oraclebox"
    assert seen["keys"] == ["nsieve:Graal:default-java", "richards:Graal:default-java"]
    assert seen["settings"] == SummarySettings(resamples=10000, seed=7, confidence="0.99")
    assert {k: seen["options"][k] for k in ("jobs", "progress")} == {"jobs": 1, "progress": False}
    assert seen["done"] == {}  # annotated input: nothing summarised in annotate's workers
    assert "richards" in out


def test_raw_results_go_through_the_real_pipeline(tmp_path, capsys):
    raw = str(GOLDEN / "input.json.bz2")
    code, out, err = run(["table", raw, "--quality", "low", "--seed", "1", "--delta", "0.001"], capsys)  # the paper's
    assert code == 0, err
    golden = json.loads(Path(SUMMARY).read_text())["machines"]["oraclebox"]["Graal"]
    for bench, d in golden.items():
        row = next(ln for ln in out.splitlines() if ln.startswith(bench + " "))
        assert d["classification"] in row
        if d["steady_state_iteration"] is not None:
            assert "%.1f (%.1f, %.1f)" % (d["steady_state_iteration"], *d["steady_state_iteration_iqr"]) in row
    code, _, err = run(["plot", raw, "-o", str(tmp_path), "--key", "fasta:Graal:default-java",
                        "--execution", "0"], capsys)
    assert code == 0, err
    assert (tmp_path / "fasta__Graal__default-java__0.png").stat().st_size > 1000
    # Classifier options reach the pipeline; its errors come back as one line.
    code, _, err = run(["table", raw, "--delta", "abc"], capsys)
    assert code == 2 and "delta" in err and len(err.strip().splitlines()) == 1


def test_through_coldrun_analyze_entry_point(capsys):
    from analysis import cli
    assert cli.main(["table", SUMMARY]) == 0
    assert "Machine: oraclebox" in capsys.readouterr().out
    assert cli.main(["table", SUMMARY, "-o", "/nonexistent/dir/t.txt"]) == 2
    assert "/nonexistent/dir/t.txt: cannot write" in capsys.readouterr().err


def test_plot_one_execution_and_all(annotated_file, tmp_path, capsys):
    out = tmp_path / "plots"
    code, _, err = run(["plot", str(annotated_file), "-o", str(out), "--key", "richards:Graal:default-java",
                        "--execution", "2"], capsys)
    assert code == 0, err
    assert [p.name for p in out.iterdir()] == ["richards__Graal__default-java__2.png"]
    code, _, err = run(["plot", str(annotated_file), "-o", str(out / "all"), "--image-format", "svg"], capsys)
    assert code == 0, err
    assert len(list((out / "all").glob("*.svg"))) == 6
    assert "Wrote 6 plot(s)" in err


def test_diff_writes_table_and_json(tmp_path, capsys):
    out, js = tmp_path / "diff.html", tmp_path / "diff.json"
    code, _, err = run(["diff", SUMMARY, SUMMARY, "--format", "html", "-o", str(out), "--json", str(js)], capsys)
    assert code == 0, err
    assert "<table>" in out.read_text()
    d = json.loads(js.read_text())
    assert set(d) == {"diff", "skipped", "before", "after", "classifier"}
    assert d["diff"]["Graal"]["richards"] == [0, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("argv,needle", [
    (["table", "/nonexistent/x.json"], "/nonexistent/x.json: no such file"),
    (["plot", SUMMARY, "-o", "/tmp/unused-plots"], "summary JSON, which has no per-iteration times"),
    (["diff", SUMMARY, "/nonexistent/after.json"], "/nonexistent/after.json: no such file"),
])
def test_errors_are_one_line(argv, needle, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_files_are_named(tmp_path, capsys, annotated_file):
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    code, _, err = run(["table", str(garbage)], capsys)
    assert code == 2 and f"{garbage}: not valid JSON" in err
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"machines": {"m": {"v": {"b": {"classification": "sideways"}}}}}))
    code, _, err = run(["table", str(odd)], capsys)
    assert code == 2 and f"{odd}: machines.m.v.b.classification" in err
    code, _, err = run(["plot", str(annotated_file), "-o", str(tmp_path / "p"), "--key", "no:such:key"], capsys)
    assert code == 2 and "no benchmark 'no:such:key'" in err
    code, _, err = run(["plot", str(annotated_file), "-o", str(tmp_path / "p"),
                        "--key", "richards:Graal:default-java", "--execution", "3"], capsys)
    assert code == 2 and "(--execution 0 to 2, titled #1 to #3)" in err
    code, _, err = run(["table", SUMMARY, SUMMARY], capsys)
    assert code == 2 and "give each benchmark once" in err
