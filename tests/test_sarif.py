"""CI outputs: SARIF 2.1.0 for GitHub code scanning, and GitHub Actions annotations.

The SARIF check is written by hand from the OASIS SARIF 2.1.0 schema
(sarif-schema-2.1.0.json): required properties, enums, minimums and, since the schema
sets ``additionalProperties: false`` on these objects, the allowed property names of
every object warplint emits. GitHub's own requirements on top (rules with name,
shortDescription and helpUri; results with ruleId and level; repo-relative locations)
are checked as well.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from warplint.report import rule_url

BAD = "import warp as wp\n\nwp.force_load()\ntry:\n    wp.load_module('x')\nexcept RuntimeError:\n    pass\n"

# ---------------------------------------------------------------------- SARIF 2.1.0, by hand from the schema
ALLOWED = {
    "sarifLog": {"$schema", "version", "runs", "inlineExternalProperties", "properties"},
    "run": {
        "tool", "invocations", "conversion", "language", "versionControlProvenance", "originalUriBaseIds",
        "artifacts", "logicalLocations", "graphs", "results", "automationDetails", "runAggregates",
        "baselineGuid", "redactionTokens", "defaultEncoding", "defaultSourceLanguage", "newlineSequences",
        "columnKind", "externalPropertyFileReferences", "threadFlowLocations", "taxonomies", "addresses",
        "translations", "policies", "webRequests", "webResponses", "specialLocations", "properties",
    },
    "tool": {"driver", "extensions", "properties"},
    "toolComponent": {
        "guid", "name", "organization", "product", "productSuite", "shortDescription", "fullDescription",
        "fullName", "version", "semanticVersion", "dottedQuadFileVersion", "releaseDateUtc", "downloadUri",
        "informationUri", "globalMessageStrings", "notifications", "rules", "taxa", "locations", "language",
        "contents", "isComprehensive", "localizedDataSemanticVersion",
        "minimumRequiredLocalizedDataSemanticVersion", "associatedComponent", "translationMetadata",
        "supportedTaxonomies", "properties",
    },
    "reportingDescriptor": {
        "id", "deprecatedIds", "guid", "deprecatedGuids", "name", "deprecatedNames", "shortDescription",
        "fullDescription", "messageStrings", "defaultConfiguration", "helpUri", "help", "relationships",
        "properties",
    },
    "reportingConfiguration": {"enabled", "level", "rank", "parameters", "properties"},
    "multiformatMessageString": {"text", "markdown", "properties"},
    "message": {"text", "markdown", "id", "arguments", "properties"},
    "result": {
        "ruleId", "ruleIndex", "rule", "kind", "level", "message", "analysisTarget", "locations", "guid",
        "correlationGuid", "occurrenceCount", "partialFingerprints", "fingerprints", "stacks", "codeFlows",
        "graphs", "graphTraversals", "relatedLocations", "suppressions", "baselineState", "rank", "attachments",
        "hostedViewerUri", "workItemUris", "provenance", "fixes", "taxa", "webRequest", "webResponse",
        "properties",
    },
    "location": {"id", "physicalLocation", "logicalLocations", "message", "annotations", "relationships", "properties"},
    "physicalLocation": {"address", "artifactLocation", "region", "contextRegion", "properties"},
    "artifactLocation": {"uri", "uriBaseId", "index", "description", "properties"},
    "region": {
        "startLine", "startColumn", "endLine", "endColumn", "charOffset", "charLength", "byteOffset",
        "byteLength", "snippet", "message", "sourceLanguage", "properties",
    },
}
LEVELS = {"none", "note", "warning", "error"}
URI_REFERENCE = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")  # RFC 3986 characters only


def check_object(obj, kind: str, where: str, required=()) -> None:
    assert isinstance(obj, dict), f"{where}: {kind} must be an object"
    extra = set(obj) - ALLOWED[kind]
    assert not extra, f"{where}: {kind} has properties the schema does not allow: {sorted(extra)}"
    for key in required:
        assert key in obj, f"{where}: {kind} requires '{key}'"
    if "properties" in obj:
        assert isinstance(obj["properties"], dict), f"{where}.properties must be a property bag"
        tags = obj["properties"].get("tags", [])
        assert isinstance(tags, list) and len(set(tags)) == len(tags) and all(isinstance(t, str) for t in tags)


def check_mfms(obj, where: str) -> None:
    check_object(obj, "multiformatMessageString", where, ("text",))
    assert isinstance(obj["text"], str)


def check_artifact_location(obj, where: str) -> None:
    check_object(obj, "artifactLocation", where)
    if "uri" in obj:
        assert isinstance(obj["uri"], str) and URI_REFERENCE.match(obj["uri"]), f"{where}.uri is not a URI reference"
    if "index" in obj:
        assert isinstance(obj["index"], int) and obj["index"] >= -1


def check_sarif_2_1_0(doc: dict) -> None:
    check_object(doc, "sarifLog", "$", ("version", "runs"))
    assert doc["version"] == "2.1.0"
    assert isinstance(doc["runs"], list)
    for r, run in enumerate(doc["runs"]):
        w = f"runs[{r}]"
        check_object(run, "run", w, ("tool",))
        check_object(run["tool"], "tool", f"{w}.tool", ("driver",))
        driver = run["tool"]["driver"]
        check_object(driver, "toolComponent", f"{w}.tool.driver", ("name",))
        assert isinstance(driver["name"], str)
        rules = driver.get("rules", [])
        ids = [rule["id"] for rule in rules]
        assert len(ids) == len(set(ids)), "rule ids must be unique"
        for i, rule in enumerate(rules):
            rw = f"{w}.tool.driver.rules[{i}]"
            check_object(rule, "reportingDescriptor", rw, ("id",))
            for key in ("shortDescription", "fullDescription", "help"):
                if key in rule:
                    check_mfms(rule[key], f"{rw}.{key}")
            if "defaultConfiguration" in rule:
                config = rule["defaultConfiguration"]
                check_object(config, "reportingConfiguration", f"{rw}.defaultConfiguration")
                assert config.get("level", "warning") in LEVELS
                assert isinstance(config.get("enabled", True), bool)
            if "helpUri" in rule:
                assert urlparse(rule["helpUri"]).scheme in ("http", "https")
        if "columnKind" in run:
            assert run["columnKind"] in ("utf16CodeUnits", "unicodeCodePoints")
        for name, base in run.get("originalUriBaseIds", {}).items():
            check_artifact_location(base, f"{w}.originalUriBaseIds.{name}")
            # §3.14.14: an absolute URI ending with a slash
            assert urlparse(base["uri"]).scheme == "file" and base["uri"].endswith("/")
        for i, result in enumerate(run.get("results", [])):
            xw = f"{w}.results[{i}]"
            check_object(result, "result", xw, ("message",))
            check_object(result["message"], "message", f"{xw}.message")
            assert "text" in result["message"] or "id" in result["message"]
            assert result.get("level", "warning") in LEVELS
            if "ruleIndex" in result:
                assert isinstance(result["ruleIndex"], int) and result["ruleIndex"] >= -1
                assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
            for j, location in enumerate(result.get("locations", [])):
                lw = f"{xw}.locations[{j}]"
                check_object(location, "location", lw)
                physical = location["physicalLocation"]
                check_object(physical, "physicalLocation", f"{lw}.physicalLocation")
                assert "address" in physical or "artifactLocation" in physical
                check_artifact_location(physical["artifactLocation"], f"{lw}.physicalLocation.artifactLocation")
                region = physical.get("region", {})
                check_object(region, "region", f"{lw}.physicalLocation.region")
                for key in ("startLine", "startColumn", "endLine", "endColumn"):
                    if key in region:
                        assert isinstance(region[key], int) and region[key] >= 1, f"{lw} {key}"
                if "endLine" in region:
                    assert region["endLine"] >= region["startLine"]


def check_github_code_scanning(doc: dict, url_template: str | None = None) -> None:
    """What GitHub code scanning needs beyond the schema."""
    (run,) = doc["runs"]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    for rule in rules.values():
        assert rule["name"] and rule["shortDescription"]["text"]
        assert rule.get("helpUri") == rule_url(rule["id"], url_template)
    for result in run["results"]:
        assert result["ruleId"] in rules and result["level"] in LEVELS
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert not artifact["uri"].startswith(("/", "file:", "../")), "locations must be relative to the repo root"


# ---------------------------------------------------------------------- the documents
def warplint(cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warplint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def monorepo(tmp_path):
    """A git work tree whose Python project (and pyproject.toml) lives in a subdirectory."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    project = tmp_path / "services" / "sim"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.warplint]\n")
    (project / "src" / "bad.py").write_text(BAD)
    (project / "src" / "odd name,1.py").write_text("import warp as wp\nwp.force_load()\n")
    return tmp_path, project


