"""The CI report formats beside ruff's: JUnit XML and GitLab Code Quality, through the real command line."""

import json
import subprocess
import sys
import textwrap
from xml.etree import ElementTree as ET

BAD = textwrap.dedent("""\
    import warp as wp
    wp.clear_kernel_cache()
    wp.clear_kernel_cache()
""")


def warplint(cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warplint", "--no-cache", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_junit_has_one_failing_case_per_finding(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text("import warp as wp\n")
    expected = json.loads(warplint(tmp_path, "--format", "json").stdout)
    result = warplint(tmp_path, "--format", "junit")
    assert result.returncode == 1 and result.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    suites = ET.fromstring(result.stdout.split("\n", 1)[1])
    assert suites.get("tests") == suites.get("failures") == str(len(expected)) == "2"
    (suite,) = suites.findall("testsuite")  # one per file with findings
    assert suite.get("name") == "bad.py" and suite.get("failures") == "2"
    cases = suite.findall("testcase")
    assert [(c.get("name"), c.get("line"), c.get("column")) for c in cases] == [
        (f"org.warplint.{f['code']}", str(f["line"]), str(f["column"])) for f in expected]
    assert [c.find("failure").get("message") for c in cases] == [f["message"] for f in expected]


def test_junit_of_a_clean_run_is_one_passing_case(tmp_path):
    (tmp_path / "good.py").write_text("import warp as wp\n")
    result = warplint(tmp_path, "--format", "junit")
    assert result.returncode == 0
    suites = ET.fromstring(result.stdout.split("\n", 1)[1])
    assert suites.get("failures") == "0" and len(suites.findall("testsuite/testcase")) == 1
    assert suites.find("testsuite/testcase/failure") is None


def test_gitlab_fingerprints_are_unique_and_survive_an_edit_above(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    first = json.loads(warplint(tmp_path, "--format", "gitlab").stdout)
    assert [i["check_name"] for i in first] == ["WC201", "WC201"]
    assert [i["location"]["positions"]["begin"]["line"] for i in first] == [2, 3]
    assert all(i["location"]["path"] == "bad.py" and i["severity"] in {"major", "minor"} for i in first)
    assert len({i["fingerprint"] for i in first}) == 2  # two equal findings in one file stay two issues
    (tmp_path / "bad.py").write_text("# a comment above\n" + BAD)
    moved = json.loads(warplint(tmp_path, "--format", "gitlab").stdout)
    assert [i["location"]["positions"]["begin"]["line"] for i in moved] == [3, 4]
    assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in first]


def test_junit_stays_well_formed_with_control_characters_in_a_message():
    import io

    from warplint.diagnostic import Diagnostic, Span
    from warplint.report import write_junit

    odd = Diagnostic("a\x01.py", Span(1, 0, 1, 3), "WC201", "kernel-cache-cleared", "CS-2",
                     "module `m\x00\x1b` \udcff", "high")
    out = io.StringIO()
    write_junit([odd], out)
    case = ET.fromstring(out.getvalue().split("\n", 1)[1]).find("testsuite/testcase/failure")
    assert case is not None and case.get("message") == "module `m\ufffd\ufffd` \ufffd"


def test_rule_url_is_absent_by_default_and_the_projects_template_when_set(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    assert {f["url"] for f in json.loads(warplint(tmp_path, "--format", "json").stdout)} == {None}
    sarif = json.loads(warplint(tmp_path, "--format", "sarif").stdout)
    assert not any("helpUri" in r for r in sarif["runs"][0]["tool"]["driver"]["rules"])
    (tmp_path / "pyproject.toml").write_text('[tool.warplint]\nrule-url = "https://docs.example.org/{code}-{name}"\n')
    assert {f["url"] for f in json.loads(warplint(tmp_path, "--format", "json").stdout)} == {
        "https://docs.example.org/WC201-kernel-cache-cleared"}
    sarif = json.loads(warplint(tmp_path, "--format", "sarif").stdout)
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["WC501"]["helpUri"] == "https://docs.example.org/WC501-force-load-all-modules"


def test_bad_rule_url_is_a_one_line_config_error(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    for bad in ('"docs/{code}.md"', '"https://example.org/rules"', "3"):
        (tmp_path / "pyproject.toml").write_text(f"[tool.warplint]\nrule-url = {bad}\n")
        result = warplint(tmp_path)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "rule-url" in result.stderr, bad
