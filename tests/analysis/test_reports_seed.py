"""One analysis, one set of numbers: the bootstrap is seeded by default, the
seed is recorded in the summary JSON and printed under every table, and the
text, HTML and LaTeX tables show the same digits."""

import json
import re

import numpy as np
import pytest

from analysis import bootstrap, cli

from shared_paths import GOLDEN

UNAME = "Linux seedbox 6.1.0 #1 SMP x86_64 GNU/Linux"
KEYS = ("nbody:PyPy:default-python", "richards:PyPy:default-python")


def _execution(rng, warm: int) -> list[float]:
    """60 iterations: `warm` slow ones, then a noisy steady state."""
    return [0.03] * warm + list(rng.normal(0.01, 0.0003, 60 - warm))


@pytest.fixture(scope="module")
def raw_file(tmp_path_factory):
    rng = np.random.default_rng(20261124)
    doc = {"wallclock_times": {key: [_execution(rng, warm) for warm in (0, 6, 8)] for key in KEYS},
           "audit": {"uname": UNAME}}
    path = tmp_path_factory.mktemp("seed") / "results.json"
    path.write_text(json.dumps(doc))
    return path


def run(argv, capsys) -> str:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def table(path, fmt, capsys, *extra) -> str:
    return run(["table", str(path), "--format", fmt, "--quality", "low", "--jobs", "1", "--no-plots",
                "--no-pilot", *extra], capsys)


# Per format: the row of a benchmark, then its numbers
# (steady iter (#) x3, steady iter (time) x3 and unit, steady perf, CI and unit).
NUM = r"(-?\d+(?:\.\d+)?)"
UNIT = r"(s|ms|µs|ns)"
ROW = {
    "text": lambda page, bench: next(line for line in page.splitlines() if line.startswith(bench + " ")),
    "html": lambda page, bench: re.sub(r"<svg.*?</svg>", "", re.search(
        r'<tr id="%s-PyPy">(.*?)</tr>' % bench, page).group(1)),
    "latex": lambda page, bench: re.sub(r"\\begin\{picture\}.*?\\end\{picture\}", "", next(
        line for line in page.splitlines() if line.startswith(bench + " &"))),
}
CELLS = {
    "text": [rf"{NUM} \({NUM}, {NUM}\)\s+{NUM} \({NUM}, {NUM}\) {UNIT}\s+{NUM} ± {NUM} {UNIT}"],
    "html": [rf"{NUM} <span class=\"range\">\({NUM}, {NUM}\)</span></td><td class=\"num\">{NUM} "
             rf"<span class=\"range\">\({NUM}, {NUM}\) {UNIT}</span></td><td class=\"num\">{NUM} ± {NUM} {UNIT}"],
    "latex": [rf"{NUM} {{\\scriptsize\({NUM}, {NUM}\)}} & {NUM} {{\\scriptsize\({NUM}, {NUM}\)}}~{UNIT} & "
              rf"\${NUM}\$ {{\\scriptsize\$\\pm {NUM}\$}}~{UNIT}"],
}
SEED = {"text": r"seed (\d+)\.", "html": r'<p class="bootstrap">[^<]*seed (\d+)\.</p>',
        "latex": r"\\footnotesize [^\n]*seed (\d+)\.}"}


def numbers(page: str, fmt: str) -> dict[str, tuple[str, ...]]:
    out = {}
    for key in KEYS:
        bench = key.split(":")[0]
        row = ROW[fmt](page, bench)
        match = re.search(CELLS[fmt][0], row)
        assert match, (fmt, row)
        out[bench] = match.groups()
    return out


def seed_shown(page: str, fmt: str) -> int:
    found = re.findall(SEED[fmt], page)
    assert len(found) == 1, (fmt, found)
    return int(found[0])