def test_sarif_is_valid_2_1_0_and_repo_relative(monorepo):
    repo, project = monorepo
    result = warplint(project, "--format", "sarif", "src")
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    check_sarif_2_1_0(doc)
    check_github_code_scanning(doc)
    (run,) = doc["runs"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.as_uri() + "/"
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert ids == sorted(ids) and {"WC000", "WC501", "WC502", "WC901"} <= set(ids)  # every rule, runtime ones too
    assert all(re.fullmatch(r"WC\d{3}", i) for i in ids)
    found = [
        (
            r["ruleId"], r["level"], unquote(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]),
            r["locations"][0]["physicalLocation"]["region"],
        )
        for r in run["results"]
    ]
    assert found == [
        ("WC501", "warning", "services/sim/src/bad.py",
         {"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 16}),
        ("WC502", "warning", "services/sim/src/bad.py",
         {"startLine": 5, "startColumn": 5, "endLine": 5, "endColumn": 24}),
        ("WC501", "warning", "services/sim/src/odd name,1.py",
         {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 16}),
    ]
    # percent-encoded in the document, resolving to the real file
    uri = run["results"][2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "services/sim/src/odd%20name%2C1.py"
    assert (repo / unquote(uri)).is_file()
    # the same findings the JSON output has
    as_json = json.loads(warplint(project, "--format", "json", "src").stdout)
    assert [(r["ruleId"], r["message"]["text"]) for r in run["results"]] == [(j["code"], j["message"]) for j in as_json]


def test_sarif_outside_a_git_repo_is_relative_to_the_config_root(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(BAD)
    doc = json.loads(warplint(tmp_path / "pkg", "--format", "sarif", ".").stdout)
    check_sarif_2_1_0(doc)
    check_github_code_scanning(doc)
    (run,) = doc["runs"]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]} == {"pkg/bad.py"}


def test_sarif_without_findings_is_valid(tmp_path):
    (tmp_path / "ok.py").write_text("import warp as wp\n")
    result = warplint(tmp_path, "--format", "sarif", "ok.py")
    assert result.returncode == 0
    doc = json.loads(result.stdout)
    check_sarif_2_1_0(doc)
    assert doc["runs"][0]["results"] == []


def test_the_checker_rejects_broken_documents(monorepo):
    """The hand-written schema check can fail."""
    _, project = monorepo
    good = json.loads(warplint(project, "--format", "sarif", "src").stdout)
    breakages = [
        lambda d: d.pop("version"),
        lambda d: d["runs"][0]["tool"]["driver"].pop("name"),
        lambda d: d["runs"][0]["results"][0].pop("message"),
        lambda d: d["runs"][0]["results"][0].__setitem__("level", "warn"),
        lambda d: d["runs"][0]["results"][0].__setitem__("severity", "high"),
        lambda d: d["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"].__setitem__(
            "startColumn", 0),
        lambda d: d["runs"][0]["tool"]["driver"]["rules"][1].pop("id"),
    ]
    for breakage in breakages:
        doc = json.loads(json.dumps(good))
        breakage(doc)
        with pytest.raises((AssertionError, KeyError)):
            check_sarif_2_1_0(doc)
    doc = json.loads(json.dumps(good))
    doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "/abs/bad.py"
    with pytest.raises(AssertionError):
        check_github_code_scanning(doc)


def test_github_annotations_exact_lines(monorepo):
    _, project = monorepo
    result = warplint(project, "--format", "github", "src")
    assert result.returncode == 1
    m501 = "`force_load()` without `modules=` builds every registered module; pass the ones you launch"
    m502 = "the `load_module()` error is caught and dropped; log or re-raise it"
    assert result.stdout.splitlines() == [
        "::warning file=services/sim/src/bad.py,line=3,col=1,endLine=3,endColumn=16,"
        f"title=WC501 force-load-all-modules::{m501}",
        "::warning file=services/sim/src/bad.py,line=5,col=5,endLine=5,endColumn=24,"
        f"title=WC502 swallowed-load-error::{m502}",
        "::warning file=services/sim/src/odd name%2C1.py,line=2,col=1,endLine=2,endColumn=16,"
        f"title=WC501 force-load-all-modules::{m501}",
    ]


def test_ci_doc_workflow_uses_real_options():
    """Every `warplint ...` command in docs/ci.md parses with the real CLI parser."""
    from warplint.cli import check_parser

    text = (Path(__file__).resolve().parents[1] / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "github/codeql-action/upload-sarif" in text and "security-events: write" in text
    commands = re.findall(r"^\s*(?:- )?run: (warplint .*)$", text, re.M)
    assert any("--format sarif" in c for c in commands) and any("--format github" in c for c in commands)
    for command in commands:
        check_parser().parse_args(shlex.split(command)[1:])