def test_every_format_shows_the_same_numbers_and_the_default_seed(raw_file, capsys):
    pages = {fmt: table(raw_file, fmt, capsys) for fmt in ("text", "html", "latex")}
    parsed = {fmt: numbers(page, fmt) for fmt, page in pages.items()}
    assert parsed["text"] == parsed["html"] == parsed["latex"]
    assert len(parsed["text"]) == 2 and all(len(v) == 10 for v in parsed["text"].values())
    for fmt, page in pages.items():
        assert seed_shown(page, fmt) == bootstrap.DEFAULT_SEED
        assert "10000 resamples" in page


def test_two_runs_agree_and_seed_changes_the_numbers(raw_file, tmp_path, capsys):
    first, second = table(raw_file, "text", capsys), table(raw_file, "text", capsys)
    assert first == second
    summaries = {}
    for seed in ("1", "2"):
        out = tmp_path / f"s{seed}.json"
        run(["summary", str(raw_file), "-o", str(out), "--quality", "low", "--jobs", "1", "--seed", seed], capsys)
        summaries[seed] = json.loads(out.read_text())
    perf = {seed: [s["machines"]["seedbox"]["PyPy"][k.split(":")[0]]["steady_state_time_ci"] for k in KEYS]
            for seed, s in summaries.items()}
    assert perf["1"] != perf["2"]
    assert seed_shown(table(raw_file, "text", capsys, "--seed", "2"), "text") == 2


def test_summary_records_the_seed_and_tables_from_it_repeat_it(raw_file, tmp_path, capsys):
    default, chosen = tmp_path / "default.json", tmp_path / "chosen.json"
    run(["summary", str(raw_file), "-o", str(default), "--quality", "low", "--jobs", "1"], capsys)
    run(["summary", str(raw_file), "-o", str(chosen), "--quality", "low", "--jobs", "1", "--seed", "7"], capsys)
    assert json.loads(default.read_text())["bootstrap"] == {
        "seed": bootstrap.DEFAULT_SEED, "resamples": bootstrap.RESAMPLES_LOW, "confidence": "0.99"}
    assert json.loads(chosen.read_text())["bootstrap"]["seed"] == 7
    from_raw = table(raw_file, "html", capsys, "--seed", "7")
    from_summary = table(chosen, "html", capsys)
    assert numbers(from_raw, "html") == numbers(from_summary, "html")
    assert seed_shown(from_summary, "html") == 7


def test_tables_say_when_no_seed_was_recorded_or_inputs_differ(tmp_path, capsys):
    golden = GOLDEN / "warmup_stats" / "corpus_500" / "summary.json"
    page = run(["table", str(golden)], capsys)
    lines = page.rstrip().splitlines()
    assert lines[-3].endswith("settings not recorded (e.g. a warmup_stats summary).")
    assert lines[-1] == "Classes: equivalence rule not recorded (input was a summary)."
    doc = json.loads(golden.read_text())
    machine = next(iter(doc["machines"]))
    vm = next(iter(doc["machines"][machine]))
    benches = sorted(doc["machines"][machine][vm])
    halves = []
    for i, (names, seed) in enumerate(((benches[:2], 3), (benches[2:4], 4))):
        part = {"warmup_format_version": "2", "bootstrap": {"seed": seed, "resamples": 100, "confidence": "0.99"},
                "machines": {machine: {vm: {b: doc["machines"][machine][vm][b] for b in names}}}}
        halves.append(tmp_path / f"part{i}.json")
        halves[-1].write_text(json.dumps(part))
    page = run(["table", *map(str, halves), "--format", "latex"], capsys)
    assert "100 resamples, seed 3; 99\\% interval, 100 resamples, seed 4." in page


def test_bad_bootstrap_record_is_one_line_naming_the_field(tmp_path, capsys):
    golden = json.loads((GOLDEN / "warmup_stats" / "corpus_500" / "summary.json").read_text())
    golden["bootstrap"] = {"seed": "one"}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(golden))
    assert cli.main(["table", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bootstrap.seed: expected a whole number" in err and str(path) in err
